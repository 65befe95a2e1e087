"""Module hooks and TorchScript: which hooks torch.jit.script and torch.jit.trace keep, and what
registering one on a ScriptModule raises (a script: TorchScript reads the source of forward)."""

import io
from typing import Any, Dict, List, Tuple

import torch
import torch.nn as nn
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def save_and_load(scripted):
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)  # what a .pt file holds
    buffer.seek(0)
    return torch.jit.load(buffer)


# TorchScript compiles a hook too: it needs type annotations and a return annotation
def show_input(module, inputs: Tuple[torch.Tensor]) -> None:
    print("  pre-hook: input", inputs[0].shape)


def show_output(module, inputs: Tuple[torch.Tensor], output: torch.Tensor) -> None:
    print("  forward hook: output", output.shape)


torch.manual_seed(0)
x = torch.randn(2, 4)

net = Net()
net.fc1.register_forward_pre_hook(show_input)
net.fc1.register_forward_hook(show_output)
print("eager call:")
net(x)
scripted = torch.jit.script(net)  # hooks registered before scripting are compiled in
print("scripted call:")
scripted(x)
print("call after torch.jit.save and torch.jit.load:")
save_and_load(scripted)(x)

def untyped_hook(module, inputs, output):  # the same hook without annotations
    return None


net = Net()
net.fc1.register_forward_hook(untyped_hook)
try:
    torch.jit.script(net)
except RuntimeError as err:
    print("RuntimeError:", str(err).splitlines()[0])


def hook_with_kwargs(module, args: Tuple[torch.Tensor], kwargs: Dict[str, Any], output: torch.Tensor) -> None:
    return None


net = Net()
net.fc1.register_forward_hook(hook_with_kwargs, with_kwargs=True)
try:
    torch.jit.script(net)
except RuntimeError as err:
    print("RuntimeError:", str(err).strip().split(". ")[0])  # its first sentence

calls = []


def keep_output(module, inputs: Tuple[torch.Tensor], output: torch.Tensor) -> None:
    calls.append(output)  # a Python list: TorchScript cannot compile this


net = Net()
net.fc1.register_forward_hook(keep_output)
try:
    torch.jit.script(net)
except RuntimeError as err:
    print("RuntimeError:", str(err).strip().splitlines()[0])


class RecordingLinear(nn.Linear):
    saved: List[torch.Tensor]  # a typed attribute of the module: TorchScript can append to it

    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.saved = []


def keep_in_module(module, inputs: Tuple[torch.Tensor], output: torch.Tensor) -> None:
    module.saved.append(output)


net = Net()
net.fc1 = RecordingLinear(4, 3)
net.fc1.register_forward_hook(keep_in_module)
scripted = torch.jit.script(net)
scripted(x)
scripted(x)
print("kept in the module's typed list:", [tuple(t.shape) for t in scripted.fc1.saved])

for kind in ["register_full_backward_hook", "register_full_backward_pre_hook"]:
    net = Net()
    getattr(net.fc2, kind)(lambda *args: calls.append(kind))
    calls.clear()
    torch.jit.script(net)(x).sum().backward()  # scripting succeeds...
    scripted_calls = len(calls)  # ...and the hook is gone
    net(x).sum().backward()
    print(f"{kind}: calls in the scripted backward {scripted_calls}, in the eager one {len(calls) - scripted_calls}")

scripted = torch.jit.script(Net())
loaded = save_and_load(scripted)
print(type(scripted).__name__, type(loaded).__name__)
for name in ["register_forward_pre_hook", "register_forward_hook", "register_full_backward_hook"]:
    try:
        getattr(loaded.fc1, name)(lambda *args: None)
    except RuntimeError as err:
        print("RuntimeError:", err)

seen = []
handle = register_module_forward_hook(lambda module, inputs, output: seen.append(module.original_name))
loaded(x)
handle.remove()
print("global forward hook, one call of the loaded model:", seen)
for register in [register_module_full_backward_hook, register_module_full_backward_pre_hook]:
    handle = register(lambda *args: None)
    try:
        loaded(x)  # any call of any ScriptModule, while the global hook exists
    except RuntimeError as err:
        print(f"global hook from {register.__name__}: RuntimeError:", err)
    handle.remove()

_ = loaded.fc1.weight.register_hook(lambda grad: calls.append("weight"))  # a tensor hook on a leaf
calls.clear()
loaded(x).sum().backward()
print("tensor hook on a parameter of the loaded model:", calls)

calls.clear()
net = Net()
net.fc1.register_forward_hook(lambda module, inputs, output: calls.append("forward"))
traced = torch.jit.trace(net, x)
during = len(calls)
traced(x)
traced(x)
print("trace: forward hook ran while tracing:", during > 0, "| in 2 calls after:", len(calls) - during)


def double(module, inputs, output):
    calls.append("double")
    return output * 2  # a hook that changes the output


net = Net()
unhooked = net(x)
net.fc1.register_forward_hook(double)
hooked = net(x)
calls.clear()
traced = torch.jit.trace(net, x)
during = len(calls)
out = traced(x)
print("trace, hook returning output * 2: calls after tracing", len(calls) - during,
      "| output equals the hooked eager output:", torch.allclose(out, hooked),
      "| the unhooked one:", torch.allclose(out, unhooked),
      "| aten::mul in the traced graph:", "aten::mul" in str(traced.graph))
for kind in ["register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook"]:
    net = Net()
    getattr(net.fc1, kind)(lambda *args: None)
    try:
        torch.jit.trace(net, x)
    except ValueError as err:
        print(f"trace, {kind}: ValueError:", err)
    except torch.jit.TracingCheckError as err:
        print(f"trace, {kind}: TracingCheckError:", " ".join(str(err).splitlines()[:2]))
net = Net()
net.fc1.register_full_backward_pre_hook(lambda module, grad_output: calls.append("pre"))
calls.clear()
traced = torch.jit.trace(net, x, check_trace=False)  # no check: tracing succeeds
traced(x).sum().backward()
print("check_trace=False: traced; backward pre-hook calls in the traced backward:", calls)
