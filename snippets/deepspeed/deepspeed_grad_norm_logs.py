"""What DeepSpeed's get_global_grad_norm() returns with gradient_clipping set: the norm before
clipping, None until the first step, and inf after a non-finite gradient, on ZeRO stages 1 and 2;
two processes on CPU (gloo, loopback), each with its own data."""

import datetime
import logging
import os
import socket
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # else DeepSpeed probes for a GPU and warns

import deepspeed
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from deepspeed.utils import logger, safe_get_full_grad

deepspeed.ops.__compatible_ops__ = {}  # skip JIT-compiling its C++ shared-memory op
for handler in logger.handlers:  # DeepSpeed's log lines without their timestamp
    handler.setFormatter(logging.Formatter("  DeepSpeed logs: %(message)s"))


def build():
    torch.manual_seed(0)  # same initial weights on every rank
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))


def total_norm(tensors):  # the 2-norm of all tensors as one vector, as clip_grad_norm_ computes it
    return torch.linalg.vector_norm(torch.stack([t.norm() for t in tensors])).item()


def shown(norm):  # a gradient norm as printed: None, or its value
    return norm if norm is None else f"{float(norm):.4f}"


def worker(rank, world_size, port):
    # what the deepspeed launcher sets for each process
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    deepspeed.init_distributed(dist_backend="gloo", timeout=datetime.timedelta(seconds=60))

    def out(*parts):  # rank 0 prints
        if rank == 0:
            print(*parts)

    def ranks(value):  # every rank's value, in rank order: [rank 0's, rank 1's]
        values = [None] * world_size
        dist.all_gather_object(values, value)
        return "[" + ", ".join(map(str, values)) + "]"

    # 16 examples: rank r trains on rows 8r..8r+7, micro-step i on 4 of them, in every step
    x, y = torch.randn(16, 4, generator=torch.Generator().manual_seed(1)), torch.zeros(16, 1)

    def batch(r, i):
        rows = slice(8 * r + 4 * i, 8 * r + 4 * i + 4)
        return x[rows], y[rows]

    reference = build()  # plain torch on all 16 examples: the first step's gradient
    whole = torch.autograd.grad(F.mse_loss(reference(x), y), list(reference.parameters()))
    out(f"plain torch, all 16 examples: grad norm {total_norm(whole):.4f}")
    out("[rank 0, rank 1]: what each rank finds")

    for stage in (1, 2):
        model = build()
        config = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
                  "gradient_clipping": 0.1, "zero_optimization": {"stage": stage},
                  "zero_allow_untested_optimizer": True}  # ZeRO asks for this with SGD
        # plain SGD with lr 1: each step moves the weights by exactly the clipped gradient
        engine, _, _, _ = deepspeed.initialize(
            model=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), config=config)
        params = list(engine.module.parameters())
        out(f"stage {stage}, gradient_clipping {engine.gradient_clipping()}: "
            f"get_global_grad_norm() before any step {ranks(shown(engine.get_global_grad_norm()))}")
        for step in (1, 2, 3):
            for i in range(2):
                xb, yb = batch(rank, i)
                if step == 3 and rank == 1 and i == 1:
                    xb = xb.clone()
                    xb[0, 0] = float("nan")  # one bad example on rank 1
                engine.backward(F.mse_loss(engine(xb), yb))
                if i == 0:  # between micro-steps: the engine still holds the last step's value
                    engine.step()  # not a boundary: no update
                    out(f"  step {step}, after micro-step 1: get_global_grad_norm() "
                        f"{ranks(shown(engine.get_global_grad_norm()))}")
            # after the last backward, before the step: the full (averaged) gradients' norm
            full = total_norm([safe_get_full_grad(p) for p in params])  # a collective
            out(f"  step {step}: full gradients' norm before the step {ranks(f'{full:.4f}')}")
            before = [p.detach().clone() for p in params]
            engine.step()
            moved = total_norm([b - p.detach() for b, p in zip(before, params)])
            out(f"    after the step: get_global_grad_norm() "
                f"{ranks(shown(engine.get_global_grad_norm()))}, weights moved {ranks(f'{moved:.4f}')}")
        engine.destroy()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    # fork where it is safe (Linux, nothing run yet); spawn elsewhere, as mp.spawn does
    start_method = "fork" if sys.platform == "linux" else "spawn"
    mp.start_processes(worker, args=(2, free_port()), nprocs=2, start_method=start_method)
