"""The gradient of a value traced with nnsight 0.8: `with loss.backward():` inside `model.trace`,
checked against torch.autograd.grad (a script: nnsight reads the source of the `with` block)."""

import re
import warnings

import torch
import torch.nn as nn
from nnsight import NNsight

torch.manual_seed(0)
net = nn.Sequential()
net.add_module("layer1", nn.Linear(4, 3))
net.add_module("act", nn.ReLU())
net.add_module("layer2", nn.Linear(3, 1))
model = NNsight(net)  # wraps the module; the weights stay where they are
x = torch.randn(2, 4)

with model.trace(x):
    hidden = model.layer1.output  # the real tensor, during the forward pass
    loss = model.output.sum()
    with loss.backward():  # runs the real backward; .grad here is served by a tensor hook
        weight_grad = model.layer2.weight.grad.save()  # a parameter's gradient, the same way
        hidden_grad = hidden.grad.save()  # layer1 ran before layer2: its gradient comes later
print("hidden.grad saved in the trace:")
print(hidden_grad)

# The same gradient with plain autograd, no nnsight
h = net.layer1(x)
reference, = torch.autograd.grad(net.layer2(net.act(h)).sum(), h)
print("equal to torch.autograd.grad:", torch.equal(hidden_grad, reference))
print("layer2.weight.grad in the block:", weight_grad)
print("layer2.weight.grad after the trace:", net.layer2.weight.grad)  # the backward was real

# Ask for the gradients in backward order: the later tensor first
try:
    with model.trace(x):
        hidden = model.layer1.output
        relu_out = model.act.output
        loss = model.output.sum()
        with loss.backward():
            early = hidden.grad.save()  # layer1 ran before act: its gradient comes after
            late = relu_out.grad.save()
except Exception as err:
    print(f"{type(err).__name__}:", re.sub(r"'\d+\.", "'<id>.", str(err)))  # <id>: id() of the tensor
with model.trace(x):
    hidden = model.layer1.output
    relu_out = model.act.output
    loss = model.output.sum()
    with loss.backward():
        late = relu_out.grad.save()
        early = hidden.grad.save()
print("in backward order: act.output.grad", tuple(late.shape), "then layer1.output.grad", tuple(early.shape))
try:  # an activation before a parameter used after it: the wrong order too
    with model.trace(x):
        hidden = model.layer1.output
        loss = model.output.sum()
        with loss.backward():
            early = hidden.grad.save()
            weight_grad = model.layer2.weight.grad.save()
except Exception as err:
    print(f"{type(err).__name__}:", re.sub(r"'\d+\.", "'<id>.", str(err)))

# A plain backward() in the trace, .grad read after it: None, as for any non-leaf tensor
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with model.trace(x):
        hidden = model.layer1.output.save()
        model.output.sum().backward()  # no `with`: an ordinary backward pass
    print("hidden.grad after the trace:", hidden.grad)
for warning in caught:
    print(f"{warning.category.__name__}:", str(warning.message).split(" (Triggered")[0])  # less torch's build path
with model.trace(x):
    hidden = model.layer1.output
    hidden.retain_grad()  # the torch fix works inside a trace too
    hidden = hidden.save()
    model.output.sum().backward()
print("with retain_grad():", torch.equal(hidden.grad, reference))

# import nnsight replaced torch.Tensor.backward for the whole process, traces or not
from nnsight.intervention.backward import _backward  # noqa: E402

print("torch.Tensor.backward is nnsight's _backward:", torch.Tensor.backward is _backward)
p = torch.ones(2, requires_grad=True)
with torch.enable_grad(): (p * 3).sum().backward()  # noqa: E701  read as `with ...backward():`
print("backward() on a `with` line, no trace: p.grad", p.grad)
with torch.enable_grad():
    (p * 3).sum().backward()
print("backward() on a line of its own: p.grad", p.grad)

# At a >>> prompt the code comes from <stdin>, which has no source nnsight can read
prompt_code = "with model.trace(x):\n    out = model.output.save()\n"
try:
    exec(compile(prompt_code, "<stdin>", "exec"))
except Exception as err:
    print(f"{type(err).__name__}:", err)
