"""Gradient clipping under pipeline parallelism: each stage holds its own layers, so
clip_grad_norm_ on a stage sees only its part of the norm. Two processes (gloo, CPU, loopback),
one stage each, against the same model in one process."""

import datetime
import gc
import math
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_, clip_grads_with_norm_, get_total_norm

MAX_NORM = 0.5


def make_model():
    torch.manual_seed(0)  # the same weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))


def pipeline_step(rank, stage, x):
    """Forward and backward of one batch through two stages: rank 0 holds the first, rank 1 the second."""
    if rank == 0:
        h = stage(x)
        dist.send(h.detach(), dst=1)
        grad_h = torch.empty_like(h)
        dist.recv(grad_h, src=1)  # the gradient of the loss w.r.t. this stage's output
        h.backward(grad_h)
    else:
        h = torch.empty(x.shape[0], 8)
        dist.recv(h, src=0)
        h.requires_grad_(True)
        stage(h).pow(2).mean().backward()
        dist.send(h.grad, dst=0)


def global_norm(stage, norm_type):
    """This stage's norm, combined with the other stages': sum of p-th powers, or max for inf."""
    local = get_total_norm([p.grad for p in stage.parameters()], norm_type)
    if math.isinf(norm_type):
        dist.all_reduce(local, op=dist.ReduceOp.MAX)
        return local
    total = local ** norm_type
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total ** (1.0 / norm_type)


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))  # one batch, every rank
    rows = {}

    # reference: the whole model in one process
    full = make_model()
    full(x).pow(2).mean().backward()
    full_inf = get_total_norm([p.grad for p in full.parameters()], math.inf).item()
    full_norm = clip_grad_norm_(full.parameters(), MAX_NORM).item()  # clips full's grads
    rows["one process: clip_grad_norm_ of the whole model"] = full_norm
    rows["one process: inf-norm of the whole model"] = full_inf
    layers = [0, 1, 2] if rank == 0 else [3, 4]  # stage 0: Linear, Tanh, Linear; stage 1: the rest
    full_stage = [full[i] for i in layers]

    def clipped_grads_match(stage):
        mine = [p.grad for p in stage.parameters()]
        ref = [p.grad for m in full_stage for p in m.parameters()]
        return all(torch.allclose(a, b, atol=1e-6) for a, b in zip(mine, ref))

    # 1. each stage calls clip_grad_norm_ on its own parameters
    stage = nn.Sequential(*[make_model()[i] for i in layers])
    pipeline_step(rank, stage, x)
    rows["each stage alone: clip_grad_norm_"] = clip_grad_norm_(stage.parameters(), MAX_NORM).item()
    rows["each stage alone: clipped grads == one process's"] = clipped_grads_match(stage)

    # 2. one global norm, one clip coefficient on every stage
    stage = nn.Sequential(*[make_model()[i] for i in layers])
    pipeline_step(rank, stage, x)
    rows["global: inf-norm (max over stages)"] = global_norm(stage, math.inf).item()
    total = global_norm(stage, 2.0)
    rows["global: sqrt(sum over stages of squared norms)"] = total.item()
    clip_grads_with_norm_(stage.parameters(), MAX_NORM, total)  # the same total on every stage
    rows["global: clipped grads == one process's"] = clipped_grads_match(stage)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if len(set(values)) == 1:
                value = f"{values[0]:.6f}" if isinstance(values[0], float) else values[0]
                print(f"{key}: {value}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(
                    f"rank {r} {v:.6f}" if isinstance(v, float) else f"rank {r} {v}"
                    for r, v in enumerate(values)))
    gc.collect()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
