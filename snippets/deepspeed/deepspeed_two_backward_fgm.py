"""Two backward() calls before one engine.step(), as FGM adversarial training makes them, under
DeepSpeed ZeRO stages 0-3: two processes on CPU (gloo, loopback), each with its own data."""

import contextlib
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
from deepspeed.utils import safe_get_full_fp32_param, safe_get_full_grad, safe_set_full_fp32_param

deepspeed.ops.__compatible_ops__ = {}  # skip JIT-compiling its C++ shared-memory op
deepspeed.utils.logger.setLevel(logging.ERROR)  # no "untested optimizer" warning for plain SGD


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(1))


def build():
    torch.manual_seed(0)  # same initial weights on every rank
    return Classifier()


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

    def batch(r):  # rank r's two sentences of three tokens
        return torch.tensor([[1, 2, 3], [4, 5, 6]]) + r, torch.ones(2, 1)

    def loss_of(net, r):
        tokens, target = batch(r)
        return F.mse_loss(net(tokens), target)

    # plain torch on every rank, every rank's data: the averaged gradients FGM sums
    reference = build()
    table = reference.embedding.weight

    def averaged():
        return sum(torch.autograd.grad(loss_of(reference, r), table)[0] for r in range(world_size)) / world_size

    own_clean = torch.autograd.grad(loss_of(reference, rank), table)[0]
    clean = averaged()
    r_adv = 0.5 * clean / clean.norm()  # FGM's perturbation, epsilon 0.5, from the averaged gradient
    with torch.no_grad():
        table += r_adv
    adversarial = averaged()
    out(f"plain torch, averaged over the ranks: |clean| {clean.norm():.4f}, "
        f"|adversarial| {adversarial.norm():.4f}, |clean + adversarial| {(clean + adversarial).norm():.4f}")
    out("[rank 0, rank 1]: what each rank finds")

    fixes = {None: "", "boundary": ", boundary only at the second backward",
             "unmanaged": ", managed_gradient_accumulation false"}
    for stage, fix in ((0, None), (1, None), (2, None), (3, None), (1, "boundary"), (2, "boundary"),
                       (1, "unmanaged"), (2, "unmanaged")):
        model = build()
        zero = {"stage": stage, "stage3_param_persistence_threshold": 0}  # 3: partition small ones too
        config = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
                  "gradient_clipping": 0.0, "zero_allow_untested_optimizer": True,  # the step is plain SGD
                  "zero_optimization": zero, "managed_gradient_accumulation": fix != "unmanaged"}
        engine, _, _, _ = deepspeed.initialize(
            model=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), config=config)
        weight = engine.module.embedding.weight
        whole = deepspeed.zero.GatheredParameters(weight) if stage == 3 else contextlib.nullcontext()
        with whole:
            before = weight.detach().clone()
        out(f"stage {stage}{fixes[fix]}: weight.shape {tuple(weight.shape)}")

        # 1. the clean pass
        if fix:  # nothing reduced yet, and stage 2 keeps no readable gradient: read it with a hook
            seen = []
            handle = weight.register_hook(seen.append)
            if fix == "boundary":
                engine.set_gradient_accumulation_boundary(False)
            engine.backward(loss_of(engine, rank))
            handle.remove()
            grad = seen[0].clone()
            out(f"  after the clean backward: a tensor hook on the weight saw this rank's own gradient "
                f"{ranks(torch.allclose(grad, own_clean))}")
            dist.all_reduce(grad)  # average it by hand, as the boundary would
            grad /= world_size
        else:
            engine.backward(loss_of(engine, rank))
            grad = safe_get_full_grad(weight).clone()  # clone: on stage 0 it is weight.grad itself
            out(f"  after the clean backward: safe_get_full_grad = the averaged clean gradient "
                f"{ranks(torch.allclose(grad, clean))}")

        # 2. FGM's attack on the weights the forward reads
        r = 0.5 * grad / grad.norm()
        master = safe_get_full_fp32_param(weight)
        if master is not None:  # the optimizer's fp32 copy: not what the forward reads
            with torch.no_grad():
                loss_before = loss_of(engine, rank).item()
                safe_set_full_fp32_param(weight, master + r)
                moved = loss_of(engine, rank).item() != loss_before
                safe_set_full_fp32_param(weight, master)
            out(f"  safe_set_full_fp32_param(weight, master + r) changes the loss: {ranks(moved)}")
        edit = deepspeed.zero.GatheredParameters(weight, modifier_rank=0) if stage == 3 else contextlib.nullcontext()
        with edit:
            weight.data.add_(r)

        # 3. the adversarial pass, then restore the weights and step
        if fix == "boundary":
            engine.set_gradient_accumulation_boundary(True)
        engine.backward(loss_of(engine, rank))
        with edit:
            weight.data.sub_(r)
        engine.step()
        with whole:
            used = before - weight.detach()  # SGD, lr 1, no clipping: the gradient the step used
        out(f"  engine.step() used clean + adversarial {ranks(torch.allclose(used, clean + adversarial, atol=1e-6))}, "
            f"adversarial only {ranks(torch.allclose(used, adversarial, atol=1e-6))}")
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
