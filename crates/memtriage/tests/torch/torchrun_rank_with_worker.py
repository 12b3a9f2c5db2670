# One torchrun rank that forks a helper without exec (as a DataLoader worker under
# `fork` starts), both living long enough to be sampled. The helper inherits the
# rank's environment, RANK included.
import os
import time

import torch

x = torch.ones(16 << 20, dtype=torch.uint8)
pid = os.fork()
if pid == 0:
    time.sleep(1.5)
    os._exit(0)
time.sleep(1.5)
os.waitpid(pid, 0)
print(f"rank {os.environ['RANK']} done", flush=True)
