"""A learnable prompt used twice (prompt A and prompt B, as in PowerPaint's training) by an
encoder under reentrant checkpointing, under DistributedDataParallel, on two processes (gloo,
CPU, loopback): the error, what detach() on the second use changes, and the fixes that keep
both uses' gradients."""

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


class PromptNet(nn.Module):
    """A learnable prompt added to two inputs, one encoder layer run on both, a head."""

    def __init__(self, use_reentrant=None, detach_second=False, train_encoder=True):
        super().__init__()
        torch.manual_seed(0)  # same initial weights on every rank
        self.prompt = nn.Parameter(torch.randn(4))  # the learnable prompt embedding
        self.encoder = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.encoder.requires_grad_(train_encoder)  # PowerPaint freezes its text encoder layers
        self.head = nn.Linear(4, 1)
        self.use_reentrant, self.detach_second = use_reentrant, detach_second

    def encode(self, tokens):
        h = tokens + self.prompt  # outside the checkpoint, as a token embedding is
        if self.use_reentrant is None:  # no checkpoint: the plain model
            return self.encoder(h)
        return checkpoint(self.encoder, h, use_reentrant=self.use_reentrant)

    def forward(self, tokens_a, tokens_b):
        h_a, h_b = self.encode(tokens_a), self.encode(tokens_b)  # the prompt used twice
        if self.detach_second:
            h_b = h_b.detach()  # PowerPaint: encoder_hidden_statesB.detach()
        return self.head(0.7 * h_a + 0.3 * h_b)  # a fixed trade-off between the two


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    tokens_a, tokens_b = torch.randn(3, 4), torch.randn(3, 4)
    rows = {}

    def first_sentence(err):
        return str(err).split(". ")[0]

    def plain_grads(**net_kwargs):
        # the model without checkpoint on one process, each rank's gradients averaged by hand
        plain = PromptNet(**net_kwargs)
        plain(tokens_a, tokens_b).pow(2).mean().backward()
        grads = [p.grad.clone() for p in plain.parameters() if p.requires_grad]
        for grad in grads:
            dist.all_reduce(grad)
        return [grad / world_size for grad in grads]

    def same(model, expected):
        grads = [p.grad for p in model.module.parameters() if p.requires_grad]
        return all(torch.allclose(g, e) for g, e in zip(grads, expected))

    plain = {(train, detach): plain_grads(train_encoder=train, detach_second=detach)
             for train in (True, False) for detach in (False, True)}
    rows["plain model: prompt grad, both uses"] = plain[True, False][0].norm().item()
    rows["plain model: prompt grad, first use only"] = plain[True, True][0].norm().item()

    for label, net_kwargs, ddp_kwargs in [
            ("use_reentrant=True, both uses", dict(use_reentrant=True), {}),
            ("use_reentrant=True, second use detached",
             dict(use_reentrant=True, detach_second=True), {}),
            ("use_reentrant=False, both uses", dict(use_reentrant=False), {}),
            ("use_reentrant=True, static_graph=True, both uses", dict(use_reentrant=True),
             dict(static_graph=True)),
            ("use_reentrant=True, frozen encoder, both uses",
             dict(use_reentrant=True, train_encoder=False), {})]:
        model = DDP(PromptNet(**net_kwargs), **ddp_kwargs)
        train = net_kwargs.get("train_encoder", True)
        for step in (1, 2):
            model.zero_grad(set_to_none=True)
            try:
                model(tokens_a, tokens_b).pow(2).mean().backward()
            except RuntimeError as err:
                rows[f"{label}: RuntimeError"] = first_sentence(err)
                rows[f"{label}: last line"] = first_sentence(str(err).splitlines()[-1])
                break
            rows[f"{label}, step {step}: prompt grad"] = model.module.prompt.grad.norm().item()
        else:  # both steps ran: compare every trainable gradient with the plain model's
            rows[f"{label}: grads == plain, both uses"] = same(model, plain[train, False])
            rows[f"{label}: grads == plain, first use only"] = same(model, plain[train, True])

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
