#!/usr/bin/env bash
# Size limits (issue 25): no .rs file under crates/ or fuzz/ over 900 lines, and no
# `fn` over 150 lines, tests included.
#
# What it counts:
#   - a file's size is its number of lines (`wc -l`);
#   - a function's size is the lines from the one holding its `fn NAME` to the one
#     holding the `}` that closes its body, both included (attributes and doc comments
#     above it are not counted). Bodies are found by counting braces, after string,
#     raw-string, char literals and comments are blanked out; `fn(..)` pointer types and
#     bodiless trait items (`fn f();`) are not functions. A nested `fn` is counted on
#     its own and also inside the function that holds it; closures are part of theirs.
#
# There are no exceptions: split what grows past a limit into the steps a reader can
# name.
#
# The scan is Python (python3, which .ci/run's tools step installs); the file list
# and the limits are here.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_FILE_LINES=900
MAX_FN_LINES=150

scan=$(cat <<'PY'
import re
import sys

max_file, max_fn = int(sys.argv[1]), int(sys.argv[2])
paths = sorted(p for p in sys.stdin.read().split("\0") if p)


def blank(src):
    """The source with comments and string/char literals replaced by spaces
    (newlines kept), so braces and `fn` are only code's."""
    out, i, n = [], 0, len(src)

    def keep_newlines(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_newlines(src[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(src, i)) and (
            i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")
        ):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', '{') or a lifetime ('a).
            m = re.compile(r"'(\\(u\{[0-9a-fA-F]*\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", re.S).match(src, i)
            if m:
                out.append(keep_newlines(m.group(0)))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


fn_re = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
failed = []
for path in paths:
    with open(path, encoding="utf-8") as f:
        src = f.read()
    lines = src.count("\n") + (0 if src.endswith("\n") or not src else 1)
    if lines > max_file:
        failed.append((path, f"{path}: {lines} lines (limit {max_file})"))
    code = blank(src)
    line_at = [0] * (len(code) + 1)
    ln = 1
    for k, ch in enumerate(code):
        line_at[k] = ln
        if ch == "\n":
            ln += 1
    line_at[len(code)] = ln
    for m in fn_re.finditer(code):
        # The body opens at the first `{` outside (), [] and <> of the signature;
        # a `;` there first means a bodiless declaration.
        j, nest = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in "([":
                nest += 1
            elif ch in ")]":
                nest -= 1
            elif nest == 0 and ch in "{;":
                break
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        depth, k = 0, j
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        start, end = line_at[m.start()], line_at[min(k, len(code))]
        size = end - start + 1
        if size > max_fn:
            failed.append(
                (path, f"{path}:{start}: fn {m.group(1)} is {size} lines (limit {max_fn})")
            )

bad = [msg for _, msg in failed]
for msg in bad:
    print(msg, file=sys.stderr)
if bad:
    print(
        f"check-sizes: {len(bad)} over the limits; split them into steps a reader can name",
        file=sys.stderr,
    )
    sys.exit(1)
print(f"check-sizes: {len(paths)} files, none over {max_file} lines or with a fn over {max_fn}")
PY
)

find crates fuzz -name '*.rs' -not -path '*/target/*' -print0 |
  python3 -c "$scan" "$MAX_FILE_LINES" "$MAX_FN_LINES"
