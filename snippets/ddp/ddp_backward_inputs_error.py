"""The whole error that a step of backward(inputs=...) leaves for the next step under DDP, and what
find_unused_parameters=True and static_graph=True do there, on two processes (gloo, CPU, loopback)."""

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
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    model(batch).pow(2).mean().backward(inputs=[model.module[2].weight])  # step 1: the head only
    try:
        model(batch)  # step 2
        message = "no error"
    except RuntimeError as err:
        message = "\n".join(line.rstrip() for line in str(err).splitlines())  # every line
    gathered = [None] * world_size
    dist.all_gather_object(gathered, message)
    if rank == 0:
        print("RuntimeError:", gathered[0])
        print("rank 1, the same message naming rank 1:",
              gathered[1] == gathered[0].replace("rank 0", "rank 1"))

    # the two DDP options for parameters that get no gradient, on the same two steps
    for option in ("find_unused_parameters", "static_graph"):
        del model
        gc.collect()
        model = DDP(make_model(), **{option: True})
        for step in (1, 2):
            model.zero_grad(set_to_none=True)
            try:
                model(batch).pow(2).mean().backward(inputs=[model.module[2].weight])
                result = f"{model.module[2].weight.grad.norm().item():.4f}"
            except RuntimeError as err:
                result = "RuntimeError: " + str(err).split(". ")[0]
            dist.all_gather_object(gathered, result)
            if rank == 0:
                if gathered[0].startswith("RuntimeError"):
                    print(f"{option}=True, step {step}: {gathered[0]}")  # the same on both ranks
                else:
                    print(f"{option}=True, step {step}: head grad "
                          + " | ".join(f"rank {r} {v}" for r, v in enumerate(gathered)))
    # free the model while the group exists: a DDP reducer freed after destroy_process_group()
    # can hang (pytorch#56297)
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
