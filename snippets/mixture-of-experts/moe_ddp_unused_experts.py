"""Experts that one rank's batch does not use, under DDP on two processes (gloo, CPU, loopback):
Mixtral's fused experts under plain DDP, then one module per expert, with and without
find_unused_parameters=True."""

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
from transformers import MixtralConfig, MixtralForCausalLM


def make_mixtral():
    torch.manual_seed(0)  # same initial weights on every rank
    config = MixtralConfig(vocab_size=100, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                           num_local_experts=4, num_experts_per_tok=1)
    return MixtralForCausalLM(config)


class MoE(nn.Module):
    """The hand-written MoE of the page: one module per expert, skips experts without tokens."""

    def __init__(self, dim=8, num_experts=4):
        super().__init__()
        torch.manual_seed(0)  # same initial weights on every rank
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_experts))

    def forward(self, x):
        weight, index = self.gate(x).softmax(dim=-1).max(dim=-1)  # top-1, not renormalised
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tokens = torch.where(index == e)[0]
            if len(tokens) == 0:
                continue  # an expert without tokens is never called
            out = out.index_add(0, tokens, expert(x[tokens]) * weight[tokens, None])
        return out


def is_average(model, local, world_size):
    """Whether every .grad of the DDP model is the average of the ranks' own gradients
    (those of `local`, an unwrapped copy run on the same batch; a missing one counts as zero)."""
    same = True
    for p, q in zip(model.module.parameters(), local.parameters()):
        own = torch.zeros_like(q) if q.grad is None else q.grad.clone()
        dist.all_reduce(own)
        if own.any():
            same &= p.grad is not None and torch.allclose(p.grad, own / world_size)
        else:  # no rank used it
            same &= p.grad is None or not p.grad.any()
    return same


def norms(grads):
    return [None if g is None else f"{g.norm():.2e}" for g in grads]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    rows = {}

    # 1. Mixtral, fused experts, plain DDP: each rank routes its own ids
    model, local = DDP(make_mixtral()), make_mixtral()  # local: this rank's own gradient
    input_ids = torch.tensor([([5, 17, 42, 8], [12, 90, 33, 50])[rank]])
    for step in (1, 2, 3):
        model.zero_grad(set_to_none=True)
        model(input_ids=input_ids, labels=input_ids).loss.backward()
    rows["Mixtral, plain DDP: steps 1-3"] = "no error"
    local(input_ids=input_ids, labels=input_ids).loss.backward()
    rows["layer 0 gate_up_proj rows, own gradient"] = norms(local.model.layers[0].mlp.experts.gate_up_proj.grad)
    rows["layer 0 gate_up_proj rows, .grad after DDP"] = norms(model.module.model.layers[0].mlp.experts.gate_up_proj.grad)
    rows["Mixtral: every .grad is the average of the own gradients"] = is_average(model, local, world_size)

    # 2. one module per expert, find_unused_parameters=True
    torch.manual_seed(101 + rank)  # each rank gets its own tokens
    x = torch.randn(3, 8)
    model, local = DDP(MoE(), find_unused_parameters=True), MoE()
    rows["ModuleList, tokens per expert"] = torch.bincount(local.gate(x).argmax(dim=-1), minlength=4).tolist()
    for step in (1, 2, 3):
        model.zero_grad(set_to_none=True)
        model(x).pow(2).sum().backward()
    rows["ModuleList, find_unused_parameters=True: steps 1-3"] = "no error"
    local(x).pow(2).sum().backward()
    rows["expert weights, own gradient"] = norms(e.weight.grad for e in local.experts)
    rows["expert weights, .grad after DDP"] = norms(e.weight.grad for e in model.module.experts)
    rows["ModuleList: every .grad is the average of the own gradients"] = is_average(model, local, world_size)

    # 3. the same without find_unused_parameters: the next forward raises
    model = DDP(MoE())
    model(x).pow(2).sum().backward()  # step 1
    try:
        model(x)  # step 2
        rows["plain DDP, step 2"] = "no error"
    except RuntimeError as err:
        message = str(err).splitlines()
        rows["plain DDP, step 2: RuntimeError"] = message[0].split(". ")[0]
        line = next(line for line in message if line.startswith("Parameter indices"))
        indices = [int(i) for i in line.split(": ")[1].split()]  # "... for rank N: 1 2"
        names = [name for name, _ in model.module.named_parameters()]
        rows["plain DDP, step 2: did not receive grad"] = [names[i] for i in indices]

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if isinstance(values[0], str) and values[0] == values[1]:
                print(f"{key}: {values[0]}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    # free the models while the group exists: a DDP reducer freed after destroy_process_group()
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
