"""Intermediate gradients under DistributedDataParallel: two processes, gloo, CPU, loopback."""

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


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)  # same initial weights on every rank
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
    captured = {}

    def capture(module, inputs, output):  # a def: a forward hook's return value replaces the output
        output.register_hook(lambda grad: captured.update(hidden=grad))

    model.module[1].register_forward_hook(capture)

    torch.manual_seed(100 + rank)  # each rank gets its own data, as with a DistributedSampler
    model(torch.randn(3, 4)).pow(2).mean().backward()

    hidden_grad = captured["hidden"]  # this rank's examples only: DDP does not touch it
    squared = hidden_grad.pow(2).sum()
    dist.all_reduce(squared)  # reduce a statistic yourself: the norm over all ranks' examples
    row = (rank, hidden_grad.norm().item(), model.module[0].weight.grad.norm().item(),
           squared.sqrt().item())
    gathered = [None] * world_size
    dist.all_gather_object(gathered, row)  # rank 0 prints everything, in rank order
    if rank == 0:
        for r, hidden, weight, overall in gathered:
            print(f"rank {r}: captured hidden grad norm {hidden:.4f} | "
                  f"layer-0 weight.grad norm {weight:.4f} | all-rank hidden grad norm {overall:.4f}")
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
