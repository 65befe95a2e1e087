"""The gradient norm of each part of a model (q, k, v, ffn) under FSDP1 (FullyShardedDataParallel)
before the optimizer step, with use_orig_params=True and with use_orig_params=False (flat
parameters), against the plain model; two processes (gloo, CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

PARTS = ["q", "k", "v", "ffn"]


class Block(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, 8), nn.GELU(), nn.Linear(8, d))

    def forward(self, x):  # x: (batch, seq, d)
        att = torch.softmax(self.q(x) @ self.k(x).transpose(1, 2) / 2, dim=-1)
        h = x + att @ self.v(x)
        return h + self.ffn(h)


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return Block()


def fsdp1(use_orig_params):
    block = make_model()
    block.ffn = FSDP(block.ffn, use_orig_params=use_orig_params, device_id=torch.device("cpu"))
    return FSDP(block, use_orig_params=use_orig_params, device_id=torch.device("cpu"))


def clean(name):  # "_fsdp_wrapped_module.ffn._fsdp_wrapped_module.0.weight" -> "ffn.0.weight"
    return name.replace("_fsdp_wrapped_module.", "")


def part_norms(squares):  # {parameter name: sum of squares} -> {part: norm}
    return {part: sum(s for n, s in squares.items() if n.split(".")[0] == part) ** 0.5
            for part in PARTS}


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 5, 4)
    rows = {}

    # the plain model on both ranks' examples: the norms a log should show
    batches = [None] * world_size
    dist.all_gather_object(batches, batch)
    plain = make_model()
    plain(torch.cat(batches)).pow(2).mean().backward()
    rows["plain model"] = part_norms(
        {n: p.grad.pow(2).sum().item() for n, p in plain.named_parameters()})

    # use_orig_params=True: named_parameters() keeps the names; each .grad is this rank's piece
    model = fsdp1(use_orig_params=True)
    model(batch).pow(2).mean().backward()
    rows["orig=True  names"] = [clean(n) for n, _ in model.named_parameters()][:3]
    rows["orig=True  grad shapes"] = [None if p.grad is None else tuple(p.grad.shape)
                                      for p in model.parameters()]
    local = {clean(n): 0.0 if p.grad is None else p.grad.pow(2).sum().item()
             for n, p in model.named_parameters()}
    rows["orig=True  local pieces only"] = part_norms(local)
    names = list(local)
    squares = torch.tensor([local[n] for n in names])
    dist.all_reduce(squares)  # sum of squares over the ranks, parameter by parameter
    rows["orig=True  all_reduce of squares"] = part_norms(dict(zip(names, squares.tolist())))
    # a collective: every rank enters it; inside, each .grad is the whole gradient
    with FSDP.summon_full_params(model, with_grads=True):
        rows["orig=True  summon_full_params(with_grads=True)"] = part_norms(
            {clean(n): p.grad.pow(2).sum().item() for n, p in model.named_parameters()})

    # use_orig_params=False: one flat parameter per FSDP unit, no q/k/v names
    model = fsdp1(use_orig_params=False)
    model(batch).pow(2).mean().backward()
    rows["orig=False names, grad shapes"] = [
        f"{clean(n)} {tuple(p.grad.shape)}" for n, p in model.named_parameters()]
    try:
        with FSDP.summon_full_params(model, with_grads=True):
            pass
    except NotImplementedError as err:
        rows["orig=False summon_full_params(with_grads=True)"] = f"NotImplementedError: {err}"
    # the flat parameter's (private) metadata: each original parameter's slice of this shard
    local = {}
    for n, flat in model.named_parameters():
        prefix = clean(n).removesuffix("_flat_param")
        for fqn, info in zip(flat._fqns, flat._shard_param_infos):
            piece = flat.grad[info.offset_in_shard:info.offset_in_shard + info.numel_in_shard] \
                if info.in_shard else flat.grad[:0]
            local[prefix + fqn] = piece.pow(2).sum().item()
    names = list(local)
    squares = torch.tensor([local[n] for n in names])
    dist.all_reduce(squares)
    rows["orig=False _shard_param_infos + all_reduce"] = part_norms(
        dict(zip(names, squares.tolist())))

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            values = [" ".join(f"{part} {norm:.4f}" for part, norm in v.items())
                      if isinstance(v, dict) else v for v in values]
            if all(v == values[0] for v in values):
                print(f"{key}: {values[0]}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    del model  # free the model while the group exists (pytorch#56297)
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
