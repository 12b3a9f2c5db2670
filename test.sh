#!/usr/bin/env bash
# The whole test suite: the Rust workspace (cargo test), then the Python package as a
# user gets it: the wheel built with maturin, installed into a venv, under pytest.
# Installs maturin and pytest with pip when they are missing. At the end, whatever the
# outcome, it prints how many tests skipped and why (under CI a skip fails instead,
# but for what no CI machine has: crates/memtriage-core/src/tests/skip.rs).
#   ./test.sh            everything
#   ./test.sh --python   the Python part only
set -euo pipefail
cd "$(dirname "$0")"

target="${CARGO_TARGET_DIR:-target}"

# Each skip, Rust's and pytest's, appends `TEST: REASON` here.
mkdir -p "$target/tmp"
MEMTRIAGE_SKIPPED_LOG="$(cd "$target/tmp" && pwd)/skipped-tests.txt"
export MEMTRIAGE_SKIPPED_LOG
: >"$MEMTRIAGE_SKIPPED_LOG"
skipped_summary() {
  local n
  n=$(wc -l <"$MEMTRIAGE_SKIPPED_LOG")
  n=$((n))
  printf '\n== skipped tests: %d ==\n' "$n"
  if [ "$n" -gt 0 ]; then
    sort "$MEMTRIAGE_SKIPPED_LOG" | sed 's/^/  /'
  fi
}
trap skipped_summary EXIT

if [ "${1:-}" != "--python" ]; then
  cargo test --workspace --locked
fi

py=python3
for mod in maturin pytest; do
  "$py" -c "import $mod" 2>/dev/null || "$py" -m pip install -q "$mod"
done

wheels="$target/py-wheels"
rm -rf "$wheels"
"$py" -m maturin build --release --locked -q -m crates/memtriage-py/Cargo.toml -o "$wheels"
wheel=$(ls "$wheels"/memtriage-*.whl)

# --system-site-packages: the tests use torch (and psutil) where they are installed.
venv="$target/py-venv"
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-index --force-reinstall "$wheel"

# The stand-in for libnvidia-ml that the GPU tests load (no GPU needed).
cargo build --locked -q -p memtriage-fake-nvml
fake_nvml="$(realpath "$target/debug/libmemtriage_fake_nvml.so")"

# pytest exits 5 when it collected no test: set -e makes that a failure too.
MEMTRIAGE_WHEEL="$(realpath "$wheel")" MEMTRIAGE_FAKE_NVML="$fake_nvml" \
  "$venv/bin/python" -m pytest crates/memtriage-py/tests -ra

# Diagnosis accuracy on the real-log corpus, through what users install: the release
# binary and the wheel (a regex feature that only dev-dependencies enabled once dropped
# a rule from the release build while the tests passed).
cargo build --release --locked -p memtriage -q
"$venv/bin/python" bench/diagnosis_accuracy.py --check --binary "$target/release/memtriage"
# The same excerpts rewritten the ways logs change on their way to a user (wrapped,
# quoted, prefixed, another case, placeholders): no healthy log's variant may raise an
# alarm, and at least the floor of excerpts must hold under every variant.
"$venv/bin/python" bench/metamorphic.py --check 0.99 --binary "$target/release/memtriage"
