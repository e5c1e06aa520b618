#!/usr/bin/env python3
"""Keeps what `attn report` reads of a finished run, small enough to commit.

    experiments/archive_run.py RUN_DIR DEST_DIR [--every 50] [--attn ./attn]

DEST_DIR gets the run layout of docs/report.md without the model files:
log.jsonl thinned to the train records of every --every-th update (the
validation, "model" and "end" records all kept), the translations hyp/ and
their scores score/ (kept for paired significance tests), the attention
statistics stats/ when measured (experiments/attn_stats_runs.sh; the claims on
attention read them), and train.log (attn train's messages) when it holds any. `attn report DEST_DIR` then draws the same
curves and table without the model files; the median tokens/s is taken over
--every-update windows instead of all logged windows.

A log written before the trainer logged "model" records gets one, made from
`attn info --json` of the run's best.attn (else last.attn), placed first.
A run with files of an older layout (score.<M>min.json) is refused: migrate it
first (experiments/migrate_run_layout.py).
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=pathlib.Path)
    ap.add_argument("dest_dir", type=pathlib.Path)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--attn", default="./attn")
    a = ap.parse_args()

    log = a.run_dir / "log.jsonl"
    if not log.is_file():
        sys.exit(f"archive_run: {log} not found; give a run directory of attn train")
    old_layout = sorted(p.name for p in a.run_dir.glob("score.*") if p.is_file())
    if old_layout:
        sys.exit(f"archive_run: {a.run_dir} has {', '.join(old_layout)} of an older layout; "
                 f"run experiments/migrate_run_layout.py {a.run_dir} first")
    records = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue  # attn report would skip it with a note; an archive leaves it out
        if r.get("split") != "train" or r.get("update", 0) % a.every == 0:
            records.append(r)

    def info(model):
        return json.loads(subprocess.run([a.attn, "info", "--json", str(model)], check=True,
                                         capture_output=True, text=True).stdout)

    if not any(r.get("split") == "model" for r in records):
        model = next((p for p in (a.run_dir / "best.attn", a.run_dir / "last.attn") if p.is_file()), None)
        if model is None:
            sys.exit(f"archive_run: {a.run_dir} has no model record in its log and no best.attn or last.attn")
        i = info(model)
        records.insert(0, {"split": "model", "update": 0, "elapsed_s": 0.0, "arch": i["config"]["arch"],
                           "parameters": i["parameters"], "config": i["config"],
                           "note": f"added by experiments/archive_run.py from {model.name}"})
    # A run that ended before the trainer logged "end" records: last.attn saved
    # after the last logged update means it finished (else it was killed).
    last = a.run_dir / "last.attn"
    if records[-1].get("split") != "end" and last.is_file():
        state = info(last).get("train_state", {})
        logged = max(r.get("update", 0) for r in records)
        if state.get("update") == logged:
            records.append({"split": "end", "update": logged, "elapsed_s": state["elapsed_s"], "reason": "finished",
                            "note": "added by experiments/archive_run.py: last.attn holds the last logged update"})

    a.dest_dir.mkdir(parents=True, exist_ok=True)
    with open(a.dest_dir / "log.jsonl", "w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n")
    kept = ["log.jsonl"]
    train_log = a.run_dir / "train.log"
    if train_log.is_file() and train_log.stat().st_size > 0:
        shutil.copy2(train_log, a.dest_dir / train_log.name)
        kept.append(train_log.name)
    for folder in ("hyp", "score", "stats"):
        if (a.run_dir / folder).is_dir():
            shutil.copytree(a.run_dir / folder, a.dest_dir / folder, dirs_exist_ok=True)
            kept.append(folder + "/")
    print(f"{a.dest_dir}: {', '.join(kept)} ({len(records)} log records)")


if __name__ == "__main__":
    main()
