#!/usr/bin/env bash
# Coverage-guided fuzzing of every target under libFuzzer, SECONDS each (default 60).
# Needs a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz); without them it
# says so and exits 0, since `cargo test` replays every kept input on any toolchain.
# What fuzzing keeps goes to fuzz/corpus/TARGET; a failing input to
# fuzz/artifacts/TARGET (commit it: the replay test then keeps it fixed).
#
#   fuzz/run.sh            # each target for 60 s
#   fuzz/run.sh 3600 logs  # one target for an hour
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: no nightly toolchain here; skipped (cargo test replays the kept inputs)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz is not installed (cargo install cargo-fuzz); skipped"
    exit 0
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(proc system kmsg safetensors proc_connector record logs pickle windump)
fi
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    seeds=()
    while read -r target dir; do
        [ "$target" = "$t" ] && seeds+=("../$dir")
    done < <(grep -v '^#' seeds.txt)
    echo "fuzz: $t for ${seconds}s (full output: fuzz/target/fuzz-$t.log)"
    mkdir -p target
    status=0
    cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$seconds" -artifact_prefix="artifacts/$t/" -max_len=65536 \
        -rss_limit_mb=2048 -print_final_stats=1 >"target/fuzz-$t.log" 2>&1 || status=$?
    # The stats, or the failure: the panic message and the input that caused it.
    grep -E "^(Done|stat::)|panicked|assertion|left:|right:|cut at|Test unit written|SUMMARY" \
        "target/fuzz-$t.log" | head -n 20
    [ "$status" -eq 0 ] || exit "$status"
done
