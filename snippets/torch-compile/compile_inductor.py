"""torch.compile's default backend, inductor: the same gradients as aot_eager, in generated code.

On CPU, inductor writes C++ and compiles it, so it needs a C++ compiler (g++) on PATH.
"""

import torch
import torch._inductor.config
import torch.nn as nn


def forward(x):
    u = x.sin()
    return u, (u * u).sum()  # dy/du = 2u


x = torch.tensor([1.0, 2.0], requires_grad=True)
u, y = torch.compile(forward)(x)  # no backend argument: inductor
u.retain_grad()
y.backward()
print("returned intermediate, u.grad:", u.grad)  # silently None, as with aot_eager
print("x.grad:", x.grad, "| eager:", 2 * x.detach().sin() * x.detach().cos())

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
inputs = torch.randn(2, 4)


def loss_with_tap(tap):  # a zero tensor added to the hidden layer: its gradient is the layer's
    hidden = model[1](model[0](inputs)) + tap
    return model[2](hidden).sum()


hidden_grad = torch.compile(torch.func.grad(loss_with_tap), fullgraph=True)(torch.zeros(2, 3))
hidden = model[1](model[0](inputs))
hidden.retain_grad()
model[2](hidden).sum().backward()
print("perturbation, fullgraph:", torch.allclose(hidden_grad, hidden.grad))

torch._inductor.config.cpp.cxx = ("no-such-compiler",)  # what a machine without g++ reports
try:
    torch.compile(lambda t: t.cos() * 2)(x)
except Exception as err:
    print(f"{type(err).__name__}: {str(err).splitlines()[0]}")
