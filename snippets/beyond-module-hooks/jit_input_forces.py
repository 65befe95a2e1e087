"""Forces -dE/dcoord through a TorchScript model saved and loaded with torch.jit.load: they match
the eager model when the script computes from the coord you marked; .to(torch.float64) keeps it in
the graph, .detach() or a torch.no_grad() block inside the script cuts it, with the exact errors of
torch.autograd.grad; and Tensor.register_hook cannot be scripted (a script: TorchScript reads the
source of forward)."""

import io
from typing import Dict

import torch
import torch.nn as nn


class Energy(nn.Module):
    def __init__(self, convert: str = "none"):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.convert = convert  # what the wrapper does to coord first

    def forward(self, data: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        coord = data["coord"]
        if self.convert == "float64":
            coord = coord.to(torch.float64).to(torch.float32)
        elif self.convert == "detach":
            coord = coord.detach()
        if self.convert == "no_grad":
            with torch.no_grad():
                energy = self.fc(torch.tanh(coord)).sum(dim=(-2, -1))
        else:
            energy = self.fc(torch.tanh(coord)).sum(dim=(-2, -1))  # one per molecule
        return {"energy": energy}


def save_and_load(module):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(module), buffer)  # what a .pt or .jpt file holds
    buffer.seek(0)
    return torch.jit.load(buffer)


torch.manual_seed(0)
coord = torch.randn(2, 5, 3)  # 2 molecules, 5 atoms, xyz
net = Energy()
c = coord.clone().requires_grad_(True)
eager_forces = -torch.autograd.grad(net({"coord": c})["energy"].sum(), c)[0]

loaded = save_and_load(net)
for call in range(1, 4):
    c = coord.clone().requires_grad_(True)
    e = loaded({"coord": c})["energy"]
    forces = -torch.autograd.grad(e.sum(), c)[0]
    print(f"loaded, call {call}: e.grad_fn = {e.grad_fn.name()},",
          "forces match eager:", torch.allclose(forces, eager_forces))

for convert in ["float64", "detach", "no_grad"]:
    model = save_and_load(Energy(convert))
    model.load_state_dict(net.state_dict())  # the same weights
    c = coord.clone().requires_grad_(True)
    e = model({"coord": c})["energy"]
    node = None if e.grad_fn is None else e.grad_fn.name()
    print(f"{convert}: e.requires_grad = {e.requires_grad}, e.grad_fn = {node}")
    try:
        forces = -torch.autograd.grad(e.sum(), c)[0]
        print("  forces match eager:", torch.allclose(forces, eager_forces))
    except RuntimeError as err:
        print(f"  {type(err).__name__}: {err}")


def keep_grad(grad: torch.Tensor) -> torch.Tensor:
    return grad


def scaled(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    y.register_hook(keep_grad)  # a tensor hook inside scripted code
    return y


try:
    torch.jit.script(scaled)
except RuntimeError as err:
    first_line = next(line for line in str(err).splitlines() if line)
    print(f"register_hook in a script: {type(err).__name__}: {first_line}")
