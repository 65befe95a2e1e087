"""The whole error that a step with an unused branch leaves for the next step under DDP, on two
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
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    """The model of ddp_checkpoint_unused_no_sync.py, block applied once, without checkpointing."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # same initial weights on every rank
        self.stem = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)
        self.branch = nn.Linear(4, 1)

    def forward(self, x, use_branch=True):
        h = self.block(self.stem(x))
        return self.head(h) + self.branch(h) if use_branch else self.head(h)


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    model = DDP(Net())
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batch = torch.randn(3, 4)
    model(batch, use_branch=False).pow(2).mean().backward()  # step 1: the branch takes no part
    try:
        model(batch, use_branch=False)  # step 2
        message = "no error"
    except RuntimeError as err:
        message = "\n".join(line.rstrip() for line in str(err).splitlines())  # every line
    gathered = [None] * world_size
    dist.all_gather_object(gathered, message)
    if rank == 0:
        print("RuntimeError:", gathered[0])
        print("rank 1, the same message naming rank 1:",
              gathered[1] == gathered[0].replace("rank 0", "rank 1"))
    # free the model while the group exists: a DDP reducer freed after destroy_process_group()
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
