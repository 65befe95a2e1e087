"""A parameter used only on cache-miss steps (a RoPE frequency cache, as in DiffSinger) under
DistributedDataParallel, on two processes (gloo, CPU, loopback): the error without
find_unused_parameters, the warning with it, three fixes, and proj's gradient on the
step that does not use freqs."""

import datetime
import gc
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class CachedRope(nn.Module):
    """A projection times cos(position * freqs); the angles are cached per sequence length."""

    def __init__(self, freqs="parameter", touch=False):
        super().__init__()
        torch.manual_seed(0)  # same initial weights on every rank
        self.proj = nn.Linear(4, 4)
        if freqs == "buffer":
            self.register_buffer("freqs", torch.randn(4))
        else:  # "parameter" trains, "frozen" has requires_grad=False
            self.freqs = nn.Parameter(torch.randn(4), requires_grad=freqs == "parameter")
        self.touch = touch
        self.cache = None

    def forward(self, x):
        if self.cache is None or self.cache.shape[0] != x.shape[0]:  # miss: uses freqs
            angles = torch.arange(x.shape[0]).unsqueeze(1) * self.freqs
            self.cache = angles.detach()
        else:  # hit: freqs takes no part
            angles = self.cache
            if self.touch:
                angles = angles + 0 * self.freqs.sum()  # keeps freqs in the graph
        return self.proj(x) * angles.cos()


def warnings_in(fd_output):
    """The C++ warnings in captured stderr, without the [rank]:[W<time> file:line] prefix."""
    return [line.split("] Warning: ", 1)[1] for line in fd_output.splitlines()
            if "] Warning: " in line]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(100 + rank)  # each rank gets its own data
    lengths = {1: 3, 2: 3, 3: 5}  # step 1 misses, step 2 hits, step 3 misses again
    batches = {step: torch.randn(n, 4) for step, n in lengths.items()}
    rows = {}
    for label, net_kwargs, ddp_kwargs in [
            ("parameter", {}, {}),
            ("parameter, find_unused_parameters=True", {}, dict(find_unused_parameters=True)),
            ("parameter, static_graph=True", {}, dict(static_graph=True)),
            ("requires_grad=False", dict(freqs="frozen"), {}),
            ("buffer", dict(freqs="buffer"), {}),
            ("parameter, + 0 * freqs.sum() on hits", dict(touch=True), {})]:
        model = DDP(CachedRope(**net_kwargs), **ddp_kwargs)
        names = [name for name, p in model.module.named_parameters() if p.requires_grad]
        for step, batch in batches.items():
            key = f"{label}, step {step}"
            model.zero_grad(set_to_none=True)
            with tempfile.TemporaryFile(mode="w+") as captured:  # C++ warnings go to fd 2
                saved = os.dup(2)
                os.dup2(captured.fileno(), 2)
                try:
                    model(batch).pow(2).mean().backward()
                    freqs = model.module.freqs
                    rows[f"{key}: freqs.grad"] = (
                        "not a parameter that trains" if not freqs.requires_grad
                        else str(freqs.grad))
                    if step == 2:  # the hit step: is proj's gradient averaged over ranks?
                        rows[f"{key}: proj.weight.grad[0, 0]"] = (
                            f"{model.module.proj.weight.grad[0, 0].item():.4f}")
                except RuntimeError as err:
                    first_line = str(err).splitlines()[0].rstrip()
                    # static_graph's first line is its whole explanation; the default
                    # message's first line breaks mid-sentence: keep its first sentence
                    rows[f"{key}: RuntimeError"] = (
                        first_line if "static_graph" in first_line
                        else first_line.split(". ")[0])
                    (line,) = [s for s in str(err).splitlines()
                               if s.startswith("Parameter indices")]
                    indices = line.split(": ")[1].split()  # the line names the rank
                    rows[f"{key}: parameters without grad"] = " ".join(
                        f"{i} ({names[int(i)]})" for i in indices)
                    break
                finally:
                    sys.stderr.flush()
                    os.dup2(saved, 2)
                    os.close(saved)
                captured.seek(0)
                for message in warnings_in(captured.read()):
                    rows[f"{key}: Warning"] = message
        del model
        gc.collect()

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g.get(key) for g in gathered]
            if len(set(values)) == 1:
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
