#!/usr/bin/env python3
"""Writes tests/report/verdicts_fixture/: two small synthetic comparisons in experiments/compare.sh's archive
layout, for the test that attn report --claims gives the numbers experiments/compare_verdicts.py printed.

    python3 dev/make_verdicts_fixture.py [OUT_DIR]     # default tests/report/verdicts_fixture

    OUT/refs/test2016.en, test2016.join{2,4,6,8}.en   120 made-up sentences and their joined probes
    OUT/single/<arch>/seed<S>/{log.jsonl,done,hyp/<set>.best.txt}   transformer, muse, fastdisa; ×1, ×2, ×4, ×6
    OUT/long/<arch>/seed<S>/...                        transformer, transformer-wide, muse; ×1 … ×8

A hypothesis is its reference with some words replaced (a rate per arch and seed) and, on the joined
probes, cut short by a share that grows with k (less for the long-trained runs), as the real probes do.
Deterministic (random.Random with fixed seeds): rerunning writes the same bytes. No corpus is read.
"""
import json
import os
import random
import sys

SENTENCES = 120
WORDS = ("a man dog red cat sits on the old two kids play in snow with ball near green tree girl runs "
         "by blue car bike park street white shirt").split()
SINGLE = {"transformer": (0.20, 0.030), "muse": (0.14, 0.034), "fastdisa": (0.15, 0.031)}
LONG = {"transformer": (0.22, 0.021), "transformer-wide": (0.21, 0.020), "muse": (0.15, 0.020)}
SETS = {"single": [1, 2, 4, 6], "long": [1, 2, 4, 6, 8]}


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line + "\n" for line in lines)


def joined(lines, k):
    return [" ".join(lines[i:i + k]) for i in range(0, len(lines) - len(lines) % k, k)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "report",
                                                             "verdicts_fixture")
    rng = random.Random(2026)
    refs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9))) + " ." for _ in range(SENTENCES)]
    for k in (1, 2, 4, 6, 8):
        write(f"{out}/refs/test2016{'' if k == 1 else f'.join{k}'}.en", joined(refs, k))
    for comparison, archs in (("single", SINGLE), ("long", LONG)):
        for a, (error_rate, cut_per_k) in archs.items():
            for seed in (1, 2, 3):
                run = f"{out}/{comparison}/{a}/seed{seed}"
                r = random.Random(f"{comparison}/{a}/{seed}")
                rate = error_rate + r.uniform(-0.03, 0.03)
                hyps = [" ".join(w if r.random() > rate else r.choice(WORDS) for w in ref.split()) for ref in refs]
                for k in SETS[comparison]:
                    lines = []
                    for line in joined(hyps, k):
                        words = line.split()
                        keep = max(1, round(len(words) * (1 - cut_per_k * (k - 1) * r.uniform(0.5, 1.5))))
                        lines.append(" ".join(words[:keep]))
                    write(f"{run}/hyp/test2016{'' if k == 1 else f'.join{k}'}.best.txt", lines)
                base = "transformer" if a == "transformer-wide" else a
                record = {"split": "model", "update": 0, "elapsed_s": 0.0, "arch": base, "parameters": 1000,
                          "config": {"arch": base}}
                write(f"{run}/log.jsonl", [json.dumps(record)])
                write(f"{run}/done", [])


if __name__ == "__main__":
    main()
