#!/usr/bin/env python3
"""A small reference implementation of sacreBLEU 2.x's paired tests
(significance.py), in pure Python, to check `attn score` on the same draws.

    attn score -r REF -i BASE -i SYS ... --paired-bs --dump-resamples draws.json
    python3 tools/significance_ref.py draws.json

The dump holds the per-segment statistics of every system and metric, the
resample indices (paired bootstrap) or coin flips (approximate
randomization) and attn's results. This script recomputes each score,
mean, CI half-width and p-value from the statistics and the draws with
sacreBLEU's formulas (metric defaults: BLEU exp smoothing, chrF effective
order, TER) and exits 1 when one differs. It does not draw numbers itself.
"""
import json
import math
import sys


def bleu_score(stats):
    orders = (len(stats) - 2) // 2
    hyp_len, ref_len = stats[0], stats[1]
    correct, total = stats[2:2 + orders], stats[2 + orders:]
    bp = 1.0 if hyp_len >= ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0)
    if all(c == 0 for c in correct):
        return 0.0
    precisions = [0.0] * orders
    smooth = 1.0
    for n in range(orders):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    logs = [math.log(p) if p > 0 else -9999999999 for p in precisions]
    return bp * math.exp(sum(logs) / orders)


def chrf_score(stats, beta):
    factor = beta ** 2
    avg_p = avg_r = 0.0
    eff = 0
    for i in range(len(stats) // 3):
        n_hyp, n_ref, n_match = stats[3 * i:3 * i + 3]
        if n_hyp > 0 and n_ref > 0:
            avg_p += n_match / n_hyp
            avg_r += n_match / n_ref
            eff += 1
    if eff == 0:
        return 0.0
    avg_p /= eff
    avg_r /= eff
    if avg_p + avg_r == 0:
        return 0.0
    return 100 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)


def ter_score(stats):
    edits, length = stats
    if length > 0:
        return 100 * (edits / length)
    return 100.0 if edits > 0 else 0.0


def scorer(name):
    if name == "BLEU":
        return bleu_score
    if name.startswith("chrF"):
        beta = int(name[4:].rstrip("+"))
        return lambda stats: chrf_score(stats, beta)
    if name == "TER":
        return ter_score
    raise SystemExit(f"unknown metric {name!r}")


def rows(system):
    fields, values = system["fields"], system["stats"]
    return [values[i:i + fields] for i in range(0, len(values), fields)]


def summed(rs):
    return [sum(column) for column in zip(*rs)]


def estimate_ci(scores):
    scores = sorted(scores)
    lower = len(scores) // 40
    upper = len(scores) - lower - 1
    return math.fsum(scores) / len(scores), 0.5 * (scores[upper] - scores[lower])


def p_value(statistics, real):
    return (sum(1 for s in statistics if s > real) + 1) / (len(statistics) + 1)


def check(dump):
    n_segments = len(rows(dump["metrics"][0]["systems"][0]))
    samples = dump["samples"]
    failures = 0
    for metric in dump["metrics"]:
        score = scorer(metric["name"])
        systems = [rows(s) for s in metric["systems"]]
        base = systems[0]
        base_score = score(summed(base))
        if dump["test"] == "bs":
            idx = dump["indices"]
            draws = [idx[k * n_segments:(k + 1) * n_segments] for k in range(samples)]
            base_scores = [score(summed([base[i] for i in d])) for d in draws]
        for s, system in enumerate(systems):
            mine = metric["systems"][s]
            expected = {"score": score(summed(system))}
            if dump["test"] == "bs":
                sys_scores = [score(summed([system[i] for i in d])) for d in draws]
                expected["mean"], expected["ci"] = estimate_ci(sys_scores)
                if s > 0:
                    diffs = [abs(a - b) for a, b in zip(sys_scores, base_scores)]
                    mean = math.fsum(diffs) / len(diffs)
                    expected["p_value"] = p_value([d - mean for d in diffs], abs(base_score - expected["score"]))
            elif s > 0:
                flips = dump["flips"]
                stats = []
                for k in range(samples):
                    f = flips[k * n_segments:(k + 1) * n_segments]
                    a = summed([base[i] if f[i] else system[i] for i in range(n_segments)])
                    b = summed([system[i] if f[i] else base[i] for i in range(n_segments)])
                    stats.append(abs(score(a) - score(b)))
                expected["p_value"] = p_value(stats, abs(base_score - expected["score"]))
            for key, value in expected.items():
                # The mean is summed differently (NumPy pairwise, here fsum).
                if abs(mine[key] - value) > 1e-9 * max(1.0, abs(value)):
                    print(f"{metric['name']} system {s} {key}: attn {mine[key]!r}, reference {value!r}")
                    failures += 1
    return failures


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        dump = json.load(f)
    failures = check(dump)
    print("ok" if failures == 0 else f"{failures} differences")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
