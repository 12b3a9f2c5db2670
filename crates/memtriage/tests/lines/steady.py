# A large working set taken once, then steady work on it: nothing leaks. The steady
# part lasts at least three times as long as taking the working set did, so that on a
# starved machine (where the one call takes seconds) the run is still mostly steady.
import time

import numpy as np

began = time.monotonic()
data = np.ones((600 << 20) // 8)  # WORKING SET
steady_for = max(2.0, 3 * (time.monotonic() - began))
total = 0.0
until = time.monotonic() + steady_for
while time.monotonic() < until:
    total += float(data[:: 4096].sum())
    scratch = np.empty(1 << 16)
    time.sleep(0.05)
print("finished", flush=True)
