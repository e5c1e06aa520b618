#!/usr/bin/env python3
"""Moves run directories of older experiment scripts into the run layout attn report reads (docs/report.md).

    experiments/migrate_run_layout.py [--set test2016] [--dry-run] PATH...

PATH is a run directory (it holds log.jsonl) or a folder searched for them (experiments/runs). In each run:

  - the scores of experiments/quality_m30k.sh's older version, score[.avg5].<M>min.json at the top of the
    run, move to score/<set>.<model>.json: <model> is best and avg5 for the largest budget M of the run,
    best-<M>min and avg5-<M>min for the others; its translations <set>[.avg5].<M>min.hyp move to
    hyp/<set>.<model>.txt alike, and its averaged models avg5.<M>min.attn to <model>.attn;
  - the same scores as sacreBLEU's text lines (score[.avg5].<M>min.txt) are removed once their BLEU and
    chrF are checked equal to the JSON's (to the text's decimals): attn report reads the JSON alone;
  - an empty train.log (the comparison's training with --quiet) is removed: the archive keeps train.log
    only when it holds something.

A run already in the layout is left as it is, so running it again changes nothing. Every run is checked
before any is changed: a text score without its JSON twin, or two files for one name, stops it with
nothing moved (exit status 2). A log without peak_rss_mb is named (attn report then shows the peak
memory as not recorded; /usr/bin/time's text in train.log is not read).
"""
import argparse
import json
import os
import pathlib
import re
import sys

BUDGET_SCORE = re.compile(r"score\.(avg5\.)?([0-9]+)min\.(json|txt)")
BUDGET_HYP = re.compile(r"(.+?)\.(avg5\.)?([0-9]+)min\.hyp")
BUDGET_MODEL = re.compile(r"avg5\.([0-9]+)min\.attn")
TEXT_SCORE = re.compile(r"^(BLEU|chrF2?\+*)\|[^=]* = ([0-9.]+)", re.M)


class Refused(Exception):
    pass


def fail(message):
    print(f"migrate_run_layout: {message}", file=sys.stderr)
    sys.exit(2)


def runs_under(path):
    if (path / "log.jsonl").is_file():
        return [path]
    return sorted(pathlib.Path(d) for d, _, files in os.walk(path) if "log.jsonl" in files)


def model_name(avg5, minutes, largest):
    return ("avg5" if avg5 else "best") + ("" if minutes == largest else f"-{minutes}min")


def same_scores(text_file, json_file):
    """Whether every BLEU and chrF line of sacreBLEU's text equals the JSON's score to the text's decimals."""
    metrics = {m["name"]: m["score"] for m in json.loads(json_file.read_text(encoding="utf-8"))}
    found = TEXT_SCORE.findall(text_file.read_text(encoding="utf-8"))
    for name, shown in found:
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        if name not in metrics or round(metrics[name], decimals) != float(shown):
            return False
    return bool(found)


def plan(run, test_set):
    """(moves [(from, to)], removals [path], remarks [str]) that bring `run` into the layout."""
    budgets = [int(m.group(2)) for p in run.iterdir() if (m := BUDGET_SCORE.fullmatch(p.name))]
    budgets += [int(m.group(3)) for p in run.iterdir() if (m := BUDGET_HYP.fullmatch(p.name))]
    largest = max(budgets, default=None)
    moves, removals, remarks = [], [], []
    for p in sorted(run.iterdir()):
        if m := BUDGET_SCORE.fullmatch(p.name):
            name = model_name(m.group(1), int(m.group(2)), largest)
            target = run / "score" / f"{test_set}.{name}.json"
            if m.group(3) == "json":
                moves.append((p, target))
                continue
            twin = p.with_suffix(".json")
            if not twin.is_file():
                raise Refused(f"{p}: sacreBLEU's text without its JSON twin {twin.name}; "
                              f"score the translations again with attn score --format json")
            if not same_scores(p, twin):
                raise Refused(f"{p}: its scores differ from {twin.name}'s; which one is right is not known")
            removals.append(p)
        elif m := BUDGET_HYP.fullmatch(p.name):
            moves.append((p, run / "hyp" / f"{m.group(1)}.{model_name(m.group(2), int(m.group(3)), largest)}.txt"))
        elif m := BUDGET_MODEL.fullmatch(p.name):
            moves.append((p, run / f"{model_name(True, int(m.group(1)), largest)}.attn"))
    train_log = run / "train.log"
    if train_log.is_file() and train_log.stat().st_size == 0:
        removals.append(train_log)
    for source, target in moves:
        if target.exists() or sum(t == target for _, t in moves) > 1:
            raise Refused(f"{source}: {target} exists already; move one of them by hand")
    log = (run / "log.jsonl").read_text(encoding="utf-8", errors="replace")
    if '"peak_rss_mb"' not in log:
        remarks.append("log.jsonl records no peak_rss_mb: attn report shows its peak memory as not recorded")
    return moves, removals, remarks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", type=pathlib.Path, metavar="PATH")
    ap.add_argument("--set", default="test2016", help="the test set of the budget score files (default test2016)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    a = ap.parse_args()

    runs = []
    for path in a.paths:
        if not path.is_dir():
            fail(f"{path}: no such directory; give run directories or a folder of them")
        found = runs_under(path)
        if not found:
            fail(f"{path} holds no run directory (no log.jsonl under it)")
        runs += [r for r in found if r not in runs]
    plans, refused = [], []
    for run in runs:
        try:
            plans.append((run, *plan(run, a.set)))
        except Refused as e:
            refused.append(str(e))
    if refused:
        fail("; ".join(refused) + "; nothing was changed")
    changed = 0
    for run, moves, removals, remarks in plans:
        for remark in remarks:
            print(f"{run}: {remark}")
        if not moves and not removals:
            continue
        changed += 1
        for source, target in moves:
            print(f"{run}: {source.relative_to(run)} -> {target.relative_to(run)}")
            if not a.dry_run:
                target.parent.mkdir(exist_ok=True)
                source.rename(target)
        for p in removals:
            print(f"{run}: {p.relative_to(run)} removed")
            if not a.dry_run:
                p.unlink()
    print(f"{changed} of {len(plans)} runs {'would change' if a.dry_run else 'changed'}, "
          f"{len(plans) - changed} in the run layout already")


if __name__ == "__main__":
    main()
