# DataLoader workers started by the context named on the command line (`spawn` or
# `forkserver`): each is a fresh interpreter (or a fork of the small forkserver),
# and allocates ~100 MiB of its own per item; nothing is copied from the job.
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Own(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        block = torch.ones(100 << 20, dtype=torch.uint8)
        block.add_(1)
        time.sleep(0.5)
        return int(block.sum() % 7)


if __name__ == "__main__":
    # The parent holds ~400 MiB of Python objects a fork would copy.
    items = [{"id": i} for i in range(2_000_000)]
    loader = DataLoader(Own(), batch_size=1, num_workers=2, multiprocessing_context=sys.argv[1])
    for batch in loader:
        pass
    print("finished", len(items))
