#!/usr/bin/env bash
# Data flows one way in the engine: parse -> probe -> model -> diagnose -> render
# (docs in /work/shared/DESIGN.md and the README's layout). This fails when a lower
# layer names a higher one:
#   parse/, probe/, model/  must not name diagnose, supervise or pagecache;
#   parse/                  must not name probe (parsers are pure: no I/O);
#   model/                  must not name probe or parse (plain data, depends on nothing).
# It reads paths, not meaning: `crate::X`, `crate::{..., X, ...}` (also over several
# lines) and `super::...::X` in code and in doc links alike.
set -euo pipefail
cd "$(dirname "$0")/.."
src=crates/memtriage-core/src

failed=0

# check DIR "mod1|mod2" WHY
check() {
  local dir=$1 forbidden=$2 why=$3
  [ -d "$src/$dir" ] || { echo "check-layers: $src/$dir is missing" >&2; exit 2; }
  local hits
  # `crate::X` and `super::X`, `super::super::X`, ... one line at a time.
  hits=$(grep -rnE --include='*.rs' \
    "\b(crate|super)::((super)::)*($forbidden)\b" "$src/$dir" || true)
  # Grouped imports, `crate::{a, X::b}`, which rustfmt spreads over lines: the whole
  # file is one record (-z), so the braces are matched across newlines.
  local f
  while IFS= read -r -d '' f; do
    if grep -qPz "\b(crate|super)::(super::)*\{(?:[^{}]|\{[^{}]*\})*?\b($forbidden)\b" "$f"; then
      hits+=$'\n'"$f: a grouped import names ${forbidden//|/ or }"
    fi
  done < <(find "$src/$dir" -name '*.rs' -print0)
  hits=$(printf '%s\n' "$hits" | sed '/^$/d')
  if [ -n "$hits" ]; then
    printf '%s must not depend on %s (%s):\n%s\n\n' "$dir/" "${forbidden//|/, }" "$why" "$hits" >&2
    failed=1
  fi
}

check parse "diagnose|supervise|pagecache|sampler|usecase|probe" "parsers are pure functions over bytes"
check probe "diagnose|supervise|pagecache|sampler|usecase" "a probe reads the system; it never judges"
check model "diagnose|supervise|pagecache|sampler|usecase|probe|parse" "model is plain data and depends on nothing above it"

if [ "$failed" -ne 0 ]; then
  echo "check-layers: a layer names one above it; move the code down or the call up." >&2
  exit 1
fi
echo "check-layers: parse/, probe/ and model/ name no layer above them"
