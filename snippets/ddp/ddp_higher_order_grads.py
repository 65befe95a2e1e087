"""Higher-order gradients under DDP: backward(create_graph=True) runs and warns on a
one-parameter model, and its second-order gradient is not averaged across the ranks; on a model
with more parameters it raises; a gradient penalty on the inputs, added to the loss before an
ordinary backward(), is averaged. Two processes (gloo, CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Scale(nn.Module):
    """loss = sum((p * x) ** 2): first derivative 2 p x**2, second derivative 2 x**2."""

    def __init__(self):
        super().__init__()
        self.p = nn.Parameter(torch.tensor([1.5, -0.5]))

    def forward(self, x):
        return (self.p * x).pow(2).sum()


def make_model():
    torch.manual_seed(0)  # same initial weights on every rank
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def penalized_loss(model, batch):
    batch = batch.clone().requires_grad_()
    out = model(batch)
    # gradient of each example's output with respect to its input, kept in the graph
    (grad_in,) = torch.autograd.grad(out.sum(), batch, create_graph=True)
    return out.pow(2).mean() + grad_in.pow(2).sum(dim=1).mean()


def first_line(warning):
    """The warning's first line, without the C++ source path that ends some of them."""
    return str(warning.message).splitlines()[0].split(" (Triggered internally")[0]


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    gathered = [None] * world_size
    data = torch.tensor([[1.0, 2.0], [3.0, 4.0]])  # one row per rank
    x = data[rank]

    # 0. what DDP's reducer did before pytorch#63831: divide the gradient into its bucket with
    # an out= op, which autograd refuses once the gradient itself requires grad
    try:
        torch.mul(torch.ones(2, requires_grad=True), 1 / world_size, out=torch.empty(2))
        out_error = "no error"
    except RuntimeError as err:
        out_error = f"{type(err).__name__}: {err}"

    # 1. backward(create_graph=True): runs; the reducer logs a warning to stderr (C++)
    model = DDP(Scale())
    p = model.module.p
    with tempfile.TemporaryFile("w+") as log, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)  # capture what C++ writes to stderr
        try:
            model(x).backward(create_graph=True)
            (second,) = torch.autograd.grad(p.grad.sum(), p)  # d(sum of p.grad)/dp
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        logged = [line for line in log.read().splitlines() if "reducer.cpp" in line]
    rows = {
        "p.grad": p.grad.tolist(),
        "p.grad.grad_fn": type(p.grad.grad_fn).__name__,
        "second order, autograd.grad(p.grad.sum(), p)": second.tolist(),
        "reducer log": [line.split("] ", 1)[1] for line in logged],
        "python warnings": [first_line(w) for w in caught],
    }
    dist.all_reduce(second)  # sum: each rank holds its own second order / world size
    rows["second order after all_reduce (sum)"] = second.tolist()

    # 2. the same call on a model with more than one parameter
    del model
    gc.collect()
    model = DDP(make_model())
    torch.manual_seed(100 + rank)
    with tempfile.TemporaryFile("w+") as log, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)  # the reducer's line again
        try:
            model(torch.randn(3, 4)).pow(2).mean().backward(create_graph=True)
            rows["two-layer model: backward(create_graph=True)"] = "runs"
        except RuntimeError as err:
            rows["two-layer model: backward(create_graph=True)"] = f"{type(err).__name__}: {err}"
        finally:
            os.dup2(saved, 2)
            os.close(saved)

    # 3. a gradient penalty on the inputs, then an ordinary backward(): DDP averages it
    del model
    gc.collect()
    model = DDP(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(100 + rank)  # each rank gets its own data
    batches = [torch.randn(3, 4) for _ in range(2)]
    grads = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step, batch in enumerate(batches, 1):
            optimizer.zero_grad(set_to_none=True)
            penalized_loss(model, batch).backward()
            grads[step] = model.module[0].weight.grad.clone()
            rows[f"penalty step {step}: first layer weight.grad norm"] = grads[step].norm().item()
            optimizer.step()
    rows["penalty: python warnings"] = [first_line(w) for w in caught]

    dist.all_gather_object(gathered, (rows, batches, grads))
    if rank == 0:
        print("torch.mul(..., out=...) on a tensor that requires grad:", out_error)
        for key in rows:
            values = [g[0][key] for g in gathered]
            if key == "reducer log":
                print(f"rank 0 stderr, {len(values[0])} line from reducer.cpp, after its prefix:")
                print(*values[0], sep="\n")
                print("rank 1 stderr, the same:", values[1] == values[0])
            elif key.startswith("two-layer"):
                print(f"{key}: {values[0]}")
                print("  rank 1, the same:", values[1] == values[0])
            elif "python warnings" in key:
                print(f"{key}, rank 0:")
                for message in values[0]:
                    print(f"  UserWarning: {message}")
                print("  rank 1, the same:", values[1] == values[0])
            elif isinstance(values[0], float):
                print(f"{key}: " + " | ".join(f"rank {r} {v:.4f}" for r, v in enumerate(values)))
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))

        # references in one process, without DDP
        reference = Scale()
        firsts, second_orders = [], []
        for row in data:
            (first,) = torch.autograd.grad(reference(row), reference.p, create_graph=True)
            firsts.append(first.detach())
            second_orders.append(torch.autograd.grad(first.sum(), reference.p)[0])
        print("reference: mean over ranks of the first order:",
              torch.stack(firsts).mean(0).tolist())
        print("reference: mean over ranks of the second order:",
              torch.stack(second_orders).mean(0).tolist())
        plain = make_model()
        plain_optimizer = torch.optim.SGD(plain.parameters(), lr=0.1)
        for step in (1, 2):
            full = torch.cat([g[1][step - 1] for g in gathered])  # both ranks' examples
            plain_optimizer.zero_grad(set_to_none=True)
            penalized_loss(plain, full).backward()
            grad = plain[0].weight.grad
            print(f"reference penalty step {step}, full batch of {len(full)}: first layer "
                  f"weight.grad norm {grad.norm().item():.4f}; both ranks' grad equal to it:",
                  all(torch.allclose(g[2][step], grad) for g in gathered))
            plain_optimizer.step()
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
