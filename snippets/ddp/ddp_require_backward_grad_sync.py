"""Gradient accumulation under DDP with require_backward_grad_sync (build-nanogpt's loop):
DDP's default reducer reads the flag in forward, so setting it just before backward() is too late. Two processes
(gloo, CPU, loopback), each with its own data."""

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

ACCUM_STEPS = 3


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data: 3 micro-batches of 2
    micro = torch.randn(ACCUM_STEPS, 2, 4)
    rows = {}

    def micro_loss(model, x):
        return model(x).pow(2).mean() / ACCUM_STEPS  # scaled: the sum is the mean over all

    def weight_grad(model):
        return model.module[0].weight.grad.clone()

    results = {}
    for loop in ["flag set before backward()", "flag set before forward", "no_sync()"]:
        model = DDP(make_model())
        for step in (1, 2):  # two steps: the flag left over from step 1 matters in step 2
            model.zero_grad(set_to_none=True)
            for i in range(ACCUM_STEPS):
                last = i == ACCUM_STEPS - 1
                if loop == "flag set before backward()":  # build-nanogpt before the fix
                    loss = micro_loss(model, micro[i])
                    model.require_backward_grad_sync = last
                    loss.backward()
                elif loop == "flag set before forward":  # the fix
                    model.require_backward_grad_sync = last
                    micro_loss(model, micro[i]).backward()
                elif last:
                    micro_loss(model, micro[i]).backward()
                else:
                    with model.no_sync():  # forward and backward inside
                        micro_loss(model, micro[i]).backward()
                if step == 2:
                    # equal on both ranks only if this backward all-reduced the accumulated grad
                    grads = [torch.empty(8, 4) for _ in range(world_size)]
                    dist.all_gather(grads, weight_grad(model))
                    rows[f"{loop}, step 2, micro-step {i}: grad equal across ranks"] = \
                        torch.equal(grads[0], grads[1])
        results[loop] = weight_grad(model)
        torch.optim.SGD(model.parameters(), lr=0.1).step()  # each rank applies its own .grad
        weights = [torch.empty(8, 4) for _ in range(world_size)]
        dist.all_gather(weights, model.module[0].weight.detach().clone())
        rows[f"{loop}, after optimizer.step(): weights equal across ranks"] = \
            torch.equal(weights[0], weights[1])
        del model
        gc.collect()

    # reference: one plain model on every rank's micro-batches at once (mean over all examples)
    everyone = [torch.empty_like(micro) for _ in range(world_size)]
    dist.all_gather(everyone, micro)
    plain = make_model()
    plain(torch.cat(everyone).reshape(-1, 4)).pow(2).mean().backward()
    for loop, grad in results.items():
        rows[f"{loop}: grad == plain model on all ranks' data"] = torch.allclose(
            grad, plain[0].weight.grad, atol=1e-6)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if len(set(values)) == 1:
                print(f"{key}: {values[0]}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    # free every DDP model (one may wait in a reference cycle) while the group exists:
    # a DDP reducer freed after destroy_process_group() can hang (pytorch#56297)
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
