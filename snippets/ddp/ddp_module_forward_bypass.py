"""A forward pass through `ddp.module` instead of `ddp`: backward() averages nothing and raises
nothing, and the replicas drift apart after one optimizer step. Two processes (gloo, CPU,
loopback)."""

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
    torch.manual_seed(0)  # the same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def same_on_every_rank(tensor):
    """True where every rank holds the same values (the check to run in your own loop)."""
    gathered = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor.detach().contiguous())
    return all(torch.equal(gathered[0], other) for other in gathered[1:])


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    rows = {}
    for name, call in [("ddp(batch)", lambda ddp: ddp(batch)),
                       ("ddp.module(batch)", lambda ddp: ddp.module(batch))]:
        ddp = DDP(make_model())
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
        call(ddp).pow(2).mean().backward()  # no error either way
        first = ddp.module[0].weight
        rows[f"{name}: weight.grad norm"] = f"{first.grad.norm().item():.4f}"
        rows[f"{name}: .grad the same on every rank"] = str(same_on_every_rank(first.grad))
        optimizer.step()
        rows[f"{name}: weights the same after one step"] = str(same_on_every_rank(first))

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if len(set(values)) == 1:
                print(f"{key}: {values[0]} (both ranks)")
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    del ddp, optimizer
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
