# One torchrun rank: an interpreter of its own (torchrun execs it), allocating
# ~200 MiB of its own. Nothing of it is copied from torchrun.
import os
import time

import torch

x = torch.ones(200 << 20, dtype=torch.uint8)
x.add_(1)
time.sleep(2.5)
print(f"rank {os.environ['RANK']} done {int(x[0])}", flush=True)
