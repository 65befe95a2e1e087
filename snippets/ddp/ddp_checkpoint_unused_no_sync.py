"""Reentrant checkpointing, unused parameters and no_sync under DistributedDataParallel, on two
processes (gloo, CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys

import torch
import torch._dynamo  # checkpoint() imports it on first use: import it once, before forking
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    """A stem, a block applied `uses` times (checkpointed or not), a head and an optional branch."""

    def __init__(self, uses=2, use_reentrant=None):
        super().__init__()
        torch.manual_seed(0)  # same initial weights on every rank
        self.stem = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)
        self.branch = nn.Linear(4, 1)
        self.uses, self.use_reentrant = uses, use_reentrant  # use_reentrant None: no checkpoint

    def forward(self, x, use_branch=True):
        h = self.stem(x)
        for _ in range(self.uses):
            if self.use_reentrant is None:
                h = self.block(h)
            else:
                h = checkpoint(self.block, h, use_reentrant=self.use_reentrant)
        return self.head(h) + self.branch(h) if use_branch else self.head(h)


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    micro_batches = torch.randn(3, 2, 4)
    rows = {}

    def first_sentence(err):
        return str(err).split(". ")[0]

    def grad_norm(param):
        return param.grad.norm().item()

    # 1. checkpointing: the block's parameters get their gradients in reentrant backward passes
    shown_whole = False
    for label, net_kwargs, ddp_kwargs in [
            ("no checkpoint", {}, {}),
            ("use_reentrant=True, block used twice", dict(use_reentrant=True), {}),
            ("use_reentrant=True, used once, find_unused_parameters=True",
             dict(uses=1, use_reentrant=True), dict(find_unused_parameters=True)),
            ("use_reentrant=False, block used twice", dict(use_reentrant=False), {})]:
        model = DDP(Net(**net_kwargs), **ddp_kwargs)
        try:
            model(batch).pow(2).mean().backward()
            rows[f"{label}: block grad"] = grad_norm(model.module.block[0].weight)
        except RuntimeError as err:  # the whole message once, as a terminal prints it
            rows[f"{label}: RuntimeError"] = first_sentence(err) if shown_whole else str(err)
            shown_whole = True
            rows[f"{label}: last line"] = first_sentence(str(err).splitlines()[-1])
    model = DDP(Net(use_reentrant=True), static_graph=True)  # the other fix
    for step in (1, 2):
        model.zero_grad(set_to_none=True)
        model(batch).pow(2).mean().backward()
        rows[f"use_reentrant=True, static_graph=True, step {step}: block grad"] = \
            grad_norm(model.module.block[0].weight)

    # 2. a branch that forward skips: its parameters get no gradient
    model = DDP(Net(uses=1))
    for step in (1, 2):
        try:
            model(batch, use_branch=False).pow(2).mean().backward()
            rows[f"unused branch, step {step}: head grad"] = grad_norm(model.module.head.weight)
        except RuntimeError as err:
            rows[f"unused branch, step {step}: RuntimeError"] = first_sentence(err)
            (line,) = [s for s in str(err).splitlines() if s.startswith("Parameter indices")]
            # the line names the rank: keep the indices only
            rows[f"unused branch, step {step}: indices without grad"] = line.split(": ")[1]
    model = DDP(Net(uses=1), find_unused_parameters=True)
    for step in (1, 2):
        model.zero_grad(set_to_none=True)
        model(batch, use_branch=False).pow(2).mean().backward()
        rows[f"find_unused_parameters=True, step {step}: head grad"] = \
            grad_norm(model.module.head.weight)
        rows[f"find_unused_parameters=True, step {step}: branch grad"] = \
            str(model.module.branch.weight.grad)

    # 3. no_sync: accumulate micro-batches locally, average on the last backward outside it
    model = DDP(Net(uses=1))
    captured = {}

    def capture(module, inputs, output):  # a def: a forward hook's return value replaces the output
        output.register_hook(lambda grad: captured.update(h=grad))

    model.module.block.register_forward_hook(capture)
    for i, micro in enumerate(micro_batches, start=1):
        inside = i < len(micro_batches)
        if inside:
            with model.no_sync():  # forward and backward both inside
                model(micro).pow(2).mean().backward()
        else:
            model(micro).pow(2).mean().backward()
        where = "inside no_sync" if inside else "outside"
        rows[f"micro-batch {i} ({where}): block grad"] = grad_norm(model.module.block[0].weight)
        rows[f"micro-batch {i} ({where}): captured activation grad"] = captured["h"].norm().item()
    local = Net(uses=1)  # the same micro-batches on a plain copy: the sum of local gradients
    for micro in micro_batches:
        local(micro).pow(2).mean().backward()
    expected = local.block[0].weight.grad
    dist.all_reduce(expected)
    rows["block grad == all-rank average of the local sums"] = torch.allclose(
        model.module.block[0].weight.grad, expected / world_size)

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if isinstance(values[0], str) and len(set(values)) == 1:
                print(f"{key}: {values[0]}")  # the same message on every rank
            else:
                print(f"{key}: " + " | ".join(
                    f"rank {r} {v:.4f}" if isinstance(v, float) else f"rank {r} {v}"
                    for r, v in enumerate(values)))
    # free the model (and any earlier one still waiting in a reference cycle) while the group
    # exists: a DDP reducer freed after destroy_process_group() can hang (pytorch#56297)
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
