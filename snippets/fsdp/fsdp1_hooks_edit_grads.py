"""Hooks under FSDP1 (FullyShardedDataParallel), with use_orig_params=True and False, registered
before and after wrapping: which ones run, what a module's backward hook finds on the module, and
what named_parameters() yields on each rank; then editing gradients per parameter before
optimizer.step() (a factor from each parameter's global norm), against the plain model; two
processes (gloo, CPU, loopback)."""

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

HOOKS = ["register_hook", "post-accumulate", "_flat_param post-accumulate", "full backward",
         "forward"]


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def wrap(model, use_orig_params):
    return FSDP(model, use_orig_params=use_orig_params, device_id=torch.device("cpu"))


def clean(name):  # "_fsdp_wrapped_module.2.weight" -> "2.weight"
    return name.replace("_fsdp_wrapped_module.", "")


def hooks_run(batch, use_orig_params, when, rows):
    """Register every hook before or after FSDP(), run one backward, count the calls."""
    calls = dict.fromkeys(HOOKS, 0)

    def count(name):
        def hook(*args):
            calls[name] += 1
        return hook

    model = make_model()
    head = model[2]
    weight = head.weight  # an original Parameter
    weight.lr_scale = 0.5  # an attribute set before wrapping
    seen = {}

    def full_backward(module, grad_input, grad_output):
        calls["full backward"] += 1
        seen["row"] = (f"{type(module.weight).__name__}, {module.weight is weight}, "
                       f"{len(list(module.parameters()))}")
        module.weight.scaled_grad = grad_output[0].sum()  # the pattern of fairscale#1101

    def flat_hook(flat_param):
        calls["_flat_param post-accumulate"] += 1
        seen["flat"] = flat_param.grad.clone()

    def register_on_original():
        weight.register_hook(count("register_hook"))
        weight.register_post_accumulate_grad_hook(count("post-accumulate"))
        head.register_full_backward_hook(full_backward)
        head.register_forward_hook(count("forward"))

    if when == "before":
        register_on_original()
    model = wrap(model, use_orig_params)
    if when == "after":
        register_on_original()  # the same Parameter and module objects, now wrapped
        if not use_orig_params:
            try:  # what the module holds in the Parameter's place now
                head.weight.register_hook(count("register_hook"))
            except RuntimeError as err:
                rows["orig=False module[2].weight after FSDP(): type, register_hook"] = (
                    f"{type(head.weight).__name__}, RuntimeError: {err}")
        model._flat_param.register_post_accumulate_grad_hook(flat_hook)
    model(batch).pow(2).mean().backward()

    key = f"orig={use_orig_params!s:5} {when:6} FSDP()"
    rows[f"{key}: hook calls"] = ", ".join(
        "-" if name.startswith("_flat") and when == "before" else str(calls[name])
        for name in HOOKS)
    if when == "after":
        # this rank's examples only, before FSDP's reduce-scatter
        own = make_model()
        own(batch).pow(2).mean().backward()
        local = torch.cat([p.grad.flatten() for p in own.parameters()])
        flat = seen["flat"]
        rows[f"orig={use_orig_params!s:5} _flat_param hook: grad numel, == this rank's grad"] = (
            f"{flat.numel()}, {torch.allclose(flat[:local.numel()], local)}")
        return model
    rows[f"orig={use_orig_params!s:5} in the full backward hook: module.weight type, "
         "is the Parameter, len(module.parameters())"] = seen["row"]
    rows[f"orig={use_orig_params!s:5} named_parameters(): shape, grad shape"] = [
        f"{clean(n)} {tuple(p.shape)} {None if p.grad is None else tuple(p.grad.shape)}"
        for n, p in model.named_parameters()]
    rows[f"orig={use_orig_params!s:5} the Parameter in named_parameters(), lr_scale of each, "
         "any scaled_grad"] = (
        f"{any(p is weight for p in model.parameters())}, "
        f"{[getattr(p, 'lr_scale', None) for p in model.parameters()]}, "
        f"{any(hasattr(p, 'scaled_grad') for p in model.parameters())}")
    return model


def factors(norms):
    """The per-parameter rule: zero a gradient whose norm is above 0.3, clip the others to 0.15."""
    return [None if n is None else 0.0 if n > 0.3 else min(1.0, 0.15 / n) for n in norms]


def fmt(names, values):
    return ", ".join(f"{n} {'-' if v is None else f'{v:.4f}'}" for n, v in zip(names, values))


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    rows = {"hook calls (columns)": ", ".join(HOOKS)}

    # 1 and 2: which hooks run, and what named_parameters() yields
    for use_orig_params in (True, False):
        for when in ("before", "after"):
            model = hooks_run(batch, use_orig_params, when, rows)
            del model
            gc.collect()

    # 3: edit gradients per parameter after backward, before optimizer.step()
    batches = [None] * world_size
    dist.all_gather_object(batches, batch)
    plain = make_model()  # the plain model on both ranks' examples, with the same rule
    plain(torch.cat(batches)).pow(2).mean().backward()
    names = [n for n, _ in plain.named_parameters()]
    with torch.no_grad():
        for p, f in zip(plain.parameters(), factors([p.grad.norm() for p in plain.parameters()])):
            p.grad.mul_(f)
    torch.optim.SGD(plain.parameters(), lr=0.5).step()

    for rule in ("global", "local"):
        model = wrap(make_model(), use_orig_params=True)
        before = [p.detach().clone() for p in model.parameters()]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        model(batch).pow(2).mean().backward()
        if rule == "global":
            # each parameter's sum of squares on this rank, 0.0 where it holds none of it,
            # added over the ranks: one collective for all parameters, on every rank
            squares = torch.tensor([0.0 if p.grad is None else p.grad.pow(2).sum().item()
                                    for p in model.parameters()])
            dist.all_reduce(squares)
            norms = squares.sqrt().tolist()
            rows["global norms (one all_reduce)"] = fmt(names, norms)
        else:  # the norm of this rank's piece only: a different number on each rank
            norms = [None if p.grad is None else p.grad.norm().item() for p in model.parameters()]
        found = factors(norms)
        rows[f"{rule:6} factors"] = fmt(names, [
            f if p.grad is not None else None for f, p in zip(found, model.parameters())])
        with torch.no_grad():
            for p, f in zip(model.parameters(), found):
                if p.grad is not None:  # edit this rank's piece in place
                    p.grad.mul_(f)
        optimizer.step()
        frozen = all(torch.equal(b, p) for b, p, f in zip(before, model.parameters(), found)
                     if f == 0.0)
        with FSDP.summon_full_params(model):  # a collective: whole parameters on every rank
            same = all(torch.allclose(p, q) for p, q in zip(model.parameters(),
                                                             plain.parameters()))
        rows[f"{rule:6} weights after step == plain model's, zeroed pieces unchanged"] = (
            f"{same}, {frozen}")
        del model, optimizer
        gc.collect()

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if all(v == values[0] for v in values):
                print(f"{key}: {values[0]}")  # the same on every rank
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
