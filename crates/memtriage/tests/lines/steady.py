# A large working set taken once, then steady work on it: nothing leaks.
import time

import numpy as np

data = np.ones((600 << 20) // 8)  # WORKING SET
total = 0.0
for step in range(40):
    total += float(data[:: 4096].sum())
    scratch = np.empty(1 << 16)
    time.sleep(0.05)
print("finished", flush=True)
