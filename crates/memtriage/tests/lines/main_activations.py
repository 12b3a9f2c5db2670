# A training loop that keeps every step's output, and with it the step's graph and
# activations (the line marked LEAK): under `memtriage run --limit` the kernel
# OOM-kills it.
import torch

model = torch.nn.Sequential(
    torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 512)
)
history = []
for step in range(1_000_000):
    x = torch.randn(512, 512)
    history.append(model(x))  # LEAK
