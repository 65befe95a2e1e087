"""The gradient norm under FSDP1 (FullyShardedDataParallel, use_orig_params=True) and FSDP2
(fully_shard): what torch.nn.utils.clip_grad_norm_ and FSDP's own clip_grad_norm_ return on each
rank, and what Lightning's grad_norm() returns there, against the plain model; two processes
(gloo, CPU, loopback)."""

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
from lightning.pytorch.utilities import grad_norm
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import fully_shard
from torch.nn.utils import clip_grad_norm_


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    rows = {}

    # the plain model on both ranks' examples: the norm a log should show
    batches = [None] * world_size
    dist.all_gather_object(batches, batch)
    plain = make_model()
    plain(torch.cat(batches)).pow(2).mean().backward()
    rows["plain model: clip_grad_norm_"] = clip_grad_norm_(plain.parameters(), 1.0).item()

    # FSDP1: each original parameter is a flat view of this rank's piece of the flat shard
    fsdp1 = FSDP(make_model(), use_orig_params=True, device_id=torch.device("cpu"))
    fsdp1(batch).pow(2).mean().backward()
    rows["FSDP1 grad shapes"] = [None if p.grad is None else tuple(p.grad.shape)
                                 for p in fsdp1.parameters()]
    local = clip_grad_norm_(fsdp1.parameters(), 1.0).item()  # max_norm 1.0: nothing is clipped
    rows["FSDP1 torch.nn.utils.clip_grad_norm_"] = local
    squares = torch.tensor(local ** 2)
    dist.all_reduce(squares)  # sum over the ranks
    rows["FSDP1   sqrt(sum over ranks of its square)"] = squares.sqrt().item()
    rows["FSDP1 FSDP.clip_grad_norm_"] = fsdp1.clip_grad_norm_(1.0).item()
    # clipping to 0.1 with torch's function: each rank scales its shard by its own factor
    clip_grad_norm_(fsdp1.parameters(), 0.1)
    rows["FSDP1   norm after torch's clip to 0.1"] = fsdp1.clip_grad_norm_(float("inf")).item()
    fsdp1.zero_grad()
    fsdp1(batch).pow(2).mean().backward()
    rows["FSDP1   FSDP.clip_grad_norm_(0.1) returns"] = fsdp1.clip_grad_norm_(0.1).item()
    rows["FSDP1   norm after FSDP's clip to 0.1"] = fsdp1.clip_grad_norm_(float("inf")).item()
    fsdp1.zero_grad()
    fsdp1(batch).pow(2).mean().backward()
    # Lightning's recipe, self.log_dict(grad_norm(self, norm_type=2)), on the same gradients
    rows["FSDP1 Lightning grad_norm(...)['grad_2.0_norm_total']"] = \
        grad_norm(fsdp1, norm_type=2)["grad_2.0_norm_total"].item()

    # FSDP2: parameters and gradients are DTensors
    mesh = init_device_mesh("cpu", (world_size,))
    fsdp2 = make_model()
    fully_shard(fsdp2[0], mesh=mesh)
    fully_shard(fsdp2, mesh=mesh)
    fsdp2(batch).pow(2).mean().backward()
    total = clip_grad_norm_(fsdp2.parameters(), 1.0)
    rows["FSDP2 total = torch.nn.utils.clip_grad_norm_: type, placements"] = \
        f"{type(total).__name__}, {total.placements}"
    rows["FSDP2   total.item()"] = total.item()
    rows["FSDP2   total.full_tensor()"] = total.full_tensor().item()
    # a norm computed by hand from the local shards is this rank's own
    rows["FSDP2 norm of p.grad.to_local() over all p"] = torch.linalg.vector_norm(
        torch.stack([p.grad.to_local().norm() for p in fsdp2.parameters()])).item()
    first = fsdp2[0].weight.grad.norm()  # one parameter's norm: a DTensor too
    rows["FSDP2 first = first weight.grad.norm(): placements"] = str(first.placements)
    rows["FSDP2   first.to_local()"] = first.to_local().item()
    rows["FSDP2   first.item()"] = first.item()
    rows["FSDP2   first.full_tensor()"] = first.full_tensor().item()
    rows["FSDP2 clip_grad_norm_(0.1) returns"] = clip_grad_norm_(fsdp2.parameters(), 0.1).item()
    rows["FSDP2   norm after the clip"] = clip_grad_norm_(fsdp2.parameters(), float("inf")).item()
    try:
        rows["FSDP2 Lightning grad_norm(...)"] = str(grad_norm(fsdp2, norm_type=2))
    except RuntimeError as err:  # its message spans three lines: print it on one
        rows["FSDP2 Lightning grad_norm(...)"] = "RuntimeError: " + " ".join(str(err).split("\n"))

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if isinstance(values[0], str) and len(set(values)) == 1:
                print(f"{key}: {values[0]}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(
                    f"rank {r} {v:.4f}" if isinstance(v, float) else f"rank {r} {v}"
                    for r, v in enumerate(values)))
    # free the models (and anything waiting in a reference cycle) while the group exists, as
    # the DDP scripts do: a model freed after destroy_process_group() can hang (pytorch#56297)
    del fsdp1, fsdp2
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
