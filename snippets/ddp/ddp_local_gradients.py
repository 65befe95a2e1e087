"""What DDP averages and what it does not: autograd.grad, a post-accumulate-grad hook, and
backward(inputs=...), on two processes (gloo, CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    model = DDP(make_model())
    first = model.module[0].weight
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    rows = {}

    # 1. backward(): DDP averages every parameter's .grad across the ranks
    model(batch).pow(2).mean().backward()
    rows["backward(): weight.grad"] = first.grad.norm().item()
    model.zero_grad(set_to_none=True)

    # 2. autograd.grad: this rank's gradient, not averaged; average it yourself
    (grad,) = torch.autograd.grad(model(batch).pow(2).mean(), first)
    rows["autograd.grad: returned"] = grad.norm().item()
    dist.all_reduce(grad)
    rows["autograd.grad: all_reduce / world size"] = (grad / world_size).norm().item()

    # 3. a post-accumulate-grad hook runs before DDP writes the average into .grad
    seen = {}
    handle = first.register_post_accumulate_grad_hook(
        lambda p: seen.update(norm=p.grad.norm().item()))
    model(batch).pow(2).mean().backward()
    handle.remove()
    rows["post-accumulate hook: p.grad"] = seen["norm"]
    rows["post-accumulate hook: .grad after backward"] = first.grad.norm().item()
    model.zero_grad(set_to_none=True)

    # ... so an optimizer step taken in the hook uses the local gradient: replicas drift apart
    def sgd_step(param):
        with torch.no_grad():
            param.add_(param.grad, alpha=-0.1)
    handles = [p.register_post_accumulate_grad_hook(sgd_step) for p in model.parameters()]
    model(batch).pow(2).mean().backward()
    for handle in handles:
        handle.remove()
    rows["step in the hook: weight sum after"] = first.sum().item()

    # 4. backward(inputs=...): local gradients, then an error on the next step
    model = DDP(make_model())
    for step in (1, 2):
        try:
            model(batch).pow(2).mean().backward(inputs=[model.module[2].weight])
            rows[f"backward(inputs=head) step {step}: head grad"] = \
                model.module[2].weight.grad.norm().item()
        except RuntimeError as err:
            rows[f"backward(inputs=head) step {step}: RuntimeError"] = str(err).split(". ")[0]

    # the fix: freeze the rest before wrapping; DDP then reduces only what requires grad
    frozen = make_model()
    frozen[0].requires_grad_(False)
    model = DDP(frozen)
    for step in (1, 2):
        model.zero_grad(set_to_none=True)
        model(batch).pow(2).mean().backward()
        rows[f"frozen backbone step {step}: head grad"] = model.module[2].weight.grad.norm().item()

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if isinstance(values[0], float):
                print(f"{key}: " + " | ".join(f"rank {r} {v:.4f}" for r, v in enumerate(values)))
            else:
                print(f"{key}: {values[0]}")  # the same message on every rank
    # free the model (and any earlier one still waiting in a reference cycle) while the group
    # exists: a DDP reducer freed after destroy_process_group() can hang (pytorch#56297)
    del model
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
