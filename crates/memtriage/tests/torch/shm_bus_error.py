# DataLoader workers hand 32 MiB batches to the main process through /dev/shm;
# the test runs this where /dev/shm is a 16 MiB tmpfs, as in a container.
import torch
from torch.utils.data import DataLoader, Dataset


class Big(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.ones(8 << 20, dtype=torch.uint8)


if __name__ == "__main__":
    for batch in DataLoader(Big(), batch_size=4, num_workers=2):
        pass
    print("finished")
