#!/usr/bin/env python3
"""Run-ons: how often a model keeps writing past the end of a sentence whose
source has no final punctuation, and what a decoding option does about it.

For each model: test2016 as it is and with the sources' final punctuation
removed (. ! ? and closing quotes before them), translated with beam 5 and
each of the given decoding options; per cell the run-on share (outputs longer
than 1.5x their reference in words), the length ratio (output words over
reference words) and BLEU; and BLEU on test2016 joined x2 ... x8 (the probes
of experiments/make_long_test.py, made in OUT/data) with each option, so a fix's
cost on ordinary inputs shows too. Reruns reuse every finished translation.

  experiments/run_ons.py --attn ATTN --data DIR --out OUT [--joins "2 4 6 8"]
      [--option "" --option "--no-repeat-ngram-size 3" ...] NAME=MODEL ...

Prints a Markdown table; writes OUT/run_ons.json.
"""
import argparse
import json
import os
import re
import subprocess
import sys

FINAL = re.compile(r'\s*[.!?]+["\u201d\u2019\']*\s*$')


def strip_final_punctuation(line):
    return FINAL.sub("", line.rstrip("\n"))


def run_on_stats(hyps, refs):
    """(run-on share, length ratio) of hypotheses against references, in words."""
    long = sum(len(h.split()) > 1.5 * len(r.split()) for h, r in zip(hyps, refs))
    hyp_words = sum(len(h.split()) for h in hyps)
    ref_words = sum(len(r.split()) for r in refs)
    return long / max(1, len(refs)), hyp_words / max(1, ref_words)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def write_atomic(path, lines):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)
    os.replace(path + ".tmp", path)


def slug(option):
    return re.sub(r"[^a-z0-9]+", "-", option.lower()).strip("-") or "plain"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn", required=True)
    ap.add_argument("--data", required=True, help="folder with test2016.de and test2016.en")
    ap.add_argument("--out", required=True)
    ap.add_argument("--joins", default="2 4 6 8")
    ap.add_argument("--option", action="append", help="decoding flags of one column ('' = none)")
    ap.add_argument("--threads", default="2")
    ap.add_argument("models", nargs="+", help="NAME=MODEL.attn")
    a = ap.parse_args()
    options = a.option if a.option else [""]
    os.makedirs(os.path.join(a.out, "data"), exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    test = os.path.join(a.data, "test2016")
    sets = {"test2016": test, "test2016.nostop": os.path.join(a.out, "data", "test2016.nostop")}
    if not os.path.exists(sets["test2016.nostop"] + ".de"):
        write_atomic(sets["test2016.nostop"] + ".en", read_lines(test + ".en"))
        write_atomic(sets["test2016.nostop"] + ".de", [strip_final_punctuation(s) for s in read_lines(test + ".de")])
    for k in a.joins.split():
        prefix = os.path.join(a.out, "data", f"test2016.join{k}")
        if not os.path.exists(prefix + ".en"):
            subprocess.run([sys.executable, os.path.join(here, "make_long_test.py"), k, test, prefix,
                            "--langs=de,en"], check=True)
        sets[f"test2016.join{k}"] = prefix

    results = []
    for spec in a.models:
        name, model = spec.split("=", 1)
        for option in options:
            for set_name, prefix in sets.items():
                hyp = os.path.join(a.out, name, slug(option), set_name + ".txt")
                os.makedirs(os.path.dirname(hyp), exist_ok=True)
                if not os.path.exists(hyp):
                    cmd = [a.attn, "translate", "-m", model, "-i", prefix + ".de", "-o", hyp, "--beam", "5",
                           "--threads", a.threads] + option.split()
                    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
                refs = read_lines(prefix + ".en")
                hyps = read_lines(hyp)
                share, ratio = run_on_stats(hyps, refs)
                score = subprocess.run([a.attn, "score", "--ref", prefix + ".en", "-i", hyp, "--metrics", "bleu",
                                        "--format", "json"], check=True, capture_output=True, text=True)
                bleu = json.loads(score.stdout)[0]["score"]
                results.append({"model": name, "option": option, "set": set_name, "run_on_share": share,
                                "length_ratio": ratio, "bleu": bleu})
    with open(os.path.join(a.out, "run_ons.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print("| model | decoding | set | run-on share | length ratio | BLEU |")
    print("|---|---|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['model']} | {r['option'] or 'beam 5'} | {r['set']} | {100 * r['run_on_share']:.1f}% "
              f"| {r['length_ratio']:.3f} | {r['bleu']:.2f} |")


if __name__ == "__main__":
    main()
