#!/usr/bin/env python3
"""Paired ratios of `benches/turns.sh` runs: each run of this build divided by the run of the
build before (BEFORE=) made next to it, so load that moves over the set cancels out.

    KEEP=1 BEFORE=/path/to/older/cn-run benches/turns.sh   # prints "kept in DIR"
    python3 benches/lib/paired_turns.py DIR/bash100k.jsonl [DIR/mixed100k.jsonl ...]

Per setting (as shipped, `off`): the median over runs of the mean turn, of turns 3 onward
(after the first scan), of the second turn and of the wall time, for each build, and the
median and range of the paired ratios (this / before)."""
import json
import statistics
import sys


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


FIGURES = {
    "mean turn": lambda r: mean(r["turns"]),
    "turns 3+": lambda r: mean(r["turns"][2:]),
    "turn 2": lambda r: r["turns"][1] if len(r["turns"]) > 1 else float("nan"),
    "wall": lambda r: r["wall"],
}


def report(path):
    runs = [json.loads(line) for line in open(path)]
    runs = [r for r in runs if r["status"] == 0 and r["turns"]]
    builds = list(dict.fromkeys(r["label"].split("|")[0] for r in runs))
    print(f"== {path}")
    if len(builds) != 2:
        print("  needs runs of two builds (BEFORE=)")
        return
    for mode in dict.fromkeys(r["label"].split("|")[1] for r in runs):
        this, before = ([r for r in runs if r["label"] == f"{b}|{mode}"] for b in builds)
        n = min(len(this), len(before))
        loads = [r["load"] for r in this[:n] + before[:n]]
        print(f"  {mode}: {n} pairs, load {min(loads):.1f}-{max(loads):.1f}")
        for name, figure in FIGURES.items():
            a, b = [figure(r) for r in this[:n]], [figure(r) for r in before[:n]]
            ratios = [x / y for x, y in zip(a, b) if y]
            print(f"    {name:9} this {statistics.median(a):8.1f} ms, before {statistics.median(b):8.1f} ms,"
                  f" ratio x{statistics.median(ratios):.3f} (x{min(ratios):.3f}-x{max(ratios):.3f})")


for arg in sys.argv[1:]:
    report(arg)
