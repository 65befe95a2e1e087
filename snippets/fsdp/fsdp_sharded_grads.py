"""Gradients under FSDP2 (fully_shard): DTensor shards, an activation hook, a post-accumulate-grad
hook and the full gradient norm, on two processes (gloo, CPU, loopback)."""

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


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    mesh = init_device_mesh("cpu", (world_size,))
    model = make_model()
    fully_shard(model[0], mesh=mesh)  # the first layer is its own FSDP unit
    fully_shard(model, mesh=mesh)  # the root: the rest
    first = model[0].weight
    rows = {}

    captured = {}

    def capture(module, inputs, output):  # a def: a forward hook's return value replaces the output
        output.register_hook(lambda grad: captured.update(hidden=grad))

    model[0].register_forward_hook(capture)  # on the sharded block itself
    seen = []
    first.register_post_accumulate_grad_hook(
        lambda p: seen.append((type(p.grad).__name__, p.grad.to_local().clone())))

    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    model(batch).pow(2).mean().backward()

    # the plain model on both ranks' examples: the gradient that averaging should give
    batches = [None] * world_size
    dist.all_gather_object(batches, batch)
    plain = make_model()
    plain(torch.cat(batches)).pow(2).mean().backward()
    my_shard = plain[0].weight.grad.chunk(world_size)[rank]  # Shard(0): rows split by rank
    own = make_model()  # and on this rank's examples only: the local activation gradient
    hidden = own[0](batch)
    hidden.retain_grad()
    own[2](own[1](hidden)).pow(2).mean().backward()

    rows["first weight: type, placements"] = f"{type(first).__name__}, {first.placements}"
    grad = first.grad
    rows["first weight.grad: type, placements"] = f"{type(grad).__name__}, {grad.placements}"
    rows["first weight.grad: full shape"] = tuple(first.grad.shape)
    rows["first weight.grad: local shape"] = tuple(first.grad.to_local().shape)
    rows["head weight.grad: full shape"] = tuple(model[2].weight.grad.shape)
    rows["head weight.grad: local shape"] = tuple(model[2].weight.grad.to_local().shape)
    full = first.grad.full_tensor()  # a collective: every rank calls it
    rows["full_tensor() == plain model's grad"] = torch.allclose(full, plain[0].weight.grad)
    rows["full_tensor() norm"] = full.norm().item()
    rows["captured activation grad"] = captured["hidden"].norm().item()
    rows["captured == plain model on this rank's examples"] = torch.allclose(
        captured["hidden"], hidden.grad)
    rows["post-accumulate hook: calls, grad type"] = f"{len(seen)}, {seen[0][0]}"
    rows["post-accumulate hook: local grad == my shard of the average"] = torch.allclose(
        seen[0][1], my_shard)
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    rows["clip_grad_norm_: type, placements"] = f"{type(total).__name__}, {total.placements}"
    rows["clip_grad_norm_: full_tensor()"] = total.full_tensor().item()
    rows["plain model: clip_grad_norm_"] = torch.nn.utils.clip_grad_norm_(
        plain.parameters(), max_norm=1.0).item()

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
    # free the model (and anything waiting in a reference cycle) while the group exists, as the
    # DDP scripts do: a model freed after destroy_process_group() can hang (pytorch#56297)
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
