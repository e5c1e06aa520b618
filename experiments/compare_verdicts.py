#!/usr/bin/env python3
"""The comparison's tables from a finished (or partial) experiments/compare.sh run, and its verdicts from attn.

    experiments/compare_verdicts.py RUNS_DIR [--refs REFS_DIR] [--claims FILE] [--attn build/attn] [--order "A B ..."]
                              [--speed ARCH_SPEED.txt] [--memory A:B] [--param-match A:B]
                              [--long LONG_RUNS_DIR [--long-refs DIR] [--long-claims FILE]] [--threads N] > section.md

RUNS_DIR holds <arch>/seed<N> run directories (compare.sh's --out or --archive). Archived runs carry
their translations' per-segment statistics (segments/), which is all the tests need; runs that still hold
their translations (hyp/, compare.sh's --out) need --refs REFS_DIR, the references (compare.sh's
OUT/refs). Only finished runs (a `done` file) are read. It prints, in Markdown:

  - the table: per arch, BLEU mean ± sd over the seeds (best checkpoint and the average of the last 5) on
    the test set and its joined probes, chrF2, the difference to --baseline with its pooled seed-matched
    paired-bootstrap p-value (`attn report --json`), median training tokens/s and peak memory;
  - per arch and set, the output's length ÷ the reference's and the 4-gram precision (from the runs'
    score files): on probes longer than the training inputs every model stops early, so BLEU there is
    mostly the brevity penalty;
  - the verdicts of --claims FILE: `attn report RUNS [--refs REFS] --claims FILE` (docs/verdicts.md). The
    statistics and the rule are attn's; this script only calls it.

--order: the rows' order (default: attn report's, the baseline first). --speed: bench/arch_speed.sh's
output measured on the machine alone, whose tokens/s and peak memory then replace the runs' own.
--memory A:B prints A's peak training memory and speed as a multiple of B's (A at less memory: holds or
not). --param-match A:B says whether A's parameter count is within 1% of B's (from the runs' log.jsonl).

--long DIR: a second comparison (the long one), with its own table, length table and --long-claims FILE,
decided with the runs of both comparisons given (its claims name <comparison folder>/<arch> groups).
--threads: passed to attn report (default: its own, all cores). Nothing here is judged by hand: rerun it.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys


def finished_runs(runs_dir):
    """(finished <arch>/seed<N> directories, unfinished ones): a run counts once it has its `done` file."""
    dirs = sorted(d for d in glob.glob(f"{runs_dir}/*/seed*") if os.path.isdir(d))
    return [d for d in dirs if os.path.exists(f"{d}/done")], [d for d in dirs if not os.path.exists(f"{d}/done")]


def attn_report(args, dirs, refs, extra):
    threads = ["--threads", str(args.threads)] if args.threads else []
    with_refs = ["--refs", refs] if refs else []
    result = subprocess.run([args.attn, "report", *dirs, *with_refs, *extra, *threads], capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit(f"compare_verdicts: attn report failed: {result.stderr.strip()}")
    return result.stdout


def report_json(args, dirs, refs):
    return json.loads(attn_report(args, dirs, refs, ["--baseline", args.baseline, "--json"]))


def outputs(rep):
    """{arch: {(set, model): output}} of one report."""
    return {a["arch"]: {(o["set"], o["model"]): o for o in a["outputs"]} for a in rep["comparison"]["archs"]}


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
    """{group: [run records]}, named by the runs' <group>/seed<N> folder as attn report names them."""
    runs = {}
    for r in rep["runs"]:
        runs.setdefault(os.path.basename(os.path.dirname(os.path.normpath(r["dir"]))), []).append(r)
    return runs


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def model_parameters(run_dir):
    """The "parameters" field of a run's log.jsonl "split": "model" record."""
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


def arch_speed_table(path):
    """{arch: (tokens/s, peak RSS GB)} from bench/arch_speed.sh's rows: arch, median tok/s, ÷ transformer,
    ÷ its fp32, windows, peak RSS GB."""
    rows = {}
    with open(path) as f:
        for line in f:
            cells = line.split()
            if len(cells) == 6 and re.fullmatch(r"[\d.]+", cells[1]) and re.fullmatch(r"[\d.]+", cells[5]):
                rows[cells[0]] = (float(cells[1]), float(cells[5]))
    return rows


def k_of(set_name):
    match = re.search(r"\.join(\d+)$", set_name)
    return int(match.group(1)) if match else 1


def probe_header(probes):
    return " | ".join(("joined " if i == 0 else "") + f"×{k_of(s)}" for i, s in enumerate(probes))


def speed_and_memory(runs, quiet, arch):
    if arch in quiet:
        return quiet[arch][0], quiet[arch][1] * 1000
    return (median_of(r.get("median_target_tokens_per_s") for r in runs.get(arch, [])),
            median_of(r.get("peak_rss_mb") for r in runs.get(arch, [])))


def main_table(rep, archs, quiet, parameters=None):
    t, runs, main = outputs(rep), per_arch_runs(rep), rep["comparison"]["main_set"]
    probes = [s for s in rep["comparison"]["sets"] if s != main]
    seeds = {a["arch"]: a["seeds"] for a in rep["comparison"]["archs"]}
    param_head = " parameters |" if parameters is not None else ""
    print(f"| `--arch` | seeds |{param_head} {main} BLEU, best | Δ vs {rep['comparison']['baseline']} (p) | average of "
          f"last 5 | Δ (p) | chrF2, best | {probe_header(probes)} | train tok/s{' (alone)' if quiet else ''} | peak MB |")
    print("| --- | ---: |" + (" ---: |" if parameters is not None else "") + " ---: |" * (7 + len(probes)))
    for a in archs:
        best, avg5 = t[a].get((main, "best")), t[a].get((main, "avg5"))
        probe_cells = [mean_sd((t[a].get((s, "best")) or {}).get("bleu")) for s in probes]
        speed, rss = speed_and_memory(runs, quiet, a)
        measured = lambda v: f"{v:,.0f}" if v is not None else "—"
        param_cell = ""
        if parameters is not None:
            param_cell = f" {' / '.join(f'{c:,}' for c in sorted(set(parameters.get(a, [])))) or '—'} |"
        print(f"| `{a}` | {len(seeds.get(a, []))} |{param_cell} {mean_sd((best or {}).get('bleu'))} "
              f"| {delta_p(best)} | {mean_sd((avg5 or {}).get('bleu'))} | {delta_p(avg5)} "
              f"| {mean_sd((best or {}).get('chrf'))} | {' | '.join(probe_cells)} | {measured(speed)} | {measured(rss)} |")
    print()


def length_table(runs_dir, archs, sets):
    """Per arch and set: hypothesis ÷ reference length and 4-gram precision (means over the seeds, best
    checkpoint) from the runs' score/<set>.best.json."""
    print("Output length ÷ reference length, and 4-gram precision in %, on the test set and its joined probes "
          "(best checkpoint, mean over the seeds):")
    print()
    print(f"| `--arch` | {sets[0]} | {probe_header(sets[1:])} |")
    print("| --- |" + " ---: |" * len(sets))
    for a in archs:
        cells = []
        for s in sets:
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


def pair(text, flag):
    parts = text.split(":")
    if len(parts) != 2 or not all(parts):
        sys.exit(f"compare_verdicts: {flag} takes A:B (two run groups), got {text!r}")
    return parts


def memory_line(rep, quiet, spec, speed_file):
    a, b = pair(spec, "--memory")
    runs = per_arch_runs(rep)
    (sa, ma), (sb, mb) = speed_and_memory(runs, quiet, a), speed_and_memory(runs, quiet, b)
    if None in (sa, ma, sb, mb):
        print(f"- {a} at less memory than {b}: **not measured** (no speed or memory of one of them).")
        return
    where = (f"`bench/arch_speed.sh` on the machine alone, {speed_file}" if a in quiet and b in quiet
             else "medians over the seeds' runs, logged beside other work: `--speed` takes quiet-machine ratios")
    print(f"- {a} at less memory than {b}: **{'holds' if ma < mb else 'does not hold'}** (peak training memory "
          f"{ma / mb:.2f}× {b}'s); training speed {sa / sb:.2f}× {b}'s ({where}).")


def parameter_match_line(parameters, spec):
    a, b = pair(spec, "--param-match")
    pa, pb = sorted(set(parameters.get(a, []))), sorted(set(parameters.get(b, [])))
    if not pa or not pb:
        return f"Parameter match: not measured (no {a if not pa else b} run logs)."
    ratio = statistics.mean(pa) / statistics.mean(pb)
    return (f"Parameter match: `{a}` has {' / '.join(f'{x:,}' for x in pa)} parameters, `{b}` "
            f"{' / '.join(f'{x:,}' for x in pb)}: {ratio:.4f}× ({'within' if abs(ratio - 1) <= 0.01 else 'NOT within'} 1%).")


def ordered(archs, order):
    return [a for a in order if a in archs] + [a for a in archs if a not in order]


def section(args, runs_dir, refs, claims, claim_dirs, with_parameters):
    finished, unfinished = finished_runs(runs_dir)
    if not finished:
        print(f"No finished <arch>/seed<N> runs under {runs_dir} yet: no table or verdicts.")
        return
    rep = report_json(args, finished, refs)
    archs = ordered([a["arch"] for a in rep["comparison"]["archs"]], args.order)
    quiet = arch_speed_table(args.speed) if args.speed and not with_parameters else {}
    parameters = None
    if with_parameters:
        parameters = {a: [p for p in (model_parameters(f"{runs_dir}/{a}/{os.path.basename(d)}")
                                      for d in finished if os.path.basename(os.path.dirname(d)) == a) if p is not None]
                      for a in archs}
    main_table(rep, archs, quiet, parameters)
    if with_parameters and args.param_match:
        print(parameter_match_line(parameters, args.param_match))
        print()
    length_table(runs_dir, archs, rep["comparison"]["sets"])
    if claims:
        print(attn_report(args, claim_dirs or finished, refs, ["--claims", claims]), end="")
    if args.memory and not with_parameters:
        print(end="\n")
        memory_line(rep, quiet, args.memory, args.speed)
    if unfinished:
        print(f"\nUnfinished runs left out: {', '.join(os.path.relpath(d, runs_dir) for d in unfinished)}.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs")
    ap.add_argument("--refs", help="the references <set>.<tgt> of runs that hold translations (hyp/)")
    ap.add_argument("--claims", help="the claims file of RUNS_DIR's comparison (docs/verdicts.md)")
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--baseline", default="transformer", help="attn report's --baseline for the Δ columns")
    ap.add_argument("--order", default="", help="the rows' order, space-separated (others follow)")
    ap.add_argument("--speed", help="bench/arch_speed.sh's output, measured on the machine alone")
    ap.add_argument("--memory", help="A:B — A's peak training memory and speed against B's")
    ap.add_argument("--param-match", help="A:B — is A's parameter count within 1%% of B's (long table)")
    ap.add_argument("--long", help="the long comparison's runs (<arch>/seed<N>)")
    ap.add_argument("--long-refs", help="its references (default: --refs)")
    ap.add_argument("--long-claims", help="its claims file, decided with both comparisons' runs")
    ap.add_argument("--threads", type=int, help="attn report's threads (default: its own)")
    args = ap.parse_args()
    args.order = args.order.split()
    args.long_refs = args.long_refs or args.refs
    section(args, args.runs, args.refs, args.claims, None, False)
    if args.long:
        print()
        print(f"### The long comparison ({args.long})")
        print()
        both = finished_runs(args.runs)[0] + finished_runs(args.long)[0]
        section(args, args.long, args.long_refs, args.long_claims, both, True)


if __name__ == "__main__":
    main()
