# Two torchrun ranks in one memory limit: rank 1 keeps allocating until the kernel's
# OOM killer ends it; torchrun then reports the rank's SIGKILL (exitcode -9) and
# stops rank 0, as it does on a real node.
import os
import time

import torch

if os.environ["RANK"] == "1":
    held = []
    for _ in range(64):
        held.append(torch.ones(128 << 20, dtype=torch.uint8))
        time.sleep(0.05)
time.sleep(30)
print(f"rank {os.environ['RANK']} survived", flush=True)
