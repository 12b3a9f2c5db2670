#!/usr/bin/env python3
"""Choose the anchors of explain's prefilter for the current rule table.

explain finds candidate lines by searching every byte of a log for short anchors
(SIMD, 80 anchors per pass), then checking the rule literals an anchor stands for
where it is found. Fewer anchors mean fewer passes; anchors that healthy text rarely
holds mean fewer checks. This picks, greedily, the substrings of the rule literals
(4 to 16 bytes) that cover the most literals not yet covered per unit of cost, where
the cost of an anchor grows with how often it occurs in healthy text:

  - the healthy logs of the corpus (corpus/healthy: real jobs, and prose that talks
    about memory), and
  - a synthetic training log (bench/explain_bench.py's generator, failures removed).

The search runs over the text in ASCII lower case (rules match in any case), so
literals, anchors and the healthy text are all folded before counting.

It writes crates/memtriage-core/src/diagnose/logs/anchors.json in the order chosen
(the engine gives each literal the first anchor it holds), and teddy_layout.json:
the anchors in the order that shares Teddy's buckets best (see layout()). It prints what
that layout costs beside the committed one's and exits with status 3 (files written) when
it costs more than --layout-tolerance more: the cost that moved explain's time. Run it after adding rules
when the engine's test `the_prefilter_takes_two_passes` fails:

  cargo build --release -p memtriage && python3 bench/prefilter_anchors.py   (needs numpy)
"""

import argparse
import collections
import glob
import heapq
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import explain_bench  # noqa: E402

LOGS = os.path.join(ROOT, "crates", "memtriage-core", "src", "diagnose", "logs")
OUT = os.path.join(LOGS, "anchors.json")
LAYOUT_OUT = os.path.join(LOGS, "teddy_layout.json")
MIN_LEN, MAX_LEN = 4, 16
SYNTHETIC_BYTES = 4_000_000


def rule_literals(binary):
    table = json.loads(subprocess.check_output([binary, "explain", "--rules", "--json"]))
    literals = sorted({fold(lit) for rule in table["rules"] for lit in rule["literals"]})
    # A literal that holds another is found wherever that one is.
    return [lit for lit in literals if not any(o != lit and o in lit for o in literals)]


def fold(text):
    """ASCII lower case, as the engine folds a region before its prefilter."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def healthy_samples():
    real = "".join(
        open(p, encoding="utf-8", errors="replace").read()
        for p in sorted(glob.glob(os.path.join(ROOT, "corpus", "healthy", "*.log")))
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.log")
        explain_bench.generate(path, SYNTHETIC_BYTES, seed=3)
        synthetic = open(path, encoding="utf-8", errors="replace").read()
    for failure in explain_bench.FAILURES:
        synthetic = synthetic.replace(failure, "")
    return fold(real), fold(synthetic)


def substrings(literal):
    raw = literal.encode()
    out = set()
    for start in range(len(raw)):
        for end in range(start + MIN_LEN, min(len(raw), start + MAX_LEN) + 1):
            try:
                out.add(raw[start:end].decode())
            except UnicodeDecodeError:
                continue  # not cut where characters begin
    return out


def cover(literals):
    covers = collections.defaultdict(set)
    for i, lit in enumerate(literals):
        for sub in substrings(lit):
            covers[sub].add(i)
    return covers


# What a place where an anchor's first bytes occur costs beside one where the whole
# anchor does: the SIMD search stops there too (it tells candidates by their first
# three bytes) and compares the anchor, but checks no literal.
PREFIX_FACTOR = 0.1


def costs(covers, real, synthetic, synthetic_weight):
    """Per anchor: its occurrences per MB of healthy text (each one found is checked
    against its literals), and a tenth of its first three bytes' (each is a candidate
    the search must compare). The synthetic log is weighted up: a training loop prints
    the same lines millions of times."""
    per_mb = {}

    def occurrences(text):
        if text not in per_mb:
            n = real.count(text) / len(real) * 1e6
            n += synthetic_weight * synthetic.count(text) / len(synthetic) * 1e6
            per_mb[text] = n
        return per_mb[text]

    out = {}
    for sub in covers:
        out[sub] = occurrences(sub) + PREFIX_FACTOR * occurrences(sub.encode()[:3].decode(errors="ignore") or sub)
    return out


# How often per MB of the training log an anchor's first three bytes may occur: the
# SIMD search stops at each to compare (`los` of `loss` on every line stopped it at
# `lost`, `allo` of `allocated` at each step), so such an anchor costs more than
# the several rarer ones that could stand in for it.
BUSY_PREFIX_PER_MB = 5000


def without_busy_prefixes(covers, synthetic, n_literals):
    """The candidate anchors less those whose first three bytes a training log holds
    on most lines, unless a literal has no other."""
    per_mb = {}

    def busy(sub):
        head = sub.encode()[:3].decode(errors="ignore") or sub
        if head not in per_mb:
            per_mb[head] = synthetic.count(head) / len(synthetic) * 1e6
        return per_mb[head] > BUSY_PREFIX_PER_MB

    quiet = {s: c for s, c in covers.items() if not busy(s)}
    covered = set().union(*quiet.values()) if quiet else set()
    for s, c in covers.items():
        if c - covered:
            quiet[s] = c
    return quiet


class _Descending:
    """A string that sorts in reverse, so a min-heap breaks ties as max() did."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __lt__(self, other):
        return self.text > other.text

    def __eq__(self, other):
        return self.text == other.text


def choose(covers, occurrences, n_literals, weight):
    """Greedy weighted set cover, then anchors left redundant by later ones dropped.

    Each place healthy text holds an anchor, every literal the anchor stands for is
    compared there: an anchor's cost grows with its occurrences times the literals it
    takes (one common anchor standing for 72 literals made explain 10% slower)."""
    cost = {s: 1 + weight * occurrences[s] for s in covers}

    def gain_of(s, k):
        return k / (1 + weight * occurrences[s] * k)

    uncovered = set(range(n_literals))
    chosen = []
    # Lazy greedy: a substring's gain only falls as literals get covered, so the best
    # is found by refreshing the heap's top until it stays on top (the same choice as
    # taking the max over all of them each round, far fewer gains computed).
    heap = [(-gain_of(s, len(c)), -len(s), _Descending(s)) for s, c in covers.items()]
    heapq.heapify(heap)
    while uncovered and heap:
        _, neg_len, key = heapq.heappop(heap)
        gain = gain_of(key.text, len(covers[key.text] & uncovered))
        if gain == 0:
            continue
        entry = (-gain, neg_len, key)
        if heap and heap[0] < entry:
            heapq.heappush(heap, entry)
            continue
        chosen.append(key.text)
        uncovered -= covers[key.text]
    for anchor in sorted(chosen, key=lambda s: -cost[s]):
        others = set().union(*(covers[o] for o in chosen if o != anchor))
        if covers[anchor] <= others:
            chosen.remove(anchor)
    return chosen


# Teddy (the SIMD search) puts a group's anchors in 16 buckets by their place in the
# group, and tells candidates by a bucket's first four bytes, nibble by nibble: every
# place healthy text fits a bucket's fingerprint, each of the bucket's anchors is
# compared. Which anchors share a bucket changed explain's time by a tenth.
TEDDY_BUCKETS = 16
GROUP_LIMIT = 80  # the engine's prefilter::GROUP_LIMIT
FINGERPRINT = 4


def window_weights(real, synthetic, synthetic_weight):
    """Each four-byte window of the healthy text, and its occurrences per MB (the
    synthetic log weighted as in costs())."""
    import numpy as np

    codes, weights = [], []
    for text, weight in ((real, 1.0), (synthetic, synthetic_weight)):
        raw = np.frombuffer(text.encode(), dtype=np.uint8).astype(np.uint32)
        if len(raw) < FINGERPRINT:
            continue
        code = raw[:-3] | raw[1:-2] << 8 | raw[2:-1] << 16 | raw[3:] << 24
        unique, counts = np.unique(code, return_counts=True)
        codes.append(unique)
        weights.append(counts * (weight / len(raw) * 1e6))
    codes = np.concatenate(codes)
    weights = np.concatenate(weights)
    unique, inverse = np.unique(codes, return_inverse=True)
    summed = np.bincount(inverse, weights=weights)
    columns = [(unique >> (8 * k)) & 0xFF for k in range(FINGERPRINT)]
    return columns, summed


def buckets_of(group):
    """Teddy's buckets for a group's anchors, in its order (aho-corasick 1.1: the
    first anchor of each low-nibble prefix takes bucket 15 - id % 16, later ones
    with that prefix join it)."""
    by_prefix, buckets = {}, [[] for _ in range(TEDDY_BUCKETS)]
    for i, anchor in enumerate(group):
        prefix = tuple(b & 0xF for b in anchor.encode()[:FINGERPRINT])
        if prefix not in by_prefix:
            by_prefix[prefix] = TEDDY_BUCKETS - 1 - i % TEDDY_BUCKETS
        buckets[by_prefix[prefix]].append(anchor)
    return buckets


class BucketCost:
    """What a bucket costs per MB of healthy text: the places its fingerprint fits,
    times the anchors compared at each."""

    def __init__(self, columns, weights):
        import numpy as np

        self.np = np
        self.lo = [c & 0xF for c in columns]
        self.hi = [c >> 4 for c in columns]
        self.weights = weights
        self.memo = {}

    def __call__(self, bucket):
        key = tuple(sorted(bucket))
        if not key:
            return 0.0
        if key not in self.memo:
            np = self.np
            fits = np.ones(len(self.weights), dtype=bool)
            for k in range(FINGERPRINT):
                lo, hi = np.zeros(16, dtype=bool), np.zeros(16, dtype=bool)
                for anchor in key:
                    b = anchor.encode()[k]
                    lo[b & 0xF] = hi[b >> 4] = True
                fits &= lo[self.lo[k]] & hi[self.hi[k]]
            self.memo[key] = float(self.weights[fits].sum()) * len(key)
        return self.memo[key]


def layout(anchors, real, synthetic, synthetic_weight, rounds, seed=7):
    """The anchors in the order that leaves Teddy the fewest candidates to compare
    on healthy text: the committed order, new anchors in the places of those gone,
    then `rounds` swaps that lower the estimated cost, tried at random (the order
    only sets buckets; which literals an anchor stands for stays with anchors.json's
    preference). The estimate does not always hold on a real log: 12000 swaps that
    lowered it by a tenth made explain 6% slower on the benchmark's log, so swaps
    are asked for, and measured."""
    import random

    cost = BucketCost(*window_weights(real, synthetic, synthetic_weight))
    order = [a for a in anchors if len(a.encode()) >= FINGERPRINT]
    short = [a for a in anchors if len(a.encode()) < FINGERPRINT]

    def group_cost(group):
        return sum(cost(b) for b in buckets_of(group))

    def groups(order):
        return [order[i : i + GROUP_LIMIT] for i in range(0, len(order), GROUP_LIMIT)]

    rng = random.Random(seed)
    committed_order = committed_layout()
    committed = None if committed_order is None else sum(group_cost(g) for g in groups(committed_order))
    # Start from the committed layout, the new anchors after it: the random swaps
    # then improve on it instead of searching again from the preference order.
    if committed_order is not None:
        order = in_committed_places(committed_order, order)
    per_group = [group_cost(g) for g in groups(order)]
    before = sum(per_group)
    for _ in range(rounds):
        i, j = rng.randrange(len(order)), rng.randrange(len(order))
        if i == j:
            continue
        order[i], order[j] = order[j], order[i]
        touched = {i // GROUP_LIMIT, j // GROUP_LIMIT}
        trial = {g: group_cost(groups(order)[g]) for g in touched}
        if sum(trial.values()) < sum(per_group[g] for g in touched):
            for g, c in trial.items():
                per_group[g] = c
        else:
            order[i], order[j] = order[j], order[i]
    after = sum(per_group)
    print(f"Teddy layout: {before:.0f} -> {after:.0f} anchor compares per MB of healthy text")
    return order + short, committed, after


def in_committed_places(committed, anchors):
    """`anchors` in the committed layout's order: each kept in its place, a new one
    in the place of an anchor that is gone (so no anchor after it changes bucket),
    the rest after them."""
    wanted, placed = set(anchors), set(committed)
    new = [a for a in anchors if a not in placed]
    order = []
    for a in committed:
        if a in wanted:
            order.append(a)
        elif new:
            order.append(new.pop(0))
    return order + new


def committed_layout():
    """The layout in the repository (None without one), its anchors of four bytes or
    more: what a new layout starts from, and what its cost must not exceed by much,
    since the compares are most of explain's time on a long log."""
    # HEAD's, not the file's: a second run would compare with the first's output.
    path = os.path.relpath(LAYOUT_OUT, ROOT)
    shown = subprocess.run(["git", "-C", ROOT, "show", f"HEAD:{path}"], capture_output=True, text=True)
    if shown.returncode != 0:
        return None
    try:
        committed = [a for a in json.loads(shown.stdout) if len(a.encode()) >= FINGERPRINT]
    except ValueError:
        return None
    return committed


def layout_rise(committed, after, tolerance):
    """Says how the new layout's cost compares with the committed one, and whether
    it rose past the tolerance (a fraction)."""
    if committed is None:
        print("no committed layout to compare with")
        return False
    change = (after - committed) / committed
    print(f"against the committed layout: {committed:.0f} -> {after:.0f} anchor compares per MB ({change:+.1%})")
    if change > tolerance:
        print(
            f"the layout costs {change:.1%} more than the committed one (tolerance {tolerance:.0%}): "
            "a new anchor that healthy text often fits, or one that broke a shared bucket; "
            "measure explain (bench/explain_bench.py or callgrind) before committing it",
            file=sys.stderr,
        )
        return True
    return False


def stood_under(chosen, literals):
    """The anchors some literal stands under: its first in `chosen` (as the engine
    gives them)."""
    used = []
    for lit in literals:
        anchor = next((a for a in chosen if a in lit), None)
        if anchor is not None and anchor not in used:
            used.append(anchor)
    return [a for a in chosen if a in used]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "memtriage"))
    ap.add_argument("--budget", type=int, default=2 * GROUP_LIMIT, help=f"most anchors ({GROUP_LIMIT} per SIMD pass; default two passes)")
    ap.add_argument("--synthetic-weight", type=float, default=100.0)
    ap.add_argument(
        "--layout-rounds",
        type=int,
        default=0,
        help="random swaps tried on the layout after the committed order (default 0: measure explain before keeping a searched layout)",
    )
    ap.add_argument(
        "--layout-tolerance",
        type=float,
        default=0.02,
        help="the rise of the layout's compares over the committed layout's that exits with status 3 (default 0.02)",
    )
    args = ap.parse_args()
    literals = rule_literals(args.binary)
    # A literal shorter than an anchor is its own (the engine does the same).
    short = [lit for lit in literals if len(lit.encode()) < MIN_LEN]
    literals = [lit for lit in literals if len(lit.encode()) >= MIN_LEN]
    real, synthetic = healthy_samples()
    covers = without_busy_prefixes(cover(literals), synthetic, len(literals))
    occurrences = costs(covers, real, synthetic, args.synthetic_weight)
    # The most weight on rarity that still fits the budget.
    for weight in (0.003, 0.002, 0.0015, 0.001, 0.0007, 0.0005, 0.0003, 0.0002, 0.0001, 0.00005, 0.00002, 0.00001, 0.000005, 0.000002, 0.000001, 0.0):
        chosen = short + choose(covers, occurrences, len(literals), weight)
        if len(chosen) <= args.budget:
            break
    print(f"weight {weight}: {sum(occurrences.get(a, 0) for a in chosen):.0f} occurrences per MB of healthy text")
    placed, committed, after = layout(stood_under(chosen, short + literals), real, synthetic, args.synthetic_weight, args.layout_rounds)
    for path, anchors in ((OUT, chosen), (LAYOUT_OUT, placed)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(anchors, f, ensure_ascii=False, indent=0)
            f.write("\n")
    print(f"{len(chosen)} anchors for {len(literals)} literals -> {os.path.relpath(OUT, ROOT)}, {os.path.relpath(LAYOUT_OUT, ROOT)}")
    if layout_rise(committed, after, args.layout_tolerance):
        sys.exit(3)


if __name__ == "__main__":
    main()
