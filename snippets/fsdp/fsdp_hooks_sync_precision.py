"""Three FSDP2 (fully_shard) surprises, on two processes (gloo, CPU, loopback): register_hook on a
sharded parameter, set_requires_gradient_sync(False) for gradient accumulation, and the dtypes of
gradients under a MixedPrecisionPolicy."""

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
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def sharded(mesh, **options):
    model = make_model()
    fully_shard(model[0], mesh=mesh, **options)  # the first layer is its own FSDP unit
    fully_shard(model, mesh=mesh, **options)  # the root: the rest
    return model


def gather_text(text, world_size):
    """Every rank's string, with tensor collectives only."""
    data = torch.tensor(list(text.encode()), dtype=torch.uint8)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world_size)]
    dist.all_gather(sizes, torch.tensor([data.numel()]))
    padded = torch.zeros(int(max(sizes)), dtype=torch.uint8)
    padded[:data.numel()] = data
    gathered = [torch.empty_like(padded) for _ in range(world_size)]
    dist.all_gather(gathered, padded)
    return [bytes(g[:int(n)].tolist()).decode() for g, n in zip(gathered, sizes)]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    mesh = init_device_mesh("cpu", (world_size,))
    rows = {}

    # 1. hooks on a sharded parameter
    model = sharded(mesh)
    weight = model[0].weight  # the sharded DTensor
    calls = {"register_hook": 0, "post-accumulate": 0}

    def count(name):
        def hook(_):
            calls[name] += 1
        return hook

    weight.register_hook(count("register_hook"))
    weight.register_post_accumulate_grad_hook(count("post-accumulate"))
    in_forward = {}

    def look(module, args):  # runs after FSDP's own pre-hook has all-gathered the weight
        w = module.weight
        in_forward.update(row=f"{type(w).__name__}, {w.dtype}, {w is weight}")

    model[0].register_forward_pre_hook(look)

    # 2. gradient accumulation over two micro-batches, syncing on the last one only
    torch.manual_seed(100 + rank)  # each rank gets its own data
    micro = torch.randn(2, 3, 4)
    model.set_requires_gradient_sync(False)
    model(micro[0]).pow(2).mean().backward()
    rows["weight in forward: type, dtype, is the sharded weight"] = in_forward["row"]
    rows["micro-step 1 (sync off): every .grad is None"] = str(
        all(p.grad is None for p in model.parameters()))
    rows["micro-step 1: register_hook calls, post-accumulate calls"] = (
        f"{calls['register_hook']}, {calls['post-accumulate']}")
    model.set_requires_gradient_sync(True)
    model(micro[1]).pow(2).mean().backward()
    rows["micro-step 2 (sync on): .grad types"] = ", ".join(
        sorted({type(p.grad).__name__ for p in model.parameters()}))
    rows["micro-step 2: register_hook calls, post-accumulate calls"] = (
        f"{calls['register_hook']}, {calls['post-accumulate']}")

    # the plain model on both ranks' micro-batches, accumulated: what FSDP2 should give
    everyone = [torch.empty_like(micro) for _ in range(world_size)]
    dist.all_gather(everyone, micro)
    plain = make_model()
    for step in range(2):
        plain(torch.cat([m[step] for m in everyone])).pow(2).mean().backward()
    last = make_model()  # and on the last micro-batch alone
    last(torch.cat([m[1] for m in everyone])).pow(2).mean().backward()
    full = [p.grad.full_tensor() for p in model.parameters()]  # a collective: every rank calls it
    rows["full_tensor() == plain model's accumulated grad"] = str(all(
        torch.allclose(f, p.grad) for f, p in zip(full, plain.parameters())))
    rows["full_tensor() == plain model's grad on micro-batch 2 alone"] = str(all(
        torch.allclose(f, p.grad) for f, p in zip(full, last.parameters())))
    rows["first weight: full_tensor() norm, plain norm"] = (
        f"{full[0].norm().item():.4f}, {plain[0].weight.grad.norm().item():.4f}")

    # 3. mixed precision: bfloat16 compute, float32 reduction
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    mixed = sharded(mesh, mp_policy=policy)
    weight = mixed[0].weight
    captured = {}

    def capture(module, inputs, output):  # a def: a forward hook's return value replaces the output
        output.register_hook(lambda grad: captured.update(dtype=grad.dtype))

    mixed[0].register_forward_pre_hook(look)
    mixed[0].register_forward_hook(capture)
    mixed(micro[0]).pow(2).mean().backward()
    rows["mixed: weight in forward: type, dtype, is the sharded weight"] = in_forward["row"]
    rows["mixed: activation grad in a tensor hook: dtype"] = str(captured["dtype"])
    rows["mixed: sharded weight, its .grad: dtype"] = f"{weight.dtype}, {weight.grad.dtype}"

    # rank 0 prints every row: once when all ranks agree, else rank by rank
    gathered = [text.split("\n") for text in gather_text("\n".join(rows.values()), world_size)]
    if rank == 0:
        for key, values in zip(rows, zip(*gathered)):
            if len(set(values)) == 1:
                print(f"{key}: {values[0]}")
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    # free the models (and anything waiting in a reference cycle) while the group exists, as the
    # DDP scripts do: a model freed after destroy_process_group() can hang (pytorch#56297)
    del model, mixed
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
