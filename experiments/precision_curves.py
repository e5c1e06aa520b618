#!/usr/bin/env python3
"""Two training runs of the same recipe side by side (e.g. bf16 against FP32).

    experiments/precision_curves.py BASE_RUN OTHER_RUN [--until 1000] [--speeds BASE_TOKS OTHER_TOKS]
                              [--targets 35 40]

A run is a run directory (docs/report.md): log.jsonl (attn train) and, when it was scored,
score/<set>.<model>.json (attn score --format json). Prints:
  - the training loss every 100 updates up to --until, both runs, and the relative gap
    (|other - base| / base: its median and largest value);
  - validation BLEU at each validation both runs made;
  - the scored test sets, both runs, and the difference;
  - BLEU at the same wall time: the other run's validations against the base's last validation
    at or before the same minute;
  - the minutes each run took to its first validation at BLEU 35 and 40 (--targets): its clock
    and, with --speeds, its target tokens at a speed measured apart (experiments/bleu_minutes.py).
The same-wall-time rows use the logs' elapsed_s, or with --speeds the run's cumulative target
tokens over a training speed measured apart (tokens/s on a quiet machine): runs logged beside
other work have clocks that cannot be compared.
"""
import argparse
import json
import math
import os
import statistics
import sys

import bleu_minutes  # beside this file


def read_log(run):
    train, valid = {}, []
    with open(os.path.join(run, "log.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("split") == "train":
                train[r["update"]] = r
            elif r.get("split") == "valid" and r.get("bleu") is not None:
                valid.append(r)
    if not train:
        sys.exit(f"precision_curves: {run}/log.jsonl has no training records")
    return train, valid


def scores(run):
    folder = os.path.join(run, "score")
    out = {}
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".json"):
                with open(os.path.join(folder, name)) as f:
                    out[name[:-5]] = json.load(f)[0]["score"]
    return out


def minutes(record, speed):
    """The record's minute: its logged clock, or its target tokens at a fixed speed."""
    if speed:
        return record["target_tokens"] / speed / 60
    return record["elapsed_s"] / 60


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("other")
    p.add_argument("--until", type=int, default=1000, help="the loss curves' last update (default 1000)")
    p.add_argument("--speeds", type=float, nargs=2, metavar=("BASE_TOKS", "OTHER_TOKS"),
                   help="training tokens/s of each run measured apart; the clock for the same-wall-time rows")
    p.add_argument("--targets", type=float, nargs="+", default=[35, 40],
                   help="validation BLEU for the minutes-to-BLEU rows (default 35 40)")
    a = p.parse_args()
    base_train, base_valid = read_log(a.base)
    other_train, other_valid = read_log(a.other)

    print(f"training loss (label-smoothed), every 100 updates to {a.until}")
    print(f"{'update':>7} {'base':>8} {'other':>8} {'gap':>7}")
    gaps = []
    for u in sorted(set(base_train) & set(other_train)):
        if u > a.until:
            break
        gap = abs(other_train[u]["loss"] - base_train[u]["loss"]) / base_train[u]["loss"]
        gaps.append(gap)
        if u % 100 == 0:
            print(f"{u:>7} {base_train[u]['loss']:>8.4f} {other_train[u]['loss']:>8.4f} {100 * gap:>6.2f}%")
    if gaps:
        print(f"relative gap over {len(gaps)} logged updates: median {100 * statistics.median(gaps):.2f}%, "
              f"largest {100 * max(gaps):.2f}%")

    print("\nvalidation BLEU")
    by_update = {r["update"]: r for r in other_valid}
    print(f"{'update':>7} {'base':>7} {'other':>7}")
    for r in base_valid:
        o = by_update.get(r["update"])
        print(f"{r['update']:>7} {r['bleu']:>7.2f} {o['bleu'] if o else float('nan'):>7.2f}")

    base_scores, other_scores = scores(a.base), scores(a.other)
    common = [k for k in base_scores if k in other_scores]
    if common:
        print("\nscored test sets (BLEU)")
        print(f"{'set':28} {'base':>7} {'other':>7} {'other-base':>11}")
        for k in common:
            print(f"{k:28} {base_scores[k]:>7.2f} {other_scores[k]:>7.2f} {other_scores[k] - base_scores[k]:>+11.2f}")

    clock = "tokens at the measured speeds" if a.speeds else "the logs' elapsed time"
    print(f"\nvalidation BLEU at the same wall time ({clock})")
    print(f"{'minute':>7} {'other update':>12} {'other':>7} {'base update':>11} {'base':>7}")
    base_speed, other_speed = a.speeds if a.speeds else (None, None)
    # A validation record carries no target_tokens of its own training: take its update's train record.
    def at(record, train, speed):
        return minutes(train.get(record["update"], record), speed)
    for r in other_valid:
        t = at(r, other_train, other_speed)
        before = [b for b in base_valid if at(b, base_train, base_speed) <= t + 1e-9]
        b = before[-1] if before else None
        print(f"{t:>7.1f} {r['update']:>12} {r['bleu']:>7.2f} {b['update'] if b else '-':>11} "
              f"{b['bleu'] if b else math.nan:>7.2f}")

    # The measure users feel: minutes of training to the first validation at a BLEU.
    print("\nminutes to validation BLEU (resolution: one validation interval)")
    bleu_minutes.report([os.path.join(a.base, "log.jsonl"), os.path.join(a.other, "log.jsonl")], a.targets,
                        a.speeds, names=["base", "other"])


if __name__ == "__main__":
    main()
