"""The gradient of an activation in a TorchScript model: returning the activation gives it on the
profiling run (by default the first call) only, then None or a wrong gradient; the eager model
rebuilt from the state dict, the submodules called one by one, or a fresh model run under
torch.jit.optimized_execution(False) give it on every call (a script: TorchScript reads the source
of forward)."""

import io

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 1)

    def forward(self, x):
        hidden = torch.relu(self.fc1(x))
        return self.fc2(hidden), hidden  # also return the activation


def save_and_load(module):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(module), buffer)  # what a .pt file holds
    buffer.seek(0)
    return torch.jit.load(buffer)


def hidden_grad(model):
    """One call and backward pass of out.sum(); the first row of hidden.grad, or None."""
    out, hidden = model(x)
    hidden.retain_grad()
    out.sum().backward()
    return None if hidden.grad is None else hidden.grad[0]


torch.manual_seed(0)
net = Net()
loaded = save_and_load(net)
x = torch.randn(2, 4)

print("d out / d hidden = fc2.weight:", loaded.fc2.weight.detach())
for call in range(1, 4):
    out, hidden = loaded(x)
    hidden.retain_grad()
    received = []
    hidden.register_hook(received.append)  # a tensor hook: records what it is called with
    out.sum().backward()
    nodes = [t.grad_fn.name().split("::")[-1] for t in (out, hidden)]  # the nodes they hang from
    print(f"returned, call {call}: out from {nodes[0]}, hidden from {nodes[1]}")
    print("  hidden.grad =", hidden.grad)
    print("  the tensor hook on hidden was called with:", received[0])
out, hidden = loaded(x)
print("autograd.grad:", torch.autograd.grad(out.sum(), hidden, allow_unused=True))

out, hidden = loaded(x)  # a loss that also uses hidden directly
hidden.retain_grad()
(out.sum() + hidden.sum()).backward()
print("loss out.sum() + hidden.sum(): hidden.grad[0] =", hidden.grad[0])
print("                   right answer, fc2.weight + 1:", loaded.fc2.weight[0].detach() + 1)

first, second = torch.jit.script(Net()), torch.jit.script(Net())  # two instances of one class
print("first call of a scripted instance: hidden.grad is None:", hidden_grad(first) is None)
print("first call of a second instance:   hidden.grad is None:", hidden_grad(second) is None)

# Way round 1: the eager model, rebuilt from the state dict, takes hooks again
eager = Net()
eager.load_state_dict(loaded.state_dict())
grads = []
eager.fc2.register_full_backward_hook(lambda module, grad_input, grad_output: grads.append(grad_input[0]))
for call in range(1, 4):
    out, hidden = eager(x)
    out.sum().backward()
print("eager rebuilt:", len(grads), "hook calls; gradient at fc2's input:", grads[-1][0])

# Way round 2: no Python class at hand; call the submodules as the compiled forward does
print(loaded.code)
for call in range(1, 4):
    hidden = torch.relu(loaded.fc1(x))
    hidden.retain_grad()
    loaded.fc2(hidden).sum().backward()
    print(f"submodules, call {call}: hidden.grad[0] =", hidden.grad[0])

# Way round 3: a freshly loaded model, run without the executor's optimizations
fresh = save_and_load(net)
with torch.jit.optimized_execution(False):
    for call in range(1, 4):
        print(f"optimized_execution(False), call {call}: hidden.grad[0] =", hidden_grad(fresh))
for call in range(4, 6):
    print(f"after leaving it, call {call}: hidden.grad[0] =", hidden_grad(fresh))
with torch.jit.optimized_execution(False):
    print("optimized_execution(False) on the model used above:", hidden_grad(loaded))
