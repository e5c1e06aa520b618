#!/usr/bin/env python3
"""The README's comparison section from a finished (or partial) tools/compare.sh run (issue 20).

    tools/compare_verdicts.py RUNS_DIR REFS_DIR [--attn build/attn] [--speed ARCH_SPEED.txt] > section.md

RUNS_DIR holds <arch>/seed<N> run directories (compare.sh's --out or --archive), REFS_DIR the
references (compare.sh's OUT/refs). Runs `attn report RUNS_DIR/*/seed* --refs REFS_DIR --json` once
per baseline the claims need (transformer, muse, convsan) and prints, in Markdown:

  - the table: per arch, BLEU mean ± sd over the seeds (best checkpoint and the average of the last 5)
    on test2016 and on the joined probes, chrF2, the difference to the Transformer with its pooled
    seed-matched paired-bootstrap p-value, median training tokens/s and peak memory;
  - per arch and set, the output's length ÷ the reference's and the 4-gram precision: on the joined
    probes every model stops early, so their BLEU is mostly the brevity penalty;
  - one verdict line per paper claim: "holds" (the claimed direction, p < 0.05), "does not hold"
    (the opposite direction, p < 0.05) or "not distinguishable at p < 0.05", with the numbers, and
    each seed's own difference and p-value: the pooled test measures the test sentences' variance, the
    seeds show the training runs', so a verdict says whether every seed agrees.

--speed: the output of tools/arch_speed.sh measured on the machine alone; the Fast-DiSA speed and
memory line then takes its ratios instead of the runs' own (logged beside whatever else ran).

Verdicts read the best checkpoint on test2016 unless the claim is about length (the joined probes);
the average-of-5 numbers are shown beside them. Nothing here is judged by hand: rerun it to check.
"""
import argparse
import glob
import json
import re
import statistics
import subprocess
import sys

ALPHA = 0.05
ARCH_ORDER = ["transformer", "muse", "muse-simple", "muse-separate", "convsan", "convsan2d", "fastdisa"]
MAIN = "test2016"
PROBES = ["test2016.join2", "test2016.join4", "test2016.join6"]


def report(attn, runs, refs, baseline):
    dirs = sorted(glob.glob(f"{runs}/*/seed*"))
    if not dirs:
        sys.exit(f"compare_verdicts: no <arch>/seed<N> run directories under {runs}")
    out = subprocess.run([attn, "report", *dirs, "--refs", refs, "--baseline", baseline, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def outputs(rep):
    """{arch: {(set, model): output}} of one report."""
    table = {}
    for a in rep["comparison"]["archs"]:
        table[a["arch"]] = {(o["set"], o["model"]): o for o in a["outputs"]}
    return table


def seeds(rep):
    return {a["arch"]: a["seeds"] for a in rep["comparison"]["archs"]}


def mean_sd(stat):
    if stat is None or stat.get("mean") is None:
        return "—"
    sd = stat.get("sd")
    return f"{stat['mean']:.2f} ± {sd:.2f}" if sd is not None else f"{stat['mean']:.2f}"


def delta_p(o):
    if o is None or o.get("delta_bleu") is None:
        return "—"
    p = (o.get("paired_bootstrap") or {}).get("p_pooled")
    return f"{o['delta_bleu']:+.2f} (p {p:.3f})" if p is not None else f"{o['delta_bleu']:+.2f}"


def per_arch_runs(rep):
    runs = {}
    for r in rep["runs"]:
        runs.setdefault(r["arch"], []).append(r)
    return runs


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def verdict(o, claimed_sign):
    """o: an output compared with a baseline. claimed_sign: +1 when the claim says o's arch is better
    than the baseline, -1 when it says the baseline is better, 0 when it says they are equal."""
    if o is None or o.get("delta_bleu") is None:
        return "not measured", None, None
    d = o["delta_bleu"]
    p = (o.get("paired_bootstrap") or {}).get("p_pooled")
    if p is None:
        return "not measured", d, None
    if p >= ALPHA:
        return ("holds (no difference at p < 0.05)" if claimed_sign == 0 else "not distinguishable at p < 0.05"), d, p
    if claimed_sign == 0:
        return ("holds (better, p < 0.05)" if d > 0 else "does not hold"), d, p
    return ("holds" if d * claimed_sign > 0 else "does not hold"), d, p


def numbers(d, p, a, b):
    if d is None:
        return ""
    return f"{a} − {b} = {d:+.2f} BLEU" + (f", p = {p:.3f}" if p is not None else "")


def per_seed(o, base):
    """The seed-matched differences of o to its baseline output, with each seed's own paired-bootstrap
    p-value, and whether every seed points the way the mean does: the pooled test sees the test
    sentences' variance, the seeds show the training runs' (a verdict all seeds share is the stronger)."""
    if o is None or base is None or o.get("delta_bleu") is None:
        return ""
    mine = {s["seed"]: s["bleu"] for s in o.get("per_seed", []) if s.get("bleu") is not None}
    theirs = {s["seed"]: s["bleu"] for s in base.get("per_seed", []) if s.get("bleu") is not None}
    paired = o.get("paired_bootstrap") or {}
    p_of = dict(zip(paired.get("seeds", []), paired.get("p_per_seed", [])))
    common = sorted(set(mine) & set(theirs))
    if len(common) < 2:
        return ""
    deltas = [mine[s] - theirs[s] for s in common]
    parts = [f"{d:+.2f}" + (f" (p {p_of[s]:.3f})" if s in p_of else "") for s, d in zip(common, deltas)]
    agree = all(d * o["delta_bleu"] > 0 for d in deltas)
    return f"; per seed {', '.join(parts)}: " + ("every seed agrees" if agree else "the seeds disagree")


def arch_speed_table(path):
    """{arch: (tokens/s, peak RSS GB)} from tools/arch_speed.sh's table (rows: arch, median tok/s,
    ÷ transformer, ÷ its fp32, windows, peak RSS GB)."""
    rows = {}
    with open(path) as f:
        for line in f:
            cells = line.split()
            if len(cells) == 6 and cells[0] in ARCH_ORDER:
                rows[cells[0]] = (float(cells[1]), float(cells[5]))
    return rows


def speed_line(runs, table, speed_file):
    """The Fast-DiSA paper's efficiency claim: memory against the Transformer's decides it; speed is shown.
    table: arch_speed_table(speed_file), or {} without --speed."""
    if speed_file:
        if "fastdisa" not in table or "transformer" not in table:
            sys.exit(f"compare_verdicts: {speed_file} has no fastdisa and transformer rows")
        (fs, fm), (ts, tm) = table["fastdisa"], table["transformer"]
        where = f"`tools/arch_speed.sh` on the machine alone, {speed_file}"
    else:
        fd, tr = runs.get("fastdisa", []), runs.get("transformer", [])
        fs, ts = (median_of(r.get("median_target_tokens_per_s") for r in x) for x in (fd, tr))
        fm, tm = (median_of(r.get("peak_rss_mb") for r in x) for x in (fd, tr))
        where = "medians over the seeds' runs, logged beside other work: `--speed` takes quiet-machine ratios"
        if None in (fs, ts, fm, tm):
            return
    held = "holds" if fm < tm else "does not hold"
    print(f"- Fast-DiSA at less memory and CNN-like speed: less memory **{held}** (peak training memory "
          f"{fm / tm:.2f}× the Transformer's); training speed {fs / ts:.2f}× the Transformer's ({where}).")


def length_table(runs_dir, archs):
    """Why BLEU falls on the joined probes: per arch and set, the hypothesis ÷ reference length and the
    4-gram precision (means over the seeds, best checkpoint) from the runs' score/<set>.best.json. A
    ratio far below 1 means the output stops early, and BLEU is then mostly its brevity penalty; the
    precision says how good what was translated is."""
    print("Output length ÷ reference length, and 4-gram precision in %, on test2016 and its joined probes "
          "(best checkpoint, mean over the seeds):")
    print()
    print("| `--arch` | test2016 | joined ×2 | ×4 | ×6 |")
    print("| --- |" + " ---: |" * (1 + len(PROBES)))
    for a in archs:
        cells = []
        for s in [MAIN] + PROBES:
            ratios, prec4 = [], []
            for path in sorted(glob.glob(f"{runs_dir}/{a}/seed*/score/{s}.best.json")):
                with open(path) as f:
                    verbose = next((m.get("verbose_score", "") for m in json.load(f) if m["name"] == "BLEU"), "")
                match = re.match(r"([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) \(BP = [\d.]+ ratio = ([\d.]+)", verbose)
                if match:
                    prec4.append(float(match.group(4)))
                    ratios.append(float(match.group(5)))
            cells.append(f"{statistics.mean(ratios):.2f}, {statistics.mean(prec4):.1f}" if ratios else "—")
        print(f"| `{a}` | " + " | ".join(cells) + " |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs")
    ap.add_argument("refs")
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--speed", help="tools/arch_speed.sh's output, measured on the machine alone")
    args = ap.parse_args()

    vs_transformer = report(args.attn, args.runs, args.refs, "transformer")
    vs_muse = report(args.attn, args.runs, args.refs, "muse")
    vs_convsan = report(args.attn, args.runs, args.refs, "convsan")
    t, m, c = outputs(vs_transformer), outputs(vs_muse), outputs(vs_convsan)
    arch_seeds = seeds(vs_transformer)
    runs = per_arch_runs(vs_transformer)
    archs = [a for a in ARCH_ORDER if a in t] + sorted(a for a in t if a not in ARCH_ORDER)

    # Speed and memory: the machine-alone measurement when given, else the runs' own (noisy) logs.
    quiet = arch_speed_table(args.speed) if args.speed else {}
    print("| `--arch` | seeds | test2016 BLEU, best | Δ vs transformer (p) | average of last 5 | Δ (p) | chrF2, best "
          f"| joined ×2 | ×4 | ×6 | train tok/s{' (alone)' if quiet else ''} | peak MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for a in archs:
        best, avg5 = t[a].get((MAIN, "best")), t[a].get((MAIN, "avg5"))
        probes = [mean_sd((t[a].get((s, "best")) or {}).get("bleu")) for s in PROBES]
        if a in quiet:
            speed, rss = quiet[a][0], quiet[a][1] * 1000
        else:
            speed = median_of(r.get("median_target_tokens_per_s") for r in runs.get(a, []))
            rss = median_of(r.get("peak_rss_mb") for r in runs.get(a, []))
        measured = lambda v: f"{v:,.0f}" if v is not None else "—"
        print(f"| `{a}` | {len(arch_seeds.get(a, []))} | {mean_sd((best or {}).get('bleu'))} | {delta_p(best)} "
              f"| {mean_sd((avg5 or {}).get('bleu'))} | {delta_p(avg5)} | {mean_sd((best or {}).get('chrf'))} "
              f"| {' | '.join(probes)} | {measured(speed)} | {measured(rss)} |")
    print()
    length_table(args.runs, archs)

    g = lambda table, arch, s=MAIN, model="best": table.get(arch, {}).get((s, model))

    def line(claim, table, a, b, sign, s=MAIN):
        """The verdict on "a against b" (table: the report whose baseline is b) on set s."""
        o, also = g(table, a, s), g(table, a, s, "avg5")
        v, d, p = verdict(o, sign)
        extra = per_seed(o, g(table, b, s))
        if also is not None and also.get("delta_bleu") is not None:
            pa = (also.get("paired_bootstrap") or {}).get("p_pooled")
            extra += f"; average of 5: {also['delta_bleu']:+.2f}" + (f", p = {pa:.3f}" if pa is not None else "")
        print(f"- {claim}: **{v}** ({numbers(d, p, a, b)}{extra}).")

    print("Verdicts (best checkpoint, test2016 unless said; pooled seed-matched paired bootstrap, "
          f"{vs_transformer['comparison']['bootstrap']['samples']} samples):")
    print()
    line("MUSE beats the Transformer", t, "muse", "transformer", +1)
    line("MUSE beats MUSE-simple", m, "muse-simple", "muse", -1)
    line("MUSE needs the shared projection (beats MUSE-separate)", m, "muse-separate", "muse", -1)
    for s in PROBES:
        line(f"MUSE beats the Transformer on long input ({s}; the paper: the Transformer degrades with length, "
             "MUSE less)", t, "muse", "transformer", +1, s)
    line("ConvSAN 1D beats the Transformer", t, "convsan", "transformer", +1)
    line("ConvSAN 2D beats ConvSAN 1D", c, "convsan2d", "convsan", +1)
    line("Fast-DiSA is as good as multi-head attention", t, "fastdisa", "transformer", 0)
    speed_line(runs, quiet, args.speed)
    missing = [a for a in ARCH_ORDER if a not in t]
    if missing:
        print(f"\nNot yet in the runs: {', '.join(missing)}.")


if __name__ == "__main__":
    main()
