#!/usr/bin/env python3
"""The long-input probe: join K consecutive lines of a test set, on both sides.

    experiments/make_long_test.py K IN_PREFIX OUT_PREFIX [--langs=de,en]

reads IN_PREFIX.de and IN_PREFIX.en (other suffixes with --langs=SRC,TGT) and writes
OUT_PREFIX.de and OUT_PREFIX.en, where output line i is input lines
K·i … K·i+K−1 joined by one space. Models trained on single sentences are then
tested on inputs K times longer than the sentences they saw. Only whole groups
are written (1,000 lines joined by 6 give 166 lines; the last 4 are dropped), so
every probe line is exactly K sentences. Lines are stripped of surrounding
white space before joining. Exit status 2 with one line on bad input.
"""
import os
import sys


def fail(message):
    print(f"make_long_test: {message}", file=sys.stderr)
    sys.exit(2)


def read_lines(path):
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            return [line.rstrip("\n").strip() for line in f]
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(f"{path}: not UTF-8 ({e.reason} at byte {e.start})")


def write_atomically(path, lines):
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(line + "\n" for line in lines)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        fail(f"{path}: {e.strerror}")


def main(argv):
    args = [a for a in argv if not a.startswith("--langs")]
    langs = ["de", "en"]
    for a in argv:
        if a.startswith("--langs="):
            langs = a.split("=", 1)[1].split(",")
    if len(args) != 3:
        fail("usage: make_long_test.py K IN_PREFIX OUT_PREFIX [--langs=de,en]")
    try:
        k = int(args[0])
    except ValueError:
        fail(f"K must be a whole number ≥ 1 (got {args[0]!r})")
    if k < 1:
        fail(f"K must be a whole number ≥ 1 (got {k})")
    sides = {lang: read_lines(f"{args[1]}.{lang}") for lang in langs}
    counts = {lang: len(lines) for lang, lines in sides.items()}
    if len(set(counts.values())) != 1:
        fail("the sides have different line counts: " + ", ".join(f"{args[1]}.{l}: {n}" for l, n in counts.items()))
    groups = next(iter(counts.values())) // k
    if groups == 0:
        fail(f"{args[1]}: fewer than K = {k} lines")
    for lang, lines in sides.items():
        joined = [" ".join(lines[g * k:(g + 1) * k]) for g in range(groups)]
        write_atomically(f"{args[2]}.{lang}", joined)


if __name__ == "__main__":
    main(sys.argv[1:])
