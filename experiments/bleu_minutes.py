#!/usr/bin/env python3
"""Minutes of training to a validation BLEU (the measure users feel), from attn train logs.

    experiments/bleu_minutes.py [--targets 35 40] [--speeds TOKS ...] LOG.jsonl ...

A log is `attn train --log-json` output; its validation records ({"split": "valid", "update",
"elapsed_s", "target_tokens", "bleu"}) give, per target, the first validation with BLEU >= the
target (resolution: one validation interval), and for it:
  - wall min: the run's clock (elapsed_s), validations and checkpoints included;
  - train min: the same without the validations' own time, known when a training record was
    logged at each validation's update (--log-every dividing --valid-every); "—" otherwise;
  - with --speeds (one tokens/s per log, measured apart on a quiet machine): the target tokens
    trained so far at that speed, for runs logged beside other work, whose clocks cannot be
    compared.
experiments/time_to_bleu.sh --report and experiments/precision_curves.py print this table.
"""
import argparse
import json
import math


def first_hits(path, targets, speed=None):
    """(precision, {target: (wall_min, train_min, speed_min, update)}, (best BLEU, its wall min) or None)."""
    precision, last_train, valid_s, hits, best = "?", {}, 0.0, {}, None
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            split = r.get("split")
            if split == "model":
                precision = str((r.get("train_flags") or {}).get("--precision", "fp32"))  # fp32: the default
            elif split == "train":
                last_train = r
            elif split == "valid" and r.get("bleu") is not None:
                wall = r["elapsed_s"]
                # The validation's own time, when its update's training record was logged just before it.
                took = wall - last_train["elapsed_s"] if last_train.get("update") == r["update"] else math.nan
                train_s = wall - valid_s - took
                valid_s += took  # NaN from the first unknown on
                if best is None or r["bleu"] > best[0]:
                    best = (r["bleu"], wall / 60)
                for t in targets:
                    if t not in hits and r["bleu"] >= t:
                        at_speed = r["target_tokens"] / speed / 60 if speed else math.nan
                        hits[t] = (wall / 60, train_s / 60, at_speed, r["update"])
    return precision, hits, best


def report(paths, targets, speeds=None, names=None):
    speeds = speeds or [None] * len(paths)
    names = names or [p if len(p) <= 44 else "…" + p[-43:] for p in paths]
    width = 32 if any(speeds) else 22
    unit = "wall (train) [at speed] u" if any(speeds) else "wall min (train min) u"
    print(f"{'run':44} {'precision':>9} " + " ".join(f"{'BLEU ' + format(t, 'g'):>{width}}" for t in targets)
          + f" {'best BLEU':>10} {'at min':>7}")
    print(f"{'':44} {'':>9} " + " ".join(f"{unit:>{width}}" for _ in targets))
    for path, speed, name in zip(paths, speeds, names):
        precision, hits, best = first_hits(path, targets, speed)
        cells = []
        for t in targets:
            if t not in hits:
                cells.append("not reached")
                continue
            wall, train, at_speed, update = hits[t]
            inner = "—" if math.isnan(train) else f"{train:.1f}"
            extra = f" [{at_speed:.1f}]" if speed else ""
            cells.append(f"{wall:.1f} ({inner}){extra} u{update}")
        print(f"{name:44} {precision:>9} " + " ".join(f"{c:>{width}}" for c in cells)
              + f" {format(best[0], '.2f') if best else '—':>10} {format(best[1], '.1f') if best else '—':>7}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logs", nargs="+", metavar="LOG.jsonl")
    p.add_argument("--targets", type=float, nargs="+", default=[35, 40], help="validation BLEU (default 35 40)")
    p.add_argument("--speeds", type=float, nargs="+", metavar="TOKS",
                   help="training tokens/s of each run, measured apart: one per log")
    a = p.parse_args()
    if a.speeds and len(a.speeds) != len(a.logs):
        p.error(f"--speeds: {len(a.speeds)} speeds for {len(a.logs)} logs; give one per log")
    report(a.logs, a.targets, a.speeds)


if __name__ == "__main__":
    main()
