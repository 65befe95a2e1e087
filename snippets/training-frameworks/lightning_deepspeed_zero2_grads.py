"""Lightning's DeepSpeed strategy, ZeRO stage 2, in one process on the CPU: what param.grad,
safe_get_full_grad and the engine's gradient norm hold in the LightningModule's hooks."""

import logging
import os
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")  # else DeepSpeed probes for a GPU and warns

import deepspeed
import lightning as L
import torch
import torch.nn as nn
from deepspeed.utils import safe_get_full_grad
from lightning.pytorch.strategies import DDPStrategy, DeepSpeedStrategy
from lightning.pytorch.utilities.warnings import PossibleUserWarning

deepspeed.ops.__compatible_ops__ = {}  # skip JIT-compiling its C++ shared-memory op
logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)  # hide "GPU available: ..." lines


def norm(grads):  # total norm of a list of gradients, or None
    if any(g is None for g in grads):
        return "None"
    return f"{torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])):.4f}"


def full_grads(module):  # safe_get_full_grad of every parameter, or the error it raises
    try:
        return norm([safe_get_full_grad(p) for p in module.parameters()])
    except ValueError as err:
        return f"ValueError: {err}"


class TinyMLP(L.LightningModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.seen = []

    def record(self, event, *values):
        self.seen.append(f"batch {self.batch} {event:<25}" + " | ".join(values))

    def training_step(self, batch, batch_idx):
        self.batch = batch_idx
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def on_after_backward(self):
        self.record("on_after_backward", f"param.grad {norm([p.grad for p in self.parameters()])}",
                    f"safe_get_full_grad {full_grads(self)}")

    def on_before_optimizer_step(self, optimizer):
        self.record("on_before_optimizer_step", f"param.grad {norm([p.grad for p in self.parameters()])}",
                    f"safe_get_full_grad {full_grads(self)}", type(optimizer).__name__)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        norm_ = self.trainer.model.get_global_grad_norm()  # the DeepSpeedEngine's
        self.record("on_train_batch_end", f"get_global_grad_norm() {norm_ if norm_ is None else f'{norm_:.4f}'}",
                    f"safe_get_full_grad {full_grads(self)}")

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=0.01)


class CPUDeepSpeedStrategy(DeepSpeedStrategy):  # only to run it here: without the CUDA check
    def setup_environment(self):
        DDPStrategy.setup_environment(self)  # what DeepSpeedStrategy calls after its check


def fit(strategy, **options):
    model = TinyMLP()
    data = torch.utils.data.TensorDataset(torch.randn(8, 4, generator=torch.Generator().manual_seed(1)),
                                          torch.randn(8, 1, generator=torch.Generator().manual_seed(2)))
    with warnings.catch_warnings():
        # Lightning 2.6.6 builds a torch LeafSpec, deprecated in torch 2.13
        warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)`", category=FutureWarning)
        # num_workers=0 for batches this small; Lightning suggests more workers on machines with 3+ cores
        warnings.filterwarnings("ignore", message=r".*does not have many workers", category=PossibleUserWarning)
        trainer = L.Trainer(accelerator="cpu", devices=1, strategy=strategy, max_epochs=1,
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False, use_distributed_sampler=False,  # batches in order
                            **options)
        trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=4))
    print("\n".join(model.seen))
    return model, data


if __name__ == "__main__":
    try:
        fit("deepspeed_stage_2")
    except RuntimeError as err:
        print("RuntimeError:", err)

    print("ZeRO stage 2, gradient_clip_val=1.0:")
    model, data = fit(CPUDeepSpeedStrategy(stage=2, parallel_devices=[torch.device("cpu", 0)]),
                      gradient_clip_val=1.0)
    reference = TinyMLP()  # the same initial weights, plain torch
    for rows, what in ((slice(0, 4), "batch 0"), (slice(0, 8), "batches 0 and 1 together")):
        x, y = data[rows]
        grads = torch.autograd.grad(nn.functional.mse_loss(reference.net(x), y), list(reference.parameters()))
        print(f"plain torch, initial weights, {what}: total norm {norm(grads)}")

    print("ZeRO stage 2, accumulate_grad_batches=2:")
    fit(CPUDeepSpeedStrategy(stage=2, parallel_devices=[torch.device("cpu", 0)]), accumulate_grad_batches=2)
