"""A contrastive (InfoNCE) loss over the global batch under DDP: which all_gather lets the
gradient through, compared with one process that holds the whole batch. Two processes (gloo,
CPU, loopback)."""

import datetime
import gc
import os
import socket
import sys
import warnings

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.distributed.nn.functional as dist_nn
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

PAIRS = 2  # image-text pairs per rank


class TwoTowers(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # the same initial weights on every rank
        self.image = nn.Linear(6, 4)
        self.text = nn.Linear(5, 4)

    def forward(self, images, texts):
        return self.image(images), self.text(texts)


def pairs(rank):
    torch.manual_seed(100 + rank)  # each rank gets its own pairs
    return torch.randn(PAIRS, 6), torch.randn(PAIRS, 5)


def info_nce(img, txt, rows=None):
    """Cross-entropy over image-text similarities: image i matches text i. `rows`: the images
    scored (their places in the batch); default: all of them."""
    logits = F.normalize(img, dim=1) @ F.normalize(txt, dim=1).T / 0.1
    rows = torch.arange(len(img)) if rows is None else rows
    return F.cross_entropy(logits[rows], rows)


def worker(rank, world_size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=60))
    # the reference: one process holds the global batch (every rank's pairs), no communication
    reference = TwoTowers()
    every = [pairs(r) for r in range(world_size)]
    info_nce(*reference(torch.cat([p[0] for p in every]), torch.cat([p[1] for p in every]))).backward()
    expected = {name: reference.get_submodule(name).weight.grad for name in ("image", "text")}

    images, texts = pairs(rank)
    own_rows = torch.arange(rank * PAIRS, (rank + 1) * PAIRS)  # this rank's pairs in the global batch
    rows, caught = {}, []

    def compare(name, model):  # after backward(): each .grad is DDP's average over the ranks
        grads = {tower: model.module.get_submodule(tower).weight.grad for tower in expected}
        rows[name] = " | ".join(f"{tower} {grads[tower].norm() / expected[tower].norm():.4f}" for tower in grads)
        rows[name] += " of the reference | equal to it: " + str(
            all(torch.allclose(grads[tower], expected[tower], atol=1e-6) for tower in grads))

    def gather_plain(tensor):  # torch.distributed.all_gather: copies, no graph
        out = [torch.empty_like(tensor) for _ in range(world_size)]
        dist.all_gather(out, tensor)
        return out

    def gather_differentiable(tensor):  # a backward that sends each rank its rows' gradient
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = list(dist_nn.all_gather(tensor))
        caught.extend(str(w.message) for w in seen)
        return out

    # 1. dist.all_gather as it is
    model = DDP(TwoTowers())
    img, txt = model(images, texts)
    all_img, all_txt = gather_plain(img), gather_plain(txt)
    rows["1. dist.all_gather: gathered requires_grad"] = str(all_img[rank].requires_grad)
    try:
        info_nce(torch.cat(all_img), torch.cat(all_txt)).backward()
    except RuntimeError as err:
        rows["1. dist.all_gather: backward()"] = f"RuntimeError: {err}"

    # 2. the same, with this rank's own tensors put back in their places
    all_img[rank], all_txt[rank] = img, txt
    info_nce(torch.cat(all_img), torch.cat(all_txt)).backward()
    compare("2a. own tensors put back, every rank the full loss", model)

    model = DDP(TwoTowers())
    img, txt = model(images, texts)
    all_img, all_txt = gather_plain(img), gather_plain(txt)
    all_img[rank], all_txt[rank] = img, txt
    (info_nce(torch.cat(all_img), torch.cat(all_txt)) * world_size).backward()
    compare("2b. the same, the loss times the world size", model)

    model = DDP(TwoTowers())
    img, txt = model(images, texts)
    all_img, all_txt = gather_plain(img), gather_plain(txt)
    all_img[rank], all_txt[rank] = img, txt
    info_nce(torch.cat(all_img), torch.cat(all_txt), rows=own_rows).backward()
    compare("2c. own tensors put back, each rank its own rows", model)

    # 3. torch.distributed.nn.functional.all_gather, every rank the full loss
    model = DDP(TwoTowers())
    img, txt = model(images, texts)
    info_nce(torch.cat(gather_differentiable(img)), torch.cat(gather_differentiable(txt))).backward()
    compare("3. differentiable all_gather, every rank the full loss", model)

    # 4. the same gather, each rank scores only its own images against every text
    model = DDP(TwoTowers())
    img, txt = model(images, texts)
    info_nce(torch.cat(gather_differentiable(img)), torch.cat(gather_differentiable(txt)),
             rows=own_rows).backward()
    compare("4. differentiable all_gather, each rank its own rows", model)

    # 5. what torch 2.15's deprecation warning points to (a private module; see the page)
    if hasattr(funcol, "all_gather_single"):
        model = DDP(TwoTowers())
        img, txt = model(images, texts)
        name = "5. _functional_collectives.all_gather_single, each rank its own rows"
        try:
            info_nce(funcol.all_gather_single(img, 0, dist.group.WORLD),
                     funcol.all_gather_single(txt, 0, dist.group.WORLD), rows=own_rows).backward()
            compare(name, model)
        except RuntimeError as err:
            rows[name] = f"RuntimeError: {err}"
    else:
        rows["5. _functional_collectives.all_gather_single"] = "not in this release"

    gathered = [None] * world_size
    dist.all_gather_object(gathered, rows)  # rank 0 prints everything, rank by rank
    if rank == 0:
        for key in rows:
            values = [g[key] for g in gathered]
            if len(set(values)) == 1:
                print(f"{key}: {values[0]} (both ranks)")
            else:
                print(f"{key}: " + " | ".join(f"rank {r} {v}" for r, v in enumerate(values)))
        for message in dict.fromkeys(caught):  # what this release warns, once
            print("warning:", message)
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
