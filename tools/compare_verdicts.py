#!/usr/bin/env python3
"""The README's comparison section from a finished (or partial) tools/compare.sh run.

    tools/compare_verdicts.py RUNS_DIR REFS_DIR [--attn build/attn] [--speed ARCH_SPEED.txt]
                              [--long LONG_RUNS_DIR [--long-refs DIR]] [--seeds "1 2 3"] [--threads N] > section.md

RUNS_DIR holds <arch>/seed<N> run directories (compare.sh's --out or --archive), REFS_DIR the
references (compare.sh's OUT/refs). Only finished runs (a `done` file) are read. Runs
`attn report RUNS_DIR/*/seed* --refs REFS_DIR --json` once per baseline the claims need
(transformer, muse, convsan) and prints, in Markdown:

  - the table: per arch, BLEU mean ± sd over the seeds (best checkpoint and the average of the last 5)
    on test2016 and on the joined probes, chrF2, the difference to the Transformer with its pooled
    seed-matched paired-bootstrap p-value, median training tokens/s and peak memory;
  - per arch and set, the output's length ÷ the reference's and the 4-gram precision: on the joined
    probes every model stops early, so their BLEU is mostly the brevity penalty;
  - one verdict line per paper claim, decided by two tests of the same difference:

      * the pooled test: `attn report`'s seed-matched paired bootstrap (every common seed's test set
        concatenated, resampled by sentence). It measures the test sentences' variance only;
      * the seed-level test: the paired t-test over seeds of the per-seed differences (the arch's
        BLEU − the baseline's BLEU of the same seed; Student t with n − 1 df, two-sided). It measures
        the training runs' variance, which the pooled test cannot see.

    A two-level bootstrap (resample seeds, then sentences within each) is not offered: `attn report`
    gives corpus BLEU per seed, not the per-sentence statistics it needs, and with three seeds a
    resample of seeds has only ten distinct outcomes. So the seed-level test is the paired t over
    seeds, printed beside the pooled bootstrap.

    Each kind of p-value is Holm–Bonferroni-corrected over the family of verdict lines of its
    section (the lines that have that test); a line prints both p's raw and corrected. The rule:
    a claim **holds** when both tests give the claimed direction at Holm-adjusted p < 0.05, **does
    not hold** when both give the opposite direction at Holm p < 0.05, and is otherwise **not
    distinguishable** (also when the two tests disagree). A claim of "as good as" holds unless both
    tests find the arch worse (then "holds (better)" when both find it better). Each line states the
    per-seed differences and which part of the rule fired.

--speed: the output of bench/arch_speed.sh measured on the machine alone; the Fast-DiSA speed and
memory line then takes its ratios instead of the runs' own (logged beside whatever else ran).

--long DIR: the long comparison (archs transformer, transformer-wide — a Transformer with its FFN
widened to MUSE's parameter count, named by its folder —, muse, muse-simple, convsan, convsan2d,
fastdisa; probes test2016.join2/4/6/8), scored against --long-refs (default REFS_DIR). It adds a
section with its own table (with each arch's parameter count from its runs' log.jsonl), the length
table, and its own family of verdicts:

  - MUSE degrades less than the Transformer from ×1 to ×8: per seed, the least-squares slope of BLEU
    (best checkpoint) against k over k ∈ {1, 2, 4, 6, 8}; the seed-level test is the paired t over
    seeds of MUSE's slope − the Transformer's. The pooled test is a paired bootstrap of the same
    slope difference computed on the seeds' pooled corpus BLEU, resampling groups of consecutive
    test sentences (24: every probe line lies inside one group, so a resample is the same sentences
    at every k); its BLEU is computed here (tools/sacrebleu_ref.py score's 13a tokenizer,
    tools/sacrebleu_ref.py paired's BLEU) and checked against attn's per run before use;
  - MUSE beats the parameter-matched Transformer (transformer-wide as the baseline), on test2016
    and on each joined probe;
  - joining costs nothing on single sentences: per arch, the ×1 (test2016) BLEU of its long-trained
    runs against the same arch's runs in RUNS_DIR, seed-matched (a drop in both tests: does not hold);
  - MUSE beats the Transformer on long input, on the long comparison's probes.

Runs still missing are named; the verdicts use the runs present.

--threads: passed to attn report (default: its own, all cores); 1 keeps a training run beside it
undisturbed. Verdicts read the best checkpoint on test2016 unless the claim is about length (the
joined probes); the average-of-5 numbers are shown beside them. Nothing here is judged by hand:
rerun it to check.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# sacreBLEU's 13a (checked against attn) and its corpus BLEU from summed statistics
from sacrebleu_ref import bleu_score, read_lines, tokenize_13a, word_ngrams  # noqa: E402

ALPHA = 0.05
ARCH_ORDER = ["transformer", "transformer-wide", "muse", "muse-simple", "muse-separate", "convsan", "convsan2d",
              "fastdisa"]
CMP_ARCHS = ["transformer", "muse", "muse-simple", "muse-separate", "convsan", "convsan2d", "fastdisa"]
LONG_ARCHS = ["transformer", "transformer-wide", "muse", "muse-simple", "convsan", "convsan2d", "fastdisa"]
MAIN = "test2016"
PROBES = ["test2016.join2", "test2016.join4", "test2016.join6"]
LONG_PROBES = ["test2016.join2", "test2016.join4", "test2016.join6", "test2016.join8"]
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 12345
LENGTH_CLAIM = "the paper: the Transformer degrades with length, MUSE less"


# ---------------------------------------------------------------------------------------------------
# Statistics (standard library only).

def _beta_continued_fraction(x, a, b, eps=1e-15, max_terms=10000):
    """The continued fraction of the incomplete beta function, by the modified Lentz method
    (Numerical Recipes' betacf); converges quickly for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, max_terms + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for x={x}, a={a}, b={b}")


def regularized_beta(x, a, b):
    """I_x(a, b), the regularized incomplete beta function, for 0 ≤ x ≤ 1 and a, b > 0."""
    if not 0.0 <= x <= 1.0 or a <= 0 or b <= 0:
        raise ValueError(f"regularized_beta: x={x}, a={a}, b={b} out of range")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    # The fraction converges fast only below (a + 1) / (a + b + 2); above it, I_x(a, b) = 1 − I_{1−x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(1.0 - x, b, a) / b


def t_two_sided_p(t, df):
    """P(|T| ≥ |t|) for Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)."""
    if df <= 0:
        raise ValueError(f"t_two_sided_p: df must be positive (got {df})")
    if math.isinf(t):
        return 0.0
    return regularized_beta(df / (df + t * t), df / 2.0, 0.5)


def t_critical(p, df):
    """The |t| whose two-sided p-value is p (bisection on t_two_sided_p, which falls with |t|)."""
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_two_sided_p(mid, df) > p else (lo, mid)
    return (lo + hi) / 2.0


def paired_t(diffs):
    """The paired t-test of differences against 0: (mean, t, df, two-sided p), or None below 2 values.
    Equal differences have no spread: t is ±∞ (p 0) unless they are all 0 (t 0, p 1)."""
    n = len(diffs)
    if n < 2:
        return None
    mean, sd = statistics.mean(diffs), statistics.stdev(diffs)
    if sd == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    else:
        t = mean / (sd / math.sqrt(n))
    return mean, t, n - 1, t_two_sided_p(t, n - 1)


def holm(ps):
    """Holm–Bonferroni-adjusted p-values, in the order given. None (a line without that test) stays None
    and is not counted in the family. The i-th smallest of m p's is multiplied by m − i + 1, capped at 1,
    and made monotone so that an adjusted p is never below a smaller raw p's adjusted one."""
    order = sorted((i for i, p in enumerate(ps) if p is not None), key=lambda i: ps[i])
    m, adjusted, running = len(order), [None] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def least_squares_slope(xs, ys):
    """The slope of the least-squares line through (xs, ys)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("least_squares_slope: needs two or more (x, y) pairs")
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("least_squares_slope: every x is the same")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def bootstrap_p(real, resampled):
    """sacreBLEU's paired-bootstrap p-value (as attn report's): the share of resamples whose centred
    absolute difference |Δ*| − mean |Δ*| exceeds the real |Δ|, counted as (c + 1) / (B + 1)."""
    absolute = [abs(d) for d in resampled]
    centre = statistics.fmean(absolute)
    count = sum(1 for d in absolute if d - centre > abs(real))
    return (count + 1) / (len(resampled) + 1)


# ---------------------------------------------------------------------------------------------------
# The verdict rule.

@dataclass
class Test:
    """One test of a claim's difference: diff's sign is the direction it found."""
    name: str
    diff: float
    p: float
    detail: str = ""
    df: int = None
    p_holm: float = None


@dataclass
class Claim:
    """One verdict line: the claim, its sign (+1: the difference should be positive, −1: negative,
    0: "as good as", i.e. not negative), the numbers to show, and its pooled and seed-level tests."""
    text: str
    sign: int
    numbers: str = ""
    pooled: Test = None
    seed: Test = None
    extra: str = ""
    absent: str = ""


def significant_direction(test, alpha=ALPHA):
    """+1 or −1 when the test finds a nonzero difference at Holm p < alpha, else 0."""
    if test is None or test.p_holm is None or test.diff == 0 or test.p_holm >= alpha:
        return 0
    return 1 if test.diff > 0 else -1


def decide(sign, pooled, seed, alpha=ALPHA):
    """(verdict, which rule fired) for a claim of sign +1/−1/0 from its two Holm-corrected tests."""
    if pooled is None and seed is None:
        return "not measured", "neither test could be run"
    dp, ds = significant_direction(pooled, alpha), significant_direction(seed, alpha)
    word = {1: "higher", -1: "lower"}
    if dp != 0 and dp == ds:
        if sign == 0:
            return ("holds (better)" if dp > 0 else "does not hold"), f"both tests find it {word[dp]} at Holm p < {alpha}"
        if dp == sign:
            return "holds", f"both tests give the claimed direction at Holm p < {alpha}"
        return "does not hold", f"both tests give the opposite direction at Holm p < {alpha}"
    if dp != 0 and ds != 0:
        why = f"the tests disagree (pooled {word[dp]}, seed-level {word[ds]})"
    elif dp != 0 or ds != 0:
        which, other, direction = ("pooled", "seed-level", dp) if dp else ("seed-level", "pooled", ds)
        missing = (seed if dp else pooled) is None
        why = (f"only the {which} test reaches Holm p < {alpha} ({word[direction]}); "
               + (f"there is no {other} test" if missing else f"the {other} test does not"))
    else:
        why = f"neither test reaches Holm p < {alpha}"
    if sign == 0:
        return "holds (not distinguishable)", why
    return "not distinguishable", why


def apply_holm(claims):
    """Holm over the family of claims, separately for the pooled and the seed-level p-values."""
    for kind in ("pooled", "seed"):
        tests = [getattr(c, kind) for c in claims]
        for test, adjusted in zip(tests, holm([t.p if t else None for t in tests])):
            if test is not None:
                test.p_holm = adjusted


def fmt_p(p):
    return f"{p:.3f}" if p >= 0.0005 else f"{p:.1e}"


def describe(test):
    detail = f" {test.detail}," if test.detail else ""
    return f"{test.name}{detail} p = {fmt_p(test.p)} (Holm {fmt_p(test.p_holm)})"


def render(claim):
    if claim.absent:
        return f"- {claim.text}: **not measured** ({claim.absent})."
    verdict, why = decide(claim.sign, claim.pooled, claim.seed)
    parts = [claim.numbers] + [describe(t) for t in (claim.pooled, claim.seed) if t is not None]
    if claim.seed is None:
        parts.append("no seed-level test (fewer than 2 common seeds)")
    parts += [f"rule: {why}", claim.extra]
    return f"- {claim.text}: **{verdict}** ({'; '.join(p for p in parts if p)})."


def print_verdicts(claims, title):
    """Holm over claims, then a header saying what the tests and the rule are, then one line each."""
    apply_holm(claims)
    family = sum(1 for c in claims if c.seed is not None)
    dfs = [c.seed.df for c in claims if c.seed is not None]
    print(f"{title} Two tests of each difference: the pooled seed-matched paired bootstrap "
          f"({BOOTSTRAP_SAMPLES} samples; the test sentences' variance) and the paired t over seeds (the "
          "training runs' variance), each Holm–Bonferroni-corrected over the lines of this list. A claim holds "
          "when both give its direction at Holm p < 0.05, does not hold when both give the opposite one, and is "
          "otherwise not distinguishable.", end="")
    if dfs:
        # What the seed-level test can reach: with few seeds even a consistent difference may not get there.
        bars = [f"{df + 1} seeds (t with {df} df) |t| > {t_critical(ALPHA / family, df):.1f}" for df in sorted(set(dfs))]
        print(f" The strongest of the {family} lines with a seed-level test reaches Holm p < 0.05 there only at: "
              f"{'; '.join(bars)}.", end="")
    print()
    print()
    for c in claims:
        print(render(c))


# ---------------------------------------------------------------------------------------------------
# attn report.

def finished_runs(runs_dir):
    """(finished <arch>/seed<N> directories, unfinished ones): a run counts once it has its `done` file."""
    dirs = sorted(d for d in glob.glob(f"{runs_dir}/*/seed*") if os.path.isdir(d))
    return [d for d in dirs if os.path.exists(f"{d}/done")], [d for d in dirs if not os.path.exists(f"{d}/done")]


def report(attn, dirs, refs, baseline, threads=None):
    threads_flag = ["--threads", str(threads)] if threads else []
    out = subprocess.run([attn, "report", *dirs, "--refs", refs, "--baseline", baseline, "--json", *threads_flag],
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
    """{name: [run records]} of a report, named by the runs' <name>/seed<N> folder as attn report names
    them: a variant (transformer-wide) logs its base arch, and must not be counted with it."""
    runs = {}
    for r in rep["runs"]:
        runs.setdefault(os.path.basename(os.path.dirname(os.path.normpath(r["dir"]))), []).append(r)
    return runs


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def seed_bleu(o):
    """{seed: BLEU} of one report output."""
    return {s["seed"]: s["bleu"] for s in (o or {}).get("per_seed", []) if s.get("bleu") is not None}


def seed_differences(o, base):
    """[(seed, o's BLEU − base's BLEU)] over the seeds both have."""
    mine, theirs = seed_bleu(o), seed_bleu(base)
    return [(s, mine[s] - theirs[s]) for s in sorted(set(mine) & set(theirs))]


def seed_test(diffs, what="seeds"):
    """The seed-level Test of per-seed differences, or None below two seeds."""
    result = paired_t(diffs)
    if result is None:
        return None
    mean, t, df, p = result
    return Test(f"paired t over {df + 1} {what}", mean, p, f"t({df}) = {t:.2f}", df)


def output_claim(text, table, a, b, sign, s=MAIN):
    """The claim "a against b" on set s (table: outputs of the report whose baseline is b)."""
    o = table.get(a, {}).get((s, "best"))
    base = table.get(b, {}).get((s, "best"))
    if o is None or base is None or o.get("delta_bleu") is None:
        no_runs = [x for x in (a, b) if x not in table]
        no_output = [x for x, out in ((a, o), (b, base)) if out is None and x in table]
        why = "; ".join(([f"no finished {' or '.join(no_runs)} runs"] if no_runs else [])
                        + ([f"no {s} output of {' or '.join(no_output)}"] if no_output else [])) or "no common seeds"
        return Claim(text, sign, absent=why)
    claim = Claim(text, sign)
    paired = o.get("paired_bootstrap") or {}
    if paired.get("p_pooled") is not None:
        claim.pooled = Test("pooled bootstrap", paired["pooled_bleu"] - paired["pooled_baseline_bleu"], paired["p_pooled"])
    p_of = dict(zip(paired.get("seeds", []), paired.get("p_per_seed", [])))
    diffs = seed_differences(o, base)
    claim.seed = seed_test([d for _, d in diffs])
    per_seed = ", ".join(f"{d:+.2f}" + (f" (p {fmt_p(p_of[s])})" if s in p_of else "") for s, d in diffs)
    claim.numbers = f"{a} − {b} = {o['delta_bleu']:+.2f} BLEU; per seed {per_seed}"
    also = table.get(a, {}).get((s, "avg5"))
    if also is not None and also.get("delta_bleu") is not None:
        pa = (also.get("paired_bootstrap") or {}).get("p_pooled")
        claim.extra = f"average of 5: {also['delta_bleu']:+.2f}" + (f", p = {fmt_p(pa)}" if pa is not None else "")
    return claim


# ---------------------------------------------------------------------------------------------------
# Tables.

def arch_speed_table(path):
    """{arch: (tokens/s, peak RSS GB)} from bench/arch_speed.sh's table (rows: arch, median tok/s,
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
        where = f"`bench/arch_speed.sh` on the machine alone, {speed_file}"
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


def probe_header(probes):
    return " | ".join(("joined " if i == 0 else "") + f"×{k_of(s)}" for i, s in enumerate(probes))


def main_table(t, archs, arch_seeds, runs, quiet, probes, parameters=None):
    """Per arch: BLEU mean ± sd (best, average of 5), Δ to the Transformer, chrF2, the probes' BLEU, speed
    and memory; with parameters ({arch: [count]}), a column of parameter counts after the seeds."""
    param_head = " parameters |" if parameters is not None else ""
    print(f"| `--arch` | seeds |{param_head} test2016 BLEU, best | Δ vs transformer (p) | average of last 5 | Δ (p) "
          f"| chrF2, best | {probe_header(probes)} | train tok/s{' (alone)' if quiet else ''} | peak MB |")
    print("| --- | ---: |" + (" ---: |" if parameters is not None else "") + " ---: |" * (7 + len(probes)))
    for a in archs:
        best, avg5 = t[a].get((MAIN, "best")), t[a].get((MAIN, "avg5"))
        probe_cells = [mean_sd((t[a].get((s, "best")) or {}).get("bleu")) for s in probes]
        if a in quiet:
            speed, rss = quiet[a][0], quiet[a][1] * 1000
        else:
            speed = median_of(r.get("median_target_tokens_per_s") for r in runs.get(a, []))
            rss = median_of(r.get("peak_rss_mb") for r in runs.get(a, []))
        measured = lambda v: f"{v:,.0f}" if v is not None else "—"
        param_cell = ""
        if parameters is not None:
            counts = sorted(set(parameters.get(a, [])))
            param_cell = f" {' / '.join(f'{c:,}' for c in counts) or '—'} |"
        print(f"| `{a}` | {len(arch_seeds.get(a, []))} |{param_cell} {mean_sd((best or {}).get('bleu'))} "
              f"| {delta_p(best)} | {mean_sd((avg5 or {}).get('bleu'))} | {delta_p(avg5)} "
              f"| {mean_sd((best or {}).get('chrf'))} | {' | '.join(probe_cells)} | {measured(speed)} | {measured(rss)} |")
    print()


def length_table(runs_dir, archs, probes):
    """Why BLEU falls on the joined probes: per arch and set, the hypothesis ÷ reference length and the
    4-gram precision (means over the seeds, best checkpoint) from the runs' score/<set>.best.json. A
    ratio far below 1 means the output stops early, and BLEU is then mostly its brevity penalty; the
    precision says how good what was translated is."""
    print("Output length ÷ reference length, and 4-gram precision in %, on test2016 and its joined probes "
          "(best checkpoint, mean over the seeds):")
    print()
    print(f"| `--arch` | test2016 | {probe_header(probes)} |")
    print("| --- |" + " ---: |" * (1 + len(probes)))
    for a in archs:
        cells = []
        for s in [MAIN] + probes:
            ratios, prec4 = [], []
            for path in sorted(glob.glob(f"{runs_dir}/{a}/seed*/score/{s}.best.json")):
                if not os.path.exists(f"{os.path.dirname(os.path.dirname(path))}/done"):
                    continue
                with open(path) as f:
                    verbose = next((m.get("verbose_score", "") for m in json.load(f) if m["name"] == "BLEU"), "")
                match = re.match(r"([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) \(BP = [\d.]+ ratio = ([\d.]+)", verbose)
                if match:
                    prec4.append(float(match.group(4)))
                    ratios.append(float(match.group(5)))
            cells.append(f"{statistics.mean(ratios):.2f}, {statistics.mean(prec4):.1f}" if ratios else "—")
        print(f"| `{a}` | " + " | ".join(cells) + " |")
    print()


def model_parameters(run_dir):
    """The parameter count of a run: the "parameters" field of its log.jsonl's "split": "model" record."""
    try:
        with open(f"{run_dir}/log.jsonl") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interrupted run
                if record.get("split") == "model" and "parameters" in record:
                    return record["parameters"]
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------------
# BLEU against k: slopes, and their pooled bootstrap over groups of test sentences.

def k_of(set_name):
    """How many test sentences one line of a set joins (1 for the test set itself)."""
    match = re.search(r"\.join(\d+)$", set_name)
    return int(match.group(1)) if match else 1


def segment_stats(hyp, ref, max_order=4):
    """sacreBLEU's sufficient statistics of one segment (13a, one reference):
    [hyp_len, ref_len, correct_1..max_order, total_1..max_order]."""
    h, r = tokenize_13a(hyp.rstrip()).split(), tokenize_13a(ref.rstrip()).split()
    ref_counts = word_ngrams(r, max_order)
    correct, total = [0] * max_order, [0] * max_order
    for gram, count in word_ngrams(h, max_order).items():
        total[len(gram) - 1] += count
        correct[len(gram) - 1] += min(count, ref_counts.get(gram, 0))
    return [len(h), len(r)] + correct + total


def add_into(acc, stats, times=1):
    for i, v in enumerate(stats):
        acc[i] += times * v


def group_stats(hyp_lines, ref_lines, k, group_size):
    """The statistics of a set whose lines join k sentences, summed per group of group_size consecutive
    test sentences: line i holds sentences k·i … k·i + k − 1, all inside group k·i // group_size when
    group_size is a multiple of k."""
    if group_size % k:
        raise ValueError(f"group_stats: {group_size} sentences per group is not a multiple of k = {k}")
    if len(hyp_lines) != len(ref_lines):
        raise ValueError(f"group_stats: {len(hyp_lines)} hypotheses for {len(ref_lines)} references")
    groups = {}
    for i, (hyp, ref) in enumerate(zip(hyp_lines, ref_lines)):
        add_into(groups.setdefault(k * i // group_size, [0] * 10), segment_stats(hyp, ref))
    return groups


def pooled_slope(stats_by_k, ks, counts=None):
    """The least-squares slope of corpus BLEU against k, where stats_by_k[k] is {group: statistics} and
    counts (a bootstrap draw: {group: times drawn}) weights the groups; None: every group once."""
    bleus = []
    for k in ks:
        acc = [0] * 10
        for g, stats in stats_by_k[k].items():
            times = 1 if counts is None else counts.get(g, 0)
            if times:
                add_into(acc, stats, times)
        bleus.append(bleu_score(acc))
    return least_squares_slope(ks, bleus)


def slope_bootstrap(a_by_k, b_by_k, ks, samples=BOOTSTRAP_SAMPLES, seed=BOOTSTRAP_SEED):
    """The paired bootstrap of slope(a) − slope(b) over groups of test sentences: each resample draws the
    groups with replacement, the same draw for both archs and every k. -> (real difference, p)."""
    groups = sorted(set().union(*(a_by_k[k].keys() for k in ks), *(b_by_k[k].keys() for k in ks)))
    real = pooled_slope(a_by_k, ks) - pooled_slope(b_by_k, ks)
    rng = random.Random(seed)
    resampled = []
    for _ in range(samples):
        counts = {}
        for _ in groups:
            g = groups[rng.randrange(len(groups))]
            counts[g] = counts.get(g, 0) + 1
        resampled.append(pooled_slope(a_by_k, ks, counts) - pooled_slope(b_by_k, ks, counts))
    return real, bootstrap_p(real, resampled)


def run_group_stats(run_dir, refs, sets, group_size):
    """{k: {group: statistics}} of one run's best-checkpoint translations."""
    out = {}
    for s in sets:
        out[k_of(s)] = group_stats(read_lines(f"{run_dir}/hyp/{s}.best.txt"), read_lines(f"{refs}/{s}.en"),
                                   k_of(s), group_size)
    return out


def slope_claim(table, long_dir, refs, a="muse", b="transformer"):
    """MUSE degrades less than the Transformer from ×1 to ×8: per seed the slope of BLEU against k; the
    seed-level test is the paired t of the slope differences, the pooled one a bootstrap over sentence groups."""
    text = "MUSE degrades less than the Transformer from ×1 to ×8 (slope of BLEU against k)"
    wanted = [MAIN] + LONG_PROBES
    have = {x: {s: seed_bleu(table.get(x, {}).get((s, "best"))) for s in wanted} for x in (a, b)}
    # The sets both archs have (for some seed), and the seeds that have every one of them in both archs.
    sets = [s for s in wanted if have[a][s] and have[b][s]]
    seeds_ = sorted(set.intersection(*(set(have[x][s]) for x in (a, b) for s in sets))) if sets else []
    if len(sets) < 2 or not seeds_:
        return Claim(text, +1, absent=f"needs {a} and {b} runs with two or more sets of test2016 ×k")
    ks = [k_of(s) for s in sets]
    slopes = {x: {sd: least_squares_slope(ks, [have[x][s][sd] for s in sets]) for sd in seeds_} for x in (a, b)}
    diffs = [slopes[a][sd] - slopes[b][sd] for sd in seeds_]
    claim = Claim(text, +1)
    claim.seed = seed_test(diffs)
    missing = [f"×{k_of(s)}" for s in wanted if s not in sets]
    per_seed = lambda values: ", ".join(f"{v:+.2f}" for v in values)
    claim.numbers = (f"k = {', '.join(map(str, ks))}" + (f" ({', '.join(missing)} not there yet)" if missing else "")
                     + f"; slope in BLEU per unit of k, seeds {', '.join(map(str, seeds_))}: {a} "
                     + per_seed(slopes[a][sd] for sd in seeds_) + f"; {b} " + per_seed(slopes[b][sd] for sd in seeds_)
                     + f"; {a} − {b} {per_seed(diffs)} (mean {statistics.mean(diffs):+.2f})")
    group_size = math.lcm(*ks)
    dirs = {x: [f"{long_dir}/{x}/seed{sd}" for sd in seeds_] for x in (a, b)}
    pooled = {x: {} for x in (a, b)}
    mismatch = []
    for x in (a, b):
        for sd, d in zip(seeds_, dirs[x]):
            try:
                per_k = run_group_stats(d, refs, sets, group_size)
            except (OSError, ValueError) as e:
                claim.extra = f"no pooled test: {e}"
                return claim
            for s, k in zip(sets, ks):
                mine = bleu_score([sum(col) for col in zip(*per_k[k].values())])
                if abs(mine - have[x][s][sd]) > 1e-6:
                    mismatch.append(f"{x}/seed{sd} {s}: {mine:.4f} here, {have[x][s][sd]:.4f} by attn")
                target = pooled[x].setdefault(k, {})
                for g, stats in per_k[k].items():
                    add_into(target.setdefault(g, [0] * 10), stats)
    if mismatch:
        claim.extra = "no pooled test: the BLEU computed here differs from attn's (" + "; ".join(mismatch) + ")"
        return claim
    real, p = slope_bootstrap(pooled[a], pooled[b], ks)
    n_groups = len(set().union(*(pooled[a][k].keys() for k in ks)))
    claim.pooled = Test(f"pooled bootstrap over {n_groups} groups of {group_size} consecutive test sentences of the "
                        f"slope difference on the seeds' pooled BLEU ({real:+.2f})", real, p)
    return claim


# ---------------------------------------------------------------------------------------------------
# Joining costs nothing: long-trained runs against single-sentence runs of the same arch.

def copy_main_outputs(run_dir, to):
    """The parts of a run attn report needs to score test2016 (log, done, its translations and scores)."""
    os.makedirs(f"{to}/hyp")
    os.makedirs(f"{to}/score")
    for name in ("log.jsonl", "done"):
        if os.path.exists(f"{run_dir}/{name}"):
            shutil.copy(f"{run_dir}/{name}", f"{to}/{name}")
    for sub in ("hyp", "score"):
        for path in glob.glob(f"{run_dir}/{sub}/{MAIN}.*"):
            shutil.copy(path, f"{to}/{sub}/")


def joining_claims(args, long_dirs, single_dirs):
    """Per arch in both comparisons: ×1 BLEU of the long-trained runs against the single-sentence runs.
    attn report compares archs by folder name, so both sets of runs are copied under two names."""
    claims = []
    long_by_arch, single_by_arch = runs_by_arch(long_dirs), runs_by_arch(single_dirs)
    for arch in [a for a in ARCH_ORDER if a in long_by_arch and a in single_by_arch]:
        long_name = f"{arch}-joined"
        with tempfile.TemporaryDirectory(prefix="compare_verdicts.") as tmp:
            dirs = []
            for name, runs in ((arch, single_by_arch[arch]), (long_name, long_by_arch[arch])):
                for d in runs:
                    to = f"{tmp}/{name}/{os.path.basename(d)}"
                    copy_main_outputs(d, to)
                    dirs.append(to)
            table = outputs(report(args.attn, dirs, args.long_refs, arch, args.threads))
        claim = output_claim(f"Joining costs nothing on single sentences ({arch}: ×1 BLEU of the long-trained "
                             f"runs against {args.runs}'s)", table, long_name, arch, 0)
        claim.numbers = claim.numbers.replace(f"{long_name} − {arch}", f"long − single-sentence {arch}")
        claims.append(claim)
    return claims


def runs_by_arch(dirs):
    by = {}
    for d in dirs:
        by.setdefault(os.path.basename(os.path.dirname(d)), []).append(d)
    return by


# ---------------------------------------------------------------------------------------------------
# The sections.

def ordered(archs, order):
    return [a for a in order if a in archs] + sorted(a for a in archs if a not in order)


def comparison_section(args, dirs):
    """The single-sentence comparison: table, length table, verdicts (as in the README)."""
    vs_transformer = report(args.attn, dirs, args.refs, "transformer", args.threads)
    vs_muse = report(args.attn, dirs, args.refs, "muse", args.threads)
    vs_convsan = report(args.attn, dirs, args.refs, "convsan", args.threads)
    t, m, c = outputs(vs_transformer), outputs(vs_muse), outputs(vs_convsan)
    runs = per_arch_runs(vs_transformer)
    archs = ordered(t, CMP_ARCHS)

    # Speed and memory: the machine-alone measurement when given, else the runs' own (noisy) logs.
    quiet = arch_speed_table(args.speed) if args.speed else {}
    main_table(t, archs, seeds(vs_transformer), runs, quiet, PROBES)
    length_table(args.runs, archs, PROBES)

    claims = [output_claim("MUSE beats the Transformer", t, "muse", "transformer", +1),
              output_claim("MUSE beats MUSE-simple", m, "muse-simple", "muse", -1),
              output_claim("MUSE needs the shared projection (beats MUSE-separate)", m, "muse-separate", "muse", -1)]
    claims += [output_claim(f"MUSE beats the Transformer on long input ({s}; {LENGTH_CLAIM})", t, "muse",
                            "transformer", +1, s) for s in PROBES]
    claims += [output_claim("ConvSAN 1D beats the Transformer", t, "convsan", "transformer", +1),
               output_claim("ConvSAN 2D beats ConvSAN 1D", c, "convsan2d", "convsan", +1),
               output_claim("Fast-DiSA is as good as multi-head attention", t, "fastdisa", "transformer", 0)]
    print_verdicts(claims, "Verdicts (best checkpoint, test2016 unless said).")
    speed_line(runs, quiet, args.speed)
    missing = [a for a in CMP_ARCHS if a not in t]
    if missing:
        print(f"\nNot yet in the runs: {', '.join(missing)}.")


def missing_runs(finished, unfinished, archs, expected_seeds):
    """Which of archs × expected_seeds have no finished run, and which runs are still going."""
    have = {(os.path.basename(os.path.dirname(d)), os.path.basename(d)) for d in finished}
    going = {(os.path.basename(os.path.dirname(d)), os.path.basename(d)) for d in unfinished}
    absent = [f"{a}/seed{s}" for a in archs for s in expected_seeds if (a, f"seed{s}") not in have]
    return absent, [f"{a}/{s}" for a, s in sorted(going)]


def parameter_match_line(parameters, wide="transformer-wide", target="muse"):
    w, m = sorted(set(parameters.get(wide, []))), sorted(set(parameters.get(target, [])))
    if not w or not m:
        return f"Parameter match: not measured (no {wide if not w else target} run logs yet)."
    ratio = statistics.mean(w) / statistics.mean(m)
    within = abs(ratio - 1) <= 0.01
    return (f"Parameter match: `{wide}` has {' / '.join(f'{x:,}' for x in w)} parameters, `{target}` "
            f"{' / '.join(f'{x:,}' for x in m)}: {ratio:.4f}× ({'within' if within else 'NOT within'} 1%).")


def long_section(args, single_dirs):
    """The long comparison: what is there and missing, the tables, and its own family of verdicts."""
    finished, unfinished = finished_runs(args.long)
    print(f"### The long comparison ({args.long})")
    print()
    absent, going = missing_runs(finished, unfinished, LONG_ARCHS, args.seeds)
    if absent:
        print(f"Runs not finished yet (left out): {', '.join(absent)}" +
              (f"; in progress: {', '.join(going)}" if going else "") + ".")
        print()
    if not finished:
        print("No finished runs yet: no table or verdicts.")
        return
    by_arch = runs_by_arch(finished)
    # One report per baseline the claims need; a report whose baseline has no runs yet still gives the
    # per-arch numbers for the table.
    reports = {b: report(args.attn, finished, args.long_refs, b, args.threads)
               for b in ("transformer", "transformer-wide") if b in by_arch}
    first = next(iter(reports.values()), None) or report(args.attn, finished, args.long_refs,
                                                          sorted(by_arch)[0], args.threads)
    t = outputs(reports.get("transformer", first))
    wide = outputs(reports["transformer-wide"]) if "transformer-wide" in reports else None
    archs = ordered(t, LONG_ARCHS)
    parameters = {a: [p for p in (model_parameters(d) for d in by_arch.get(a, [])) if p is not None] for a in archs}
    probes = [s for s in LONG_PROBES if any((s, "best") in t[a] for a in archs)]
    main_table(t, archs, seeds(first), per_arch_runs(first), {}, probes, parameters)
    print(parameter_match_line(parameters))
    print()
    length_table(args.long, archs, probes)

    claims = [slope_claim(t, args.long, args.long_refs)]
    for s in [MAIN] + LONG_PROBES:
        text = f"MUSE beats the parameter-matched Transformer ({s}; baseline transformer-wide)"
        claims.append(output_claim(text, wide, "muse", "transformer-wide", +1, s) if wide is not None
                      else Claim(text, +1, absent="no finished transformer-wide runs"))
    for s in LONG_PROBES:
        claims.append(output_claim(f"MUSE beats the Transformer on long input ({s}; {LENGTH_CLAIM})", t, "muse",
                                   "transformer", +1, s))
    claims += joining_claims(args, finished, single_dirs)
    print_verdicts(claims, "Verdicts of the long comparison (best checkpoint).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs")
    ap.add_argument("refs")
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--speed", help="bench/arch_speed.sh's output, measured on the machine alone")
    ap.add_argument("--long", help="the long comparison's runs (<arch>/seed<N>)")
    ap.add_argument("--long-refs", help="its references (default: REFS_DIR)")
    ap.add_argument("--seeds", default="1 2 3", help="the long comparison's seeds, to name the missing runs")
    ap.add_argument("--threads", type=int, help="attn report's threads (default: its own)")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split()]
    args.long_refs = args.long_refs or args.refs

    dirs, unfinished = finished_runs(args.runs)
    if not dirs:
        sys.exit(f"compare_verdicts: no finished <arch>/seed<N> run directories under {args.runs}")
    comparison_section(args, dirs)
    if unfinished:
        print(f"\nUnfinished runs left out: {', '.join(os.path.relpath(d, args.runs) for d in unfinished)}.")
    if args.long:
        print()
        long_section(args, dirs)


if __name__ == "__main__":
    main()
