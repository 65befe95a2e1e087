"""A post-accumulate-grad hook under DDP sees this rank's gradient, before the all-reduce: an
optimizer step there trains the replicas apart. Two processes (gloo, CPU, loopback)."""

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
    model = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)  # the same weights on every rank
    return DDP(model)


def values(t):
    return [round(v, 4) for v in t.flatten().tolist()]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    x = torch.full((1, 2), rank + 1.0)  # each rank its own data: local gradient = x
    rows = {}

    # 1. what the hook sees, and what .grad holds once backward() returns
    model = make_model()
    weight = model.module.weight
    seen = []
    weight.register_post_accumulate_grad_hook(lambda p: seen.append(values(p.grad)))
    model(x).sum().backward()
    rows["p.grad in the post-accumulate hook"] = seen[0]
    rows["weight.grad after backward()"] = values(weight.grad)

    # 2. one SGD step, taken inside the hook or after backward() returns
    for where in ("in the hook", "after backward()"):
        model = make_model()
        weight = model.module.weight
        opt = torch.optim.SGD([weight], lr=0.1)
        if where == "in the hook":
            weight.register_post_accumulate_grad_hook(lambda p: opt.step())
        model(x).sum().backward()
        if where == "after backward()":
            opt.step()
        rows[f"weight after a step {where}"] = values(weight)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            print(f"{key}: " + " | ".join(f"rank {r} {g[key]}" for r, g in enumerate(gathered)))
    # free the models while the group exists: a DDP reducer freed after
    # destroy_process_group() can hang (pytorch#56297)
    del model, opt
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
