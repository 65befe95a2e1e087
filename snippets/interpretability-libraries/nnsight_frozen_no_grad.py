"""Why nnsight 0.8 gives no gradient of a traced value: frozen parameters, an input that does not
require grad, torch.no_grad(); and requires_grad_() on the traced value, the fix (a script: nnsight
reads the source of the `with` block)."""

import torch
import torch.nn as nn
from nnsight import NNsight

torch.manual_seed(0)
net = nn.Sequential()
net.add_module("layer1", nn.Linear(4, 3))
net.add_module("act", nn.ReLU())
net.add_module("layer2", nn.Linear(3, 1))
model = NNsight(net)
x = torch.randn(2, 4)  # requires_grad=False, as input data is


def hidden_grad(inputs):
    """The gradient of layer1's output, or the error that says why there is none."""
    try:
        with model.trace(inputs):
            hidden = model.layer1.output
            loss = model.output.sum()
            with loss.backward():
                grad = hidden.grad.save()
    except (NotImplementedError, RuntimeError) as err:
        return f"{type(err).__name__}: {err}"
    return grad


reference = hidden_grad(x)
print("trainable model, layer1.output.grad:")
print(reference)

net.requires_grad_(False)  # every parameter frozen
print("all frozen:", hidden_grad(x))
print("all frozen, input requires grad:", torch.equal(hidden_grad(x.clone().requires_grad_()), reference))

net.requires_grad_(True)
with torch.no_grad():
    print("under torch.no_grad():", hidden_grad(x))

net.layer1.requires_grad_(False)  # frozen below the traced value only
print("layer1 frozen:", hidden_grad(x))

net.requires_grad_(True)
net.layer2.requires_grad_(False)  # frozen above it only
net.zero_grad(set_to_none=True)
print("layer2 frozen:", torch.equal(hidden_grad(x), reference),
      "| layer2.weight.grad:", net.layer2.weight.grad, "| layer1.weight.grad set:", net.layer1.weight.grad is not None)

# The fix when nothing below the value requires grad: make the traced value itself require it
net.requires_grad_(False)
net.zero_grad(set_to_none=True)
with model.trace(x):
    hidden = model.layer1.output
    hidden.requires_grad_(True)  # a leaf now: autograd tracks everything computed from it
    loss = model.output.sum()
    with loss.backward():
        grad = hidden.grad.save()
print("all frozen, hidden.requires_grad_(True):", torch.equal(grad, reference),
      "| layer1.weight.grad:", net.layer1.weight.grad)
