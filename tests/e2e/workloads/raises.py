"""Raises inside a scope after one good iteration."""
import torch

from inferscope import scope

model = torch.nn.Linear(128, 128)
x = torch.randn(8, 128)
for i in range(2):
    with scope("step"):
        model(x)
        if i == 1:
            raise RuntimeError("planted failure in iteration 2")
