#!/usr/bin/env python3
"""Check that the fleet kit only queries metrics `memtriage serve` exports.

    check_kit.py --list
    curl -s localhost:9947/metrics > expo.txt; check_kit.py --exposition expo.txt

Collects every `memtriage_*` name in the dashboard's `expr` (and variable
query) fields and in the rules file's `expr:` fields. With --exposition, exits 1
listing the names absent from it. A name counts as present when it has a sample
or a HELP/TYPE line: a figure memtriage could not read is absent, so on a host
without a GPU, a watched file or a cgroup limit those families may be missing
for good reason; scrape a host that has them, or read the list with that in mind.
Stdlib only (no PyYAML): the rules file is read line by line.
"""
import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DASHBOARD = HERE / "grafana" / "memtriage-dashboard.json"
RULES = HERE / "prometheus" / "memtriage-rules.yml"
NAME = re.compile(r"\bmemtriage_[A-Za-z0-9_:]*")


def dashboard_exprs(path):
    """`expr` strings anywhere in the dashboard, plus template variable queries."""
    found = []

    def walk(node, key=None):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in ("expr", "query", "definition"):
            found.append(node)

    walk(json.loads(path.read_text()))
    return found


def rules_exprs(path):
    """`expr:` values, inline or as a `|`/`>` block (lines indented deeper)."""
    found, block, indent = [], None, 0
    for line in path.read_text().splitlines():
        if block is not None:
            depth = len(line) - len(line.lstrip())
            if line.strip() and depth <= indent:
                found.append("\n".join(block))
                block = None
            else:
                block.append(line)
                continue
        m = re.match(r"^(\s*)(?:-\s+)?expr:\s*(.*)$", line)
        if not m:
            continue
        value = m.group(2).split(" #")[0].strip()
        if value[:1] in ("|", ">"):
            block, indent = [], len(m.group(1))
        else:
            found.append(value)
    if block is not None:
        found.append("\n".join(block))
    return found


def exposition_names(path):
    names = set()
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "#":
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                names.add(parts[2])
                # OpenMetrics names a counter family without its _total suffix.
                if parts[1] == "TYPE" and parts[3:4] == ["counter"]:
                    names.add(parts[2] + "_total")
            continue
        names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exposition", type=Path, help="Prometheus text exposition from the exporter")
    ap.add_argument("--list", action="store_true", help="print the referenced names")
    ap.add_argument("--dashboard", type=Path, default=DASHBOARD)
    ap.add_argument("--rules", type=Path, default=RULES)
    args = ap.parse_args()
    if not (args.list or args.exposition):
        ap.error("give --list and/or --exposition FILE")

    used = {}
    for source, exprs in ((args.dashboard.name, dashboard_exprs(args.dashboard)),
                          (args.rules.name, rules_exprs(args.rules))):
        for expr in exprs:
            for name in NAME.findall(expr):
                used.setdefault(name, set()).add(source)

    if args.list:
        for name in sorted(used):
            print(f"{name}\t{', '.join(sorted(used[name]))}")
    if args.exposition:
        exported = exposition_names(args.exposition)
        missing = sorted(set(used) - exported)
        for name in missing:
            print(f"missing: {name} (used in {', '.join(sorted(used[name]))})", file=sys.stderr)
        if missing:
            return 1
        print(f"ok: all {len(used)} referenced memtriage_ names are in {args.exposition}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
