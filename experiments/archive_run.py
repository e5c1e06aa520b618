#!/usr/bin/env python3
"""Keeps what `attn report` reads of a finished run, small enough to commit.

    experiments/archive_run.py RUN_DIR DEST_DIR --refs REFS_DIR [--tgt en] [--every 50] [--attn ./attn]

DEST_DIR gets the run layout of docs/report.md without the model files and
without any text of the corpus: log.jsonl thinned to the train records of
every --every-th update (the validation, "model" and "end" records all kept),
the scores score/, in place of each translation hyp/<set>.<model>.txt its
per-segment statistics segments/<set>.<model>.tsv (attn score --segments
against REFS_DIR/<set>.<tgt>: what attn report's paired tests, slopes and
scores by length need; a translation of a corpus that must not be shared
never enters the archive), the attention statistics stats/ when measured
(experiments/attn_stats_runs.sh; the claims on attention read them), and
train.log (attn train's messages) when it holds any. `attn report DEST_DIR`
then draws the same curves, table and tests without the model files, the
translations or the references; the median tokens/s is taken over
--every-update windows instead of all logged windows.

An archive made when archives kept translations is converted in place by
giving it as both RUN_DIR and DEST_DIR: its segments/ written, its hyp/
removed. Every translation's reference is checked to exist (and to have as
many lines) before anything is written.

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


def line_count(path):
    """Lines as attn score reads them: '\n'-terminated, a last line without one counts."""
    data = path.read_bytes()
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=pathlib.Path)
    ap.add_argument("dest_dir", type=pathlib.Path)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--attn", default="./attn")
    ap.add_argument("--refs", type=pathlib.Path, required=True, help="the references <set>.<tgt> of hyp/")
    ap.add_argument("--tgt", default="en", help="the references' language suffix (default en)")
    a = ap.parse_args()

    log = a.run_dir / "log.jsonl"
    if not log.is_file():
        sys.exit(f"archive_run: {log} not found; give a run directory of attn train")
    old_layout = sorted(p.name for p in a.run_dir.glob("score.*") if p.is_file())
    if old_layout:
        sys.exit(f"archive_run: {a.run_dir} has {', '.join(old_layout)} of an older layout; "
                 f"run experiments/migrate_run_layout.py {a.run_dir} first")
    hyps = sorted((a.run_dir / "hyp").glob("*.txt"))
    refs = {}
    for hyp in hyps:
        ref = a.refs / f"{hyp.name.rsplit('.', 2)[0]}.{a.tgt}"
        if not ref.is_file():
            sys.exit(f"archive_run: {hyp} has no reference {ref}; give --refs the folder of <set>.{a.tgt}")
        if line_count(hyp) != line_count(ref):
            sys.exit(f"archive_run: {hyp} has {line_count(hyp)} lines but its reference {ref} has "
                     f"{line_count(ref)}; translate the set again")
        refs[hyp] = ref
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
    same = a.run_dir.resolve() == a.dest_dir.resolve()
    train_log = a.run_dir / "train.log"
    if train_log.is_file() and train_log.stat().st_size > 0:
        if not same:
            shutil.copy2(train_log, a.dest_dir / train_log.name)
        kept.append(train_log.name)
    for folder in ("score", "stats"):
        if (a.run_dir / folder).is_dir() and not same:
            shutil.copytree(a.run_dir / folder, a.dest_dir / folder, dirs_exist_ok=True)
        if (a.dest_dir / folder).is_dir():
            kept.append(folder + "/")
    if hyps:
        (a.dest_dir / "segments").mkdir(exist_ok=True)
        for hyp in hyps:
            segments = a.dest_dir / "segments" / (hyp.name[:-len(".txt")] + ".tsv")
            subprocess.run([a.attn, "score", "--ref", str(refs[hyp]), "-i", str(hyp), "--segments", str(segments),
                            "--metrics", "bleu,chrf"], check=True, stdout=subprocess.DEVNULL)
        kept.append(f"segments/ ({len(hyps)} translations' statistics)")
        if same:
            shutil.rmtree(a.run_dir / "hyp")
    print(f"{a.dest_dir}: {', '.join(kept)} ({len(records)} log records)")


if __name__ == "__main__":
    main()
