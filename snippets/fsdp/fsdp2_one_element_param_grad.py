"""FSDP2 (fully_shard) and a shape-(1,) parameter in a sharded submodule (pytorch#144045): its
gradient against a plain model's, on a mesh of one rank and a mesh of two (gloo, CPU, loopback)."""

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


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_multiplier = nn.Parameter(torch.zeros(1))  # shape (1,): fully_shard rejects ()

    def forward(self, x):
        return x * self.log_multiplier.exp()


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 4), Scale(), nn.Linear(4, 1))


def run(mesh, batch):
    model = make_model()
    fully_shard(model[1], mesh=mesh)  # the submodule with the (1,) parameter: its own FSDP unit
    fully_shard(model, mesh=mesh)  # the root: the rest
    model(batch).pow(2).mean().backward()
    rows = {}
    for name, p in model.named_parameters():
        full = p.grad.full_tensor()  # a collective: every rank of the mesh calls it
        rows[name] = (tuple(p.grad.to_local().shape), full)
    del model
    gc.collect()
    return rows


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    batches = [None] * world_size
    dist.all_gather_object(batches, batch)

    # a mesh of one rank per process: FSDP2 on a world size of 1, as in the issue
    one = init_device_mesh("cpu", (world_size, 1), mesh_dim_names=("replicate", "shard"))["shard"]
    two = init_device_mesh("cpu", (world_size,))  # both ranks in one mesh
    results = {}
    for label, mesh, data in [("mesh of 1 rank", one, batch),
                              ("mesh of 2 ranks", two, torch.cat(batches))]:
        plain = make_model()  # the plain model on the examples that mesh averages over
        plain(data).pow(2).mean().backward()
        grads = dict(plain.named_parameters())
        for name, (local_shape, full) in run(mesh, batch).items():
            plain_grad = grads[name].grad
            results[(label, name)] = (mesh.size(), local_shape, full, plain_grad)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, results)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in results:
            label, name = key
            for r, g in enumerate(gathered):
                size, local_shape, full, plain_grad = g[key]
                line = (f"{label}, rank {r}: {name} local grad shape {local_shape}, "
                        f"equals the plain model's: {torch.allclose(full, plain_grad)}")
                if name == "1.log_multiplier":
                    line += f" (fsdp {full.item():.4f}, plain {plain_grad.item():.4f})"
                print(line)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
