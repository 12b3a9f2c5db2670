#!/usr/bin/env python3
"""Data flows one way through the engine (DESIGN.md, the README's layout). Each
layer may name only those listed for it in ALLOWED below:

    error, model                    nothing (the error type; plain data)
    parse                           model
    probe                           parse, model
    diagnose                        parse, model (pure rules: they read nothing)
    sampler, pagecache              probe and below
    history                         probe, diagnose and below
    supervise, watch                sampler (watch: pagecache too), diagnose and below
    usecase                         any of them: the engine's API, with model
    front ends                      usecase and model (and the error type, Root)

This fails when a module names one that its layer may not: a lower layer naming a
higher one, a rule reaching for the system, or a front end (the CLI, the Python crate,
their tests, the engine's own integration tests) naming anything of the engine but
its use cases and its model. The compiler already refuses a front end's reach past
`pub(crate)`; this says why, and holds the engine's inside to the same flow.

It reads paths, not meaning: `crate::X`, `super::…::X` resolved from the file's place
in the module tree, grouped imports over several lines (`crate::{a, X::b}`), in code
and in doc links alike.
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "crates/memtriage-core/src"

LAYERS = ["error", "model", "parse", "probe", "diagnose", "sampler", "pagecache",
          "supervise", "watch", "history", "usecase", "fuzz"]

# What each layer may name besides itself. `error` is the engine's error type (the
# crate root's `Error`, `ErrorKind`, `Result`); `Root` is probe's; `fuzz` is the fuzz
# targets' bodies, a harness over the parsers and the log scanner.
ALLOWED = {
    "error": set(),
    "model": set(),
    "parse": {"model"},
    "probe": {"error", "model", "parse"},
    "diagnose": {"error", "model", "parse"},
    "sampler": {"error", "model", "parse", "probe"},
    "pagecache": {"error", "model", "parse", "probe"},
    "supervise": {"error", "model", "parse", "probe", "diagnose", "sampler"},
    "watch": {"error", "model", "parse", "probe", "diagnose", "sampler", "pagecache"},
    "history": {"error", "model", "parse", "probe", "diagnose"},
    "usecase": set(LAYERS) - {"usecase", "fuzz"},
    "fuzz": {"error", "model", "parse", "diagnose"},
}
# Names the crate root re-exports, and the layer each belongs to.
ROOT_NAMES = {"Error": "error", "ErrorKind": "error", "Result": "error", "Root": "probe"}
WHY = {
    "model": "model is plain data and depends on nothing above it",
    "parse": "parsers are pure functions over bytes",
    "probe": "a probe reads the system; it never judges",
    "diagnose": "rules are pure functions over the model: they read nothing themselves",
    "sampler": "the sampler reads and hands over samples; it never judges",
    "pagecache": "page-cache work reads and changes files, not jobs",
    "supervise": "supervising a job runs below the use cases",
    "watch": "the watch samples the machine below the use cases",
    "history": "the history stores what the watch saw, below the use cases",
    "usecase": "",
    "error": "the error type is below every layer",
    "fuzz": "the fuzz targets exercise parsers and rules, nothing that reads the system",
}

FRONT_ENDS = [
    REPO / "crates/memtriage/src",
    REPO / "crates/memtriage/tests",
    REPO / "crates/memtriage-py/src",
    REPO / "crates/memtriage-core/tests",
]
# What a front end may name: the engine's API. The libFuzzer binaries name only the
# fuzz targets' bodies.
FRONT_END_ALLOWED = {"usecase", "model", "Error", "ErrorKind", "Result", "Root"}
FUZZ_BINARIES = REPO / "fuzz/fuzz_targets"

PATH = re.compile(r"\b((?:crate|super|self)(?:::(?:super|self))*)::(\{|[A-Za-z_]\w*)")
EXTERN = re.compile(r"\bmemtriage_core::(\{|[A-Za-z_]\w*)")


def group_heads(text, start):
    """The first names of each path in the `{…}` group that opens at `start`."""
    depth, i, heads, expect = 0, start, [], True
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            expect = depth == 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            expect = True
        elif expect and (c.isalpha() or c == "_"):
            m = re.match(r"\w+", text[i:])
            heads.append(m.group(0))
            i += len(m.group(0))
            expect = False
            continue
        i += 1
    return heads


def module_path(f):
    """`src/supervise/growth/snapshot.rs` -> ["supervise", "growth", "snapshot"]."""
    parts = list(f.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return parts


def engine_names(f, text):
    """(line number, top-level module named) for each path in an engine file."""
    here = module_path(f)
    for m in PATH.finditer(text):
        steps = m.group(1).split("::")
        if steps[0] == "crate":
            base = []
        else:
            base = list(here)
            for s in steps:
                if s == "super":
                    if not base:
                        break
                    base.pop()
        if base:
            continue  # a path inside the same top-level module
        heads = group_heads(text, m.start(2)) if m.group(2) == "{" else [m.group(2)]
        line = text.count("\n", 0, m.start()) + 1
        for h in heads:
            yield line, ROOT_NAMES.get(h, h)


def check_engine():
    failures = []
    for layer in LAYERS:
        files = list((SRC / layer).rglob("*.rs")) if (SRC / layer).is_dir() else []
        if (SRC / f"{layer}.rs").is_file():
            files.append(SRC / f"{layer}.rs")
        if not files:
            failures.append(f"{SRC / layer}: missing (the layers changed? update this check)")
        for f in files:
            text = f.read_text()
            for line, name in engine_names(f, text):
                if name in LAYERS and name != layer and name not in ALLOWED[layer]:
                    failures.append(
                        f"{f.relative_to(REPO)}:{line}: {layer}/ names {name} ({WHY[layer]})")
    return failures


def check_front_ends():
    failures = []
    for f in FUZZ_BINARIES.rglob("*.rs"):
        text = f.read_text()
        for m in EXTERN.finditer(text):
            heads = group_heads(text, m.start(1)) if m.group(1) == "{" else [m.group(1)]
            for h in heads:
                if h != "fuzz":
                    line = text.count("\n", 0, m.start()) + 1
                    failures.append(f"{f.relative_to(REPO)}:{line}: names memtriage_core::{h} "
                                    "(a fuzz binary calls its target's body in memtriage_core::fuzz)")
    for top in FRONT_ENDS:
        for f in top.rglob("*.rs"):
            text = f.read_text()
            for m in EXTERN.finditer(text):
                heads = group_heads(text, m.start(1)) if m.group(1) == "{" else [m.group(1)]
                line = text.count("\n", 0, m.start()) + 1
                for h in heads:
                    if h not in FRONT_END_ALLOWED:
                        failures.append(
                            f"{f.relative_to(REPO)}:{line}: names memtriage_core::{h} "
                            "(front ends call the use cases and read the model: make what "
                            "it needs a use case or a model type)")
    return failures


def main():
    failures = check_engine() + check_front_ends()
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print("check-layers: a module names one its layer may not; move the code down "
              "or the call up.", file=sys.stderr)
        return 1
    print("check-layers: every engine layer names only those below it; front ends name "
          "only usecase and model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
