"""Accelerate's gradient accumulation on two processes (gloo, CPU, loopback): what .grad holds on
each rank per micro-step, a clip on every micro-step, and the learning rate after a sync step."""

import datetime
import gc
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from accelerate import Accelerator

# 4 samples; the prepared dataloader gives rank 0 samples 0 and 2, rank 1 samples 1 and 3
INPUTS = torch.tensor([[1.0, 2.0], [3.0, -1.0], [1.0, 1.0], [0.0, 2.0]])


def train(rank, clip_every_micro_step):  # one optimizer step over two micro-batches per rank
    torch.manual_seed(0)  # same initial weights on every rank
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
    model = torch.nn.Linear(2, 1, bias=False)  # the gradient of model(x).sum() is x
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(INPUTS), batch_size=1)
    ddp, optimizer, scheduler, loader = accelerator.prepare(model, optimizer, scheduler, loader)
    rows = []
    for i, (x,) in enumerate(loader):
        with accelerator.accumulate(ddp):
            accelerator.backward(ddp(x).sum())  # divides the loss by 2
            grad = [round(v, 4) for v in model.weight.grad[0].tolist()]
            row = f"micro-step {i}: sync_gradients={accelerator.sync_gradients!s:<5} .grad {grad}"
            if clip_every_micro_step or accelerator.sync_gradients:
                norm = accelerator.clip_grad_norm_(ddp.parameters(), max_norm=1.0)
                row += f" | norm {norm:.4f}, clipped to {[round(v, 4) for v in model.weight.grad[0].tolist()]}"
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        rows.append(row)
    rows.append(f"after the sync step: StepLR stepped {scheduler.scheduler.last_epoch} times,"
                f" lr {scheduler.get_last_lr()[0]}")
    if rank == 0 and not clip_every_micro_step:
        print(accelerator.distributed_type, "| processes:", accelerator.num_processes,
              "| prepared model:", type(ddp).__name__)
    return rows


def worker(rank, world_size, port):
    # what a launcher sets for each process; with them and cpu=True, Accelerator picks MULTI_CPU
    # and gloo, and uses the group made here (accelerate/state.py)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    for clip_every_micro_step in (False, True):
        rows = train(rank, clip_every_micro_step)
        gathered = [None] * world_size
        dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
        if rank == 0:
            print("clip on every micro-step:" if clip_every_micro_step
                  else "clip under `if accelerator.sync_gradients`:")
            for r, lines in enumerate(gathered):
                for line in lines:
                    print(f"  rank {r} {line}")
    # free any DDP model left in a reference cycle while the group exists: a reducer freed
    # after destroy_process_group() can hang (pytorch#56297)
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
