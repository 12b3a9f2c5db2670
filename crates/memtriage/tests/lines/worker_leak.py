# Persistent forked DataLoader workers that keep every sample they make (the line
# marked LEAK): under `memtriage run --limit` the kernel OOM-kills a worker.
import ctypes
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self):
        self.seen = []

    def __len__(self):
        return 1_000_000

    def __getitem__(self, index):
        frame = np.full((256, 256), index % 251, dtype=np.float32)
        self.seen.append(frame * 2)  # LEAK
        time.sleep(0.001)
        return torch.from_numpy(frame)


if __name__ == "__main__":
    # Each 256 KiB array in a mapping of its own (M_MMAP_THRESHOLD, fixed): a freed
    # sample's pages go back to the kernel instead of into the heap, where glibc would
    # hand them to the kept copies and the line above would take the copies' growth
    # (heap reuse, which the README says the measurement cannot tell apart).
    ctypes.CDLL(None).mallopt(-3, 128 * 1024)
    loader = DataLoader(
        Frames(), batch_size=16, num_workers=2, persistent_workers=True,
        multiprocessing_context="fork",
    )
    for batch in loader:
        batch.mean()
