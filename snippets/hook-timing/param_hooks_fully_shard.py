"""FSDP2's fully_shard puts new Parameter objects on the module: which parameter hooks still fire,
registered before or after sharding. Two processes (gloo, CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys

import torch
import torch._dynamo  # fully_shard() imports it on first use: import it once, before forking
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)  # the same weights on every rank
    model = nn.Linear(2, 2)
    calls = []

    def register(param, when):
        param.register_hook(lambda grad: calls.append(f"register_hook ({when})"))
        param.register_post_accumulate_grad_hook(
            lambda p: calls.append(f"post-accumulate ({when})"))

    before = model.weight
    register(before, "before")
    fully_shard(model, mesh=mesh)
    after = model.weight
    register(after, "after")
    model(torch.full((1, 2), rank + 1.0)).sum().backward()  # each rank its own data
    rows = {
        "same Parameter object after fully_shard": str(after is before),
        "new weight: a Parameter, a DTensor": (
            f"{isinstance(after, nn.Parameter)}, {isinstance(after, DTensor)}"),
        "type of its .grad": type(after.grad).__name__,
        "hooks that fired": ", ".join(calls),
    }

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            print(f"{key}: " + " | ".join(f"rank {r} {g[key]}" for r, g in enumerate(gathered)))
    # free the model while the group exists, as the DDP scripts do (pytorch#56297)
    del model, before, after
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
