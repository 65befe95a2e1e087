"""The benchmark's workloads: the two models, whose every layer output is a tap, and one training
step per technique, returning what the technique leaves you."""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn
from torch.autograd.graph import get_gradient_edge, register_multi_grad_hook


# --- Models: a stack of layers, every layer's output is a tap -------------------------------------

class Net(nn.Module):
    """layers[i] produces tap i; `tap` decides what each technique does with it."""

    def __init__(self, layers: list[nn.Module], head: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.head = head

    def forward(self, x: torch.Tensor, tap=lambda index, t: t) -> torch.Tensor:
        for index, layer in enumerate(self.layers):
            x = tap(index, layer(x))
        return self.head(x)


class MeanHead(nn.Module):
    def __init__(self, features: int, spatial: bool):
        super().__init__()
        self.linear = nn.Linear(features, 1)
        self.spatial = spatial

    def forward(self, x):
        if self.spatial:
            x = x.mean(dim=(2, 3))
        return self.linear(x).pow(2).mean()


@dataclass
class Workload:
    name: str
    description: str
    net: Net
    inputs: torch.Tensor

    def __post_init__(self):
        self.shapes = self.tap_shapes()  # for the zero taps, measured outside any step

    @property
    def taps(self) -> int:
        return len(self.net.layers)

    def tap_shapes(self) -> list[torch.Size]:
        shapes = []
        with torch.no_grad():
            self.net(self.inputs, lambda i, t: shapes.append(t.shape) or t)
        return shapes


def mlp(width: int = 1024, depth: int = 8, batch: int = 256) -> Workload:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    net = Net(layers, MeanHead(width, spatial=False))
    return Workload("mlp", f"{depth} × (Linear({width}, {width}), ReLU)", net,
                    torch.randn(batch, width))


def cnn(channels: int = 32, depth: int = 8, batch: int = 4, size: int = 64) -> Workload:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for index in range(depth):
        layers += [nn.Conv2d(3 if index == 0 else channels, channels, 3, padding=1), nn.ReLU()]
    net = Net(layers, MeanHead(channels, spatial=True))
    return Workload("cnn", f"{depth} × (Conv2d(·, {channels}, 3, padding=1), ReLU)", net,
                    torch.randn(batch, 3, size, size))


# --- Techniques: one training step each, returning what the technique leaves you ----------------

def _params(work: Workload) -> list[torch.Tensor]:
    return list(work.net.parameters())


def plain(work):
    work.net(work.inputs).backward()


def keep_references(work):
    acts = []
    work.net(work.inputs, lambda i, t: acts.append(t) or t).backward()
    return acts


def retain_grad(work):
    acts = []

    def tap(i, t):
        t.retain_grad()
        acts.append(t)
        return t

    work.net(work.inputs, tap).backward()
    return acts  # read acts[i].grad


def print_hook(work):
    sink = io.StringIO()  # printed as a reader would, into a buffer instead of the terminal

    def tap(i, t):
        t.register_hook(lambda grad: print(grad, file=sink))
        return t

    work.net(work.inputs, tap).backward()


def storing_hook(work):
    grads = [None] * work.taps

    def tap(i, t):
        t.register_hook(lambda grad: grads.__setitem__(i, grad))
        return t

    work.net(work.inputs, tap).backward()
    return grads


def node_prehook(work):
    grads = [None] * work.taps

    def tap(i, t):
        t.grad_fn.register_prehook(lambda grad_outputs: grads.__setitem__(i, grad_outputs[0]))
        return t

    work.net(work.inputs, tap).backward()
    return grads


def multi_grad_hook(work):
    acts, grads = [], []

    def tap(i, t):
        acts.append(t)
        return t

    loss = work.net(work.inputs, tap)
    register_multi_grad_hook(acts, grads.extend)
    acts.clear()  # the hook does not need the tensors
    loss.backward()
    return grads


def module_full_backward_hooks(work):
    grads = [None] * work.taps
    handles = [
        layer.register_full_backward_hook(
            lambda module, grad_input, grad_output, i=i: grads.__setitem__(i, grad_output[0]))
        for i, layer in enumerate(work.net.layers)
    ]
    with warnings.catch_warnings():  # the first layer's input needs no grad: a known warning
        warnings.filterwarnings("ignore", "Full backward hook is firing", UserWarning)
        work.net(work.inputs).backward()
    for handle in handles:
        handle.remove()
    return grads


def grad_cam_hooks(work):
    acts, grads = [None] * work.taps, [None] * work.taps

    def keep(i):
        def hook(module, inputs, output):
            acts[i] = output
            output.register_hook(lambda grad: grads.__setitem__(i, grad))
        return hook

    handles = [layer.register_forward_hook(keep(i)) for i, layer in enumerate(work.net.layers)]
    work.net(work.inputs).backward()
    for handle in handles:
        handle.remove()
    return acts, grads


def backward_inputs(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    loss.backward(inputs=acts + _params(work))
    return acts  # read acts[i].grad


def autograd_grad_once(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    grads = torch.autograd.grad(loss, acts + _params(work))
    for param, grad in zip(_params(work), grads[len(acts):]):
        param.grad = grad  # a training step needs them; plain backward() sets them too
    return grads[: len(acts)]


def autograd_grad_per_tap(work):
    acts = []
    loss = work.net(work.inputs, lambda i, t: acts.append(t) or t)
    grads = [torch.autograd.grad(loss, act, retain_graph=True)[0] for act in acts]
    acts.clear()
    loss.backward()  # and one more pass for the parameters
    return grads


def gradient_edges(work):
    edges = []
    loss = work.net(work.inputs, lambda i, t: edges.append(get_gradient_edge(t)) or t)
    grads = torch.autograd.grad(loss, edges + _params(work))
    for param, grad in zip(_params(work), grads[len(edges):]):
        param.grad = grad
    return grads[: len(edges)]


class _Tap(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, store, index):
        ctx.store, ctx.index = store, index
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        ctx.store[ctx.index] = grad
        return grad, None, None


def custom_function_tap(work):
    grads = [None] * work.taps
    work.net(work.inputs, lambda i, t: _Tap.apply(t, grads, i)).backward()
    return grads


def func_perturbation(work):
    params = {name: p.detach() for name, p in work.net.named_parameters()}
    shapes = work.shapes

    def loss(eps, params):
        return torch.func.functional_call(
            work.net, params, (work.inputs,), {"tap": lambda i, t: t + eps[i]})

    eps = [torch.zeros(shape, device=work.inputs.device) for shape in shapes]
    tap_grads, param_grads = torch.func.grad(loss, argnums=(0, 1))(eps, params)
    for name, p in work.net.named_parameters():
        p.grad = param_grads[name]
    return tap_grads


@dataclass(frozen=True)
class Technique:
    key: str
    label: str  # as the tables and figures show it: code, the same in both languages
    run: Callable


TECHNIQUES = [
    Technique("plain", "loss.backward()", plain),
    Technique("keep_references", "acts.append(t)", keep_references),
    Technique("retain_grad", "t.retain_grad()", retain_grad),
    Technique("print_hook", "t.register_hook(print)", print_hook),
    Technique("storing_hook", "t.register_hook(store)", storing_hook),
    Technique("node_prehook", "t.grad_fn.register_prehook(store)", node_prehook),
    Technique("multi_grad_hook", "register_multi_grad_hook(acts, store)", multi_grad_hook),
    Technique("module_full_backward_hooks", "layer.register_full_backward_hook(store)",
              module_full_backward_hooks),
    Technique("grad_cam_hooks", "register_forward_hook + register_hook", grad_cam_hooks),
    Technique("backward_inputs", "loss.backward(inputs=acts + params)", backward_inputs),
    Technique("autograd_grad_once", "autograd.grad(loss, acts + params)", autograd_grad_once),
    Technique("autograd_grad_per_tap", "for t in acts: autograd.grad(loss, t)",
              autograd_grad_per_tap),
    Technique("gradient_edges", "autograd.grad(loss, edges + params)", gradient_edges),
    Technique("custom_function_tap", "Tap.apply(t)", custom_function_tap),
    Technique("func_perturbation", "torch.func.grad(loss)(eps, params)", func_perturbation),
]
