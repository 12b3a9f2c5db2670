#!/usr/bin/env bash
# The GPU paths on a real NVIDIA GPU, in one go, most wanted first (a lent machine's
# time is short; each step tees its output into OUTDIR as it goes):
#   1. `run`'s Python lines on a GPU: pinned host memory told as pinned, a GPU job's
#      host leak named by its line (test_gpu_real.py -k lines);
#   2. the cost of `run`'s hooks (lines and the CUDA snapshot) on a GPU training step,
#      and on the CPU one, side by side with memray where its wheel was carried
#      (bench/lines_bench.py --device cuda, then cpu);
#   3. the rest of the wheel's tests that need CUDA (crates/memtriage-py/tests/
#      test_gpu_real.py: inspect, run, explain_oom, serve, top);
#   4. real outputs kept as fixtures (NVML through inspect, doctor, serve's exposition,
#      top's frame, with a process holding a known 2 GiB).
#
#   bench/gpu_device_check.sh WHEEL OUTDIR [WHEELS_DIR]
#
# Needs python3 with torch and pytest, a CUDA device, target/release/memtriage for the
# bench; WHEELS_DIR holds memray's wheels for it (else the bench runs without memray).
# Changes nothing on the card.
set -uo pipefail
wheel=${1:?usage: gpu_device_check.sh WHEEL OUTDIR [WHEELS_DIR]}
out=${2:?usage: gpu_device_check.sh WHEEL OUTDIR [WHEELS_DIR]}
extra=${3:-}
mkdir -p "$out"
cd "$(dirname "$0")/.."

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,persistence_mode \
  --format=csv | tee "$out/nvidia-smi.csv"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/memtriage-site "$wheel" || exit 1
if [ -n "$extra" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/memtriage-site "$extra"/*.whl
fi
export PYTHONPATH=/tmp/memtriage-site PYTHONUNBUFFERED=1
python3 -c 'import memtriage, torch; print("memtriage", memtriage.__file__, "torch", torch.__version__)'
tests=crates/memtriage-py/tests/test_gpu_real.py

MEMTRIAGE_GPU_FIXTURES="$out/lines" timeout 150 \
  python3 -m pytest "$tests" -k "pinned or host_leak" -v -rA -p no:cacheprovider \
  2>&1 | tee "$out/pytest-lines.log"
status=${PIPESTATUS[0]}
for device in cuda cpu; do
  timeout 170 python3 bench/lines_bench.py --device $device --repeats 2 --timeout 60 \
    --only "memtriage,memtriage --no-python-lines,memray" 2>&1 | tee "$out/lines-bench-$device.txt"
done
timeout 200 python3 -m pytest "$tests" -k "not pinned and not host_leak" -v -ra -p no:cacheprovider \
  2>&1 | tee "$out/pytest.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

# Real outputs, with a process holding 2 GiB on device 0.
python3 - "$out" <<'EOF'
import json, socket, subprocess, sys, time, urllib.request
out = sys.argv[1]
code = ("import sys, torch  # memtriage-gpu-holder\n"
        "x = torch.empty(2 << 30, dtype=torch.uint8, device='cuda')\n"
        "torch.cuda.synchronize(); print('READY', flush=True); sys.stdin.read()\n")
h = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert h.stdout.readline().strip() == "READY"
def mt(*a):
    return subprocess.run([sys.executable, "-m", "memtriage", *a], capture_output=True, text=True)
open(f"{out}/inspect-holder.json", "w").write(mt("inspect", "--json", str(h.pid)).stdout)
open(f"{out}/doctor.json", "w").write(mt("doctor", "--json").stdout)
open(f"{out}/top-once.json", "w").write(mt("top", "--once", "--json", "--sort", "gpu").stdout)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
serve = subprocess.Popen([sys.executable, "-m", "memtriage", "serve", "--listen", f"127.0.0.1:{port}",
                          "--interval", "1s", "--group", "holder=memtriage-gpu-holder"],
                         stderr=subprocess.PIPE, text=True)
text = ""
for _ in range(60):
    time.sleep(1)
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except OSError:
        continue
    if 'memtriage_group_gpu_memory_bytes{group="holder"' in text:
        break
open(f"{out}/serve-metrics.txt", "w").write(text)
serve.terminate(); serve.wait(timeout=30)
open(f"{out}/serve-stderr.txt", "w").write(serve.stderr.read())
h.stdin.close(); h.wait(timeout=60)
print("\n".join(l for l in text.splitlines() if "gpu" in l or "nvml" in l))
EOF
exit "$status"
