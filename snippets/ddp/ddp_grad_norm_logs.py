"""The gradient norm under DDP: the same on every rank after backward(), each rank's own inside
no_sync(); two processes (gloo, CPU, loopback), each with its own data."""

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
from torch.nn.utils import clip_grad_norm_


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data: two micro-batches of 3
    micro = [torch.randn(3, 4), torch.randn(3, 4)]
    rows = {}

    # the plain model on both ranks' examples: the norms a log should show
    everyone = [None] * world_size
    dist.all_gather_object(everyone, micro)
    plain = make_model()
    plain(torch.cat([m[0] for m in everyone])).pow(2).mean().backward()
    rows["plain model, micro-batch 1: clip_grad_norm_"] = clip_grad_norm_(
        plain.parameters(), 10.0).item()  # max_norm 10: nothing here is clipped
    plain(torch.cat([m[1] for m in everyone])).pow(2).mean().backward()
    rows["plain model, both micro-batches: clip_grad_norm_"] = clip_grad_norm_(
        plain.parameters(), 10.0).item()

    model = DDP(make_model())
    # one step, no accumulation: backward() averages .grad over the ranks
    model(micro[0]).pow(2).mean().backward()
    rows["DDP, after backward(): clip_grad_norm_"] = clip_grad_norm_(
        model.parameters(), 10.0).item()
    model.zero_grad()

    # gradient accumulation: micro-batch 1 inside no_sync(), micro-batch 2 outside
    with model.no_sync():
        model(micro[0]).pow(2).mean().backward()
    rows["DDP, inside no_sync(): clip_grad_norm_"] = clip_grad_norm_(
        model.parameters(), 10.0).item()
    model(micro[1]).pow(2).mean().backward()  # this backward averages the accumulated .grad
    rows["DDP, after the synced backward(): clip_grad_norm_"] = clip_grad_norm_(
        model.parameters(), 10.0).item()

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            print(f"{key}: " + " | ".join(
                f"rank {r} {g[key]:.4f}" for r, g in enumerate(gathered)))
    # free the model (and anything waiting in a reference cycle) while the group exists: a DDP
    # reducer freed after destroy_process_group() can hang (pytorch#56297)
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
