# A dataset held as a million Python dicts; forked DataLoader workers read them, and
# reference counting writes to every object read, so each worker copies the pages.
import time

import torch
from torch.utils.data import DataLoader, Dataset

N = 1_000_000
ITEMS = 40


class Objects(Dataset):
    def __init__(self):
        self.items = [{"id": i, "label": str(i)} for i in range(N)]

    def __len__(self):
        return ITEMS

    def __getitem__(self, index):
        # Each call reads every object, as a shuffled epoch eventually does.
        total = 0
        for item in self.items:
            total += item["id"]
        time.sleep(0.2)
        return torch.tensor(total)


if __name__ == "__main__":
    loader = DataLoader(Objects(), batch_size=1, num_workers=2, multiprocessing_context="fork")
    for batch in loader:
        pass
    print("finished")
