# Spawned DataLoader workers whose collate_fn keeps every batch (its marked line):
# under `memtriage run --limit` the kernel OOM-kills a worker.
import torch
from torch.utils.data import DataLoader, Dataset

kept = []


class Samples(Dataset):
    def __len__(self):
        return 1_000_000

    def __getitem__(self, index):
        return torch.full((128, 256), float(index % 7))


def keep_collate(samples):
    batch = torch.stack(samples)
    kept.append(batch * 2)  # LEAK
    return batch


if __name__ == "__main__":
    loader = DataLoader(
        Samples(), batch_size=16, num_workers=2, collate_fn=keep_collate,
        multiprocessing_context="spawn", persistent_workers=True,
    )
    for batch in loader:
        batch.sum()
