# 300 forked children that live a few milliseconds each; the parent closes its own
# stdio first. argv[1]: where the parent writes the hook's directory.
import os
import sys
import time

with open(sys.argv[1], "w") as f:
    f.write(os.environ.get("PYTHONPATH", "").split(":")[0])
for fd in (0, 1, 2):
    os.close(fd)
children = []
for i in range(300):
    pid = os.fork()
    if pid == 0:
        block = bytearray(1 << 20)
        time.sleep(0.005)
        os._exit(0 if block else 1)
    children.append(pid)
failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
sys.exit(1 if failed else 0)
