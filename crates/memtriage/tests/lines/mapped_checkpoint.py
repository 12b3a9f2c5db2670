# A checkpoint mapped and read on first use, its pages not yet in memory: the major
# faults belong to the line marked FIRST USE. argv[1] is a directory on a disk.
import mmap
import os
import sys

path = os.path.join(sys.argv[1], "checkpoint.bin")
with open(path, "wb") as f:
    chunk = os.urandom(1 << 20)
    for _ in range(192):
        f.write(chunk)
    f.flush()
    os.fsync(f.fileno())
    # Out of the page cache: the first read of each page is a major fault.
    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)

with open(path, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_RANDOM)
    total = sum(m[i] for i in range(0, len(m), 4096))  # FIRST USE
print("read", total > 0, flush=True)
