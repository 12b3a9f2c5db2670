#!/usr/bin/env python3
"""Diagnosis accuracy on the real-world corpus (corpus/), per class, as users get it.

Runs every excerpt through the artefacts users install, not the test build:

  binary  target/release/memtriage explain FILE --json
  wheel   memtriage.explain(bytes)     (the installed wheel; skipped with --no-wheel)

and prints the confusion table (recall and precision per class) for each. The verdict
on an excerpt is the first finding that claims a failure (warn or error, or the info of
a SIGKILL of unknown cause), else `healthy`; it is right when it is the label or one of
the index's `also` classes. With --check it exits 1 when a class is under 95% and not
listed in corpus/known-gaps.tsv (or under its floor there), when a healthy log gives a
warn or error finding, or when the binary and the wheel disagree on any excerpt.

  python3 bench/diagnosis_accuracy.py            # table for the binary and the wheel
  python3 bench/diagnosis_accuracy.py --check    # as test.sh runs it
  python3 bench/diagnosis_accuracy.py --batch corpus/unseen/2026-11-28 --split train
                                                 # a batch kept outside the corpus, one split

A batch's `set-aside` split is scored once, when the rules written from its `train`
split are done: that first figure is the one to report (see the batch's README).
"""

import argparse
import collections
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "corpus")
FLOOR = 0.95


def load_index(batch=None, split=None):
    """The excerpts, each with `path`: the corpus's, or a batch's (one split or all)."""
    if batch:
        paths, base = [os.path.join(batch, "index.jsonl")], batch
    else:
        paths, base = sorted(glob.glob(os.path.join(CORPUS, "index", "*.jsonl"))), CORPUS
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    e = json.loads(line)
                    if split is None or e.get("split") == split:
                        e["path"] = os.path.join(base, e["file"])
                        out.append(e)
    return out


def load_gaps():
    gaps = {}
    path = os.path.join(CORPUS, "known-gaps.tsv")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            if line.startswith("#") or not line.strip():
                continue
            name, recall, precision = line.split("\t")[:3]
            gaps[name] = (float(recall), float(precision))
    return gaps


def class_of(finding_id):
    # Finding ids of log classes are `log.<class in kebab case>`.
    return finding_id[len("log."):].replace("-", "_") if finding_id.startswith("log.") else finding_id


def verdict_finding(findings):
    """The finding that gives the verdict: the first that claims a failure."""
    for f in findings:
        if f["severity"] in ("warn", "error") or class_of(f["id"]) == "sigkill":
            return f
    return None


def verdict(findings):
    f = verdict_finding(findings)
    return class_of(f["id"]) if f else "healthy"


def binary_findings(binary, path):
    out = subprocess.run([binary, "explain", path, "--json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{binary} explain {path}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)["findings"]


def wheel_findings(memtriage, path):
    with open(path, "rb") as f:
        return memtriage.explain(f.read(), source=os.path.basename(path)).to_dict()["findings"]


def evaluate(name, excerpts, findings_of, gaps):
    confusion = collections.defaultdict(collections.Counter)
    # Per certainty of the verdict's finding: how many verdicts, how many right.
    calibration = collections.defaultdict(lambda: [0, 0])
    alarms, problems, verdicts = [], [], {}
    for e in excerpts:
        findings = findings_of(e["path"])
        got = verdict(findings)
        verdicts[e["file"]] = got
        right = got == e["class"] or got in e.get("also", [])
        confusion[e["class"]][e["class"] if right else got] += 1
        said = verdict_finding(findings)
        if said is not None:
            calibration[said["certainty"]][0] += 1
            calibration[said["certainty"]][1] += right
        if e["class"] == "healthy":
            alarms += [f"{e['file']}: {f['id']}" for f in findings if f["severity"] in ("warn", "error")]
    classes = sorted(set(confusion) | {c for v in confusion.values() for c in v})
    print(f"\n{name}: {len(excerpts)} excerpts")
    print(f"{'class':<28} {'n':>5} {'hit':>5} {'said':>5} {'recall':>7} {'precision':>9}")
    for c in classes:
        n = sum(confusion[c].values())
        hit = confusion[c][c]
        said = sum(v[c] for v in confusion.values())
        recall = hit / n if n else 1.0
        precision = hit / said if said else 1.0
        mark = ""
        floor = gaps.get(c)
        if floor is None and (recall < FLOOR or precision < FLOOR):
            problems.append(f"{c} under {FLOOR}")
            mark = "  <- under 95%"
        elif floor is not None:
            mark = "  (known gap)"
            if recall + 0.005 < floor[0] or precision + 0.005 < floor[1]:
                problems.append(f"{c} under its floor {floor}")
        print(f"{c:<28} {n:>5} {hit:>5} {said:>5} {recall * 100:>6.1f}% {precision * 100:>8.1f}%{mark}")
    total = sum(sum(v.values()) for v in confusion.values())
    right = sum(v[c] for c, v in confusion.items())
    print(f"overall: {right}/{total} right ({right / total * 100:.1f}%)")
    print_calibration(calibration)
    if alarms:
        problems.append("healthy logs raised alarms: " + ", ".join(alarms))
    return verdicts, problems


def print_calibration(calibration):
    """How often a verdict of each certainty is right: `confirmed` must be nearly always,
    `possible` may be wrong often (it never warns on its own)."""
    print(f"{'certainty of the verdict':<28} {'said':>5} {'right':>5} {'%':>7}")
    for certainty in ("confirmed", "likely", "possible"):
        said, right = calibration.get(certainty, (0, 0))
        pct = f"{right / said * 100:6.1f}%" if said else "     -"
        print(f"{certainty:<28} {said:>5} {right:>5} {pct}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "memtriage"))
    ap.add_argument("--no-wheel", action="store_true", help="only the binary")
    ap.add_argument("--check", action="store_true", help="exit 1 on a class under its floor")
    ap.add_argument("--batch", help="a batch directory with its own index.jsonl (corpus/unseen/...)")
    ap.add_argument("--split", help="only the excerpts of this split of the batch (train, set-aside)")
    ap.add_argument("--misses", action="store_true", help="list each excerpt scored wrong")
    args = ap.parse_args()
    if not os.access(args.binary, os.X_OK):
        raise SystemExit(f"{args.binary}: not built (cargo build --release -p memtriage)")
    excerpts = load_index(args.batch, args.split)
    gaps = load_gaps()
    problems = []
    by_binary, p = evaluate(f"release binary ({args.binary})", excerpts, lambda f: binary_findings(args.binary, f), gaps)
    problems += p
    if args.misses:
        for e in excerpts:
            got = by_binary[e["file"]]
            if got != e["class"] and got not in e.get("also", []):
                print(f"  miss: {e['file']}: {e['class']}, said {got}  ({e['source']})")
    if not args.no_wheel:
        import memtriage

        by_wheel, p = evaluate(f"wheel (memtriage {memtriage.__version__})", excerpts, lambda f: wheel_findings(memtriage, f), gaps)
        problems += p
        differ = [f for f in by_binary if by_binary[f] != by_wheel.get(f)]
        if differ:
            problems.append("the binary and the wheel disagree on: " + ", ".join(differ))
    for p in problems:
        print("FAIL:", p)
    if args.check and problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
