#!/usr/bin/env python3
"""How often `explain` names the culprit a kernel crash's source concludes
(corpus/kernel-crashes/: Linux oopses and Windows bug checks pasted as text).

A Linux excerpt is right when the kernel-oops finding's `suspect` evidence names the
module the source blames (or built-in code, where the source blames the kernel); a
Windows excerpt when the bug check finding's title or suspect names the driver (any
finding, where the source names none). Through the release binary, one split:

  python3 bench/kernel_crash_culprits.py --split train
  python3 bench/kernel_crash_culprits.py --split set-aside   # scored once, see the README
"""

import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "corpus", "kernel-crashes")


def findings(binary, path):
    out = subprocess.run([binary, "explain", path, "--json"], capture_output=True, text=True)
    return json.loads(out.stdout)["findings"] if out.returncode == 0 else []


def is_linux(e):
    """A Linux crash: by its form, or an `other` form whose culprit is no Windows image."""
    return e["form"].startswith("linux") or (e["form"] == "other" and not e.get("bugcheck"))


def named(e, found):
    # The culprit's name, without the collector's gloss (`spl (zfs)`, `HyperHide driver`).
    culprit = e["culprit"].lower().split(" (")[0].split()[0]
    if is_linux(e):
        f = next((f for f in found if f["id"] == "log.kernel-oops"), None)
        suspect = next((v["value"] for v in (f or {}).get("evidence", []) if v["label"] == "suspect"), "")
        if e["culprit_kind"] == "kernel":
            return suspect.startswith("built-in")
        return bool(suspect) and culprit in suspect.lower()
    f = next((f for f in found if f["id"] == "log.windows-memory-fault"), None)
    if f is None:
        return False
    text = " ".join([f["title"]] + [v["value"] for v in f["evidence"] if v["label"] == "suspect"])
    return culprit == "unknown" or culprit in text.lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "memtriage"))
    ap.add_argument("--split", default="train")
    ap.add_argument("--batch", type=int, help="only this batch (1: the first, 2: the second)")
    args = ap.parse_args()
    tally = {"linux": [0, 0], "windows": [0, 0]}
    for line in open(os.path.join(CORPUS, "index.jsonl"), encoding="utf-8"):
        e = json.loads(line)
        if e["split"] != args.split or (args.batch and e.get("batch", 1) != args.batch):
            continue
        kind = "linux" if is_linux(e) else "windows"
        ok = named(e, findings(args.binary, os.path.join(CORPUS, e["file"])))
        tally[kind][0] += ok
        tally[kind][1] += 1
        print(("ok   " if ok else "miss ") + f"{e['file']}: {e['culprit']} ({e['form']})")
    for kind, (right, total) in tally.items():
        print(f"{kind}: culprit named in {right} of {total}")


if __name__ == "__main__":
    main()
