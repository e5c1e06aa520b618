#!/usr/bin/env python3
"""Small, independent Python versions of what sacreBLEU 2.x computes, to check
`attn score` where sacreBLEU itself cannot be installed (Debian has no
package). Python's own str.split/rstrip/lower and re module are the point:
they are what sacreBLEU's numbers rest on. `make test` runs `paired`
(tests/cli/test_score_cli.cpp).

    tools/sacrebleu_ref.py score ATTN_BINARY HYP REF [REF ...]
    tools/sacrebleu_ref.py score ATTN_BINARY --perturb REF   # makes a hypothesis from REF
        corpus BLEU (13a, exp smoothing), chrF (order 6, beta 2) and chrF++ (plus
        word orders 1-2) of HYP; prints both scores, exits 1 unless they agree to the last bit.

    attn score -r REF -i BASE -i SYS ... --paired-bs --dump-resamples draws.json
    tools/sacrebleu_ref.py paired draws.json
        sacreBLEU's paired tests (significance.py) on attn's own draws: the dump holds the
        per-segment statistics of every system and metric, the resample indices (paired
        bootstrap) or coin flips (approximate randomization) and attn's results; each score,
        mean, CI half-width and p-value is recomputed with sacreBLEU's formulas (metric
        defaults: BLEU exp smoothing, chrF effective order, TER); exits 1 when one differs.
        It does not draw numbers itself.

    tools/sacrebleu_ref.py wmt17 ATTN_BINARY wmt17_en_de_systems.pkl.bz2
        attn's paired tests against the numbers sacreBLEU publishes for the WMT17 en-de
        systems: its README's --paired-bs table (every score, mu, CI and p-value, to the
        printed digits) and test_significance.py's p-values (bootstrap with 2000 resamples
        against Moses', randomization against multeval's, within sacreBLEU's own tolerance
        of 0.01). The systems file is sacreBLEU's test/wmt17_en_de_systems.pkl.bz2 (not
        shipped here). Exits 1 on any difference.
"""
import bz2
import json
import math
import os
import pickle
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter

_RULES = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for entity, char in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        line = line.replace(entity, char)
    line = f" {line} "
    for pattern, replacement in _RULES:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


def word_ngrams(tokens, max_order):
    counts = Counter()
    for n in range(1, max_order + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i:i + n])] += 1
    return counts


def bleu_from_counts(correct, total, hyp_len, ref_len):
    """BLEU with exp smoothing from n-gram matches and counts per order and the two lengths."""
    orders = len(correct)
    bp = 1.0 if hyp_len >= ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0)
    if not any(correct):
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
    logs = [math.log(p) if p > 0.0 else -9999999999 for p in precisions]
    log_sum = 0
    for value in logs:  # left to right, as sum() did before Python 3.12
        log_sum += value
    return bp * math.exp(log_sum / orders)


def corpus_bleu(hyps, ref_streams, max_order=4):
    correct = [0] * max_order
    total = [0] * max_order
    hyp_len = ref_len = 0
    for i, hyp in enumerate(hyps):
        refs = [stream[i] for stream in ref_streams if stream[i] != ""]
        merged, lengths = Counter(), []
        for ref in refs:
            tokens = tokenize_13a(ref.rstrip()).split()
            lengths.append(len(tokens))
            for gram, count in word_ngrams(tokens, max_order).items():
                merged[gram] = max(merged[gram], count)
        tokens = tokenize_13a(hyp.rstrip()).split()
        hyp_len += len(tokens)
        ref_len += min(lengths, key=lambda length: (abs(length - len(tokens)), length))
        for gram, count in word_ngrams(tokens, max_order).items():
            total[len(gram) - 1] += count
            correct[len(gram) - 1] += min(count, merged.get(gram, 0))
    return bleu_from_counts(correct, total, hyp_len, ref_len)


def split_punctuation(line):
    """chrF++'s words: one trailing, else one leading, ASCII mark split off."""
    marks = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
    words = []
    for word in line.split():
        if len(word) > 1 and word[-1] in marks:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in marks:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def match_stats(h, r):
    matches = sum(min(count, r[gram]) for gram, count in h.items() if gram in r)
    return [sum(h.values()) if r else 0, sum(r.values()), matches]


def chrf_stats(hyp, ref, order, word_order=0):
    stats = []
    hyp_chars, ref_chars = "".join(hyp.split()), "".join(ref.split())
    for n in range(1, order + 1):
        h = Counter(hyp_chars[i:i + n] for i in range(len(hyp_chars) - n + 1))
        r = Counter(ref_chars[i:i + n] for i in range(len(ref_chars) - n + 1))
        stats += match_stats(h, r)
    hyp_words, ref_words = split_punctuation(hyp), split_punctuation(ref)
    for n in range(1, word_order + 1):
        h = Counter(tuple(hyp_words[i:i + n]) for i in range(len(hyp_words) - n + 1))
        r = Counter(tuple(ref_words[i:i + n]) for i in range(len(ref_words) - n + 1))
        stats += match_stats(h, r)
    return stats


def chrf_f(stats, beta):
    """chrF from (hyp, ref, match) counts per order, the orders with both sides averaged."""
    factor = beta ** 2
    precision = recall = 0.0
    effective = 0
    for n in range(len(stats) // 3):
        n_hyp, n_ref, n_match = stats[3 * n:3 * n + 3]
        if n_hyp > 0 and n_ref > 0:
            precision += n_match / n_hyp
            recall += n_match / n_ref
            effective += 1
    if effective == 0:
        return 0.0
    precision /= effective
    recall /= effective
    if precision + recall == 0:
        return 0.0
    score = (1 + factor) * precision * recall
    score /= factor * precision + recall
    return 100 * score


def corpus_chrf(hyps, ref_streams, order=6, beta=2, word_order=0):
    totals = [0] * (3 * (order + word_order))
    for i, hyp in enumerate(hyps):
        best, best_f = None, -1.0
        for stream in ref_streams:
            if stream[i] == "":
                continue
            stats = chrf_stats(hyp, stream[i], order, word_order)
            f = chrf_f(stats, beta)
            if f > best_f:
                best, best_f = stats, f
        totals = [a + b for a, b in zip(totals, best)]
    return chrf_f(totals, beta)


def read_lines(path):
    with open(path, encoding="utf-8", newline="\n") as file:
        return [line.rstrip() for line in file]


def perturb(lines, seed=7):
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split()
        if words and rng.random() < 0.5:
            del words[rng.randrange(len(words))]
        if len(words) > 2 and rng.random() < 0.3:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        if words and rng.random() < 0.2:
            words[0] = words[0].lower()
        out.append(" ".join(words))
    return out


def score_main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    binary = argv[0]
    with tempfile.TemporaryDirectory() as scratch:
        if argv[1] == "--perturb":
            refs = argv[2:]
            hyp = f"{scratch}/hyp.txt"
            with open(hyp, "w", encoding="utf-8") as file:
                file.write("\n".join(perturb(read_lines(refs[0]))) + "\n")
        else:
            hyp, refs = argv[1], argv[2:]
        hyps = read_lines(hyp)
        streams = [read_lines(ref) for ref in refs]
        want = {"BLEU": corpus_bleu(hyps, streams), "chrF2": corpus_chrf(hyps, streams),
                "chrF2++": corpus_chrf(hyps, streams, word_order=2)}
        ref_args = [arg for ref in refs for arg in ("-r", ref)]
        got = {}
        for extra in ([], ["-m", "chrf", "--chrf-word-order", "2"]):
            output = subprocess.run([binary, "score", *ref_args, "-i", hyp, *extra], check=True,
                                    capture_output=True, text=True)
            got.update({item["name"]: item["score"] for item in json.loads(output.stdout)})
    agree = True
    for name, value in want.items():
        same = got.get(name) == value
        agree = agree and same
        print(f"{name:6} python {value!r:24} attn {got.get(name)!r:24} {'same' if same else 'DIFFERENT'}")
    return 0 if agree else 1


def bleu_score(stats):
    orders = (len(stats) - 2) // 2
    return bleu_from_counts(stats[2:2 + orders], stats[2 + orders:], stats[0], stats[1])


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
        return lambda stats: chrf_f(stats, beta)
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


def paired_main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    with open(argv[0], encoding="utf-8") as f:
        dump = json.load(f)
    failures = check(dump)
    print("ok" if failures == 0 else f"{failures} differences")
    return 1 if failures else 0


MOSES_BS = {"C-3MA.4959": 0.0, "FBK.4870": 0.01267, "KIT.4950": 0.02233, "LMU-nmt-reranked.4934": 0.04383,
            "LMU-nmt-single.4893": 0.20783, "online-A.0": 0.0, "online-B.0": 0.38100, "online-F.0": 0.0,
            "online-G.0": 0.0, "PROMT-Rule-based.4735": 0.0, "RWTH-nmt-ensemble.4921": 0.01167,
            "SYSTRAN.4847": 0.20983, "TALP-UPC.4834": 0.0, "uedin-nmt.4722": 0.0, "xmu.4910": 0.25483}
MULTEVAL_AR = {"C-3MA.4959": 0.0001, "FBK.4870": 0.0218, "KIT.4950": 0.0410, "LMU-nmt-reranked.4934": 0.09029,
               "LMU-nmt-single.4893": 0.58494, "online-A.0": 0.0001, "online-B.0": 0.94111, "online-F.0": 0.0001,
               "online-G.0": 0.0001, "PROMT-Rule-based.4735": 0.0001, "RWTH-nmt-ensemble.4921": 0.0207,
               "SYSTRAN.4847": 0.59914, "TALP-UPC.4834": 0.0001, "uedin-nmt.4722": 0.0001, "xmu.4910": 0.71073}
# sacreBLEU's README: -m bleu chrf --paired-bs, LIUM-NMT as the baseline.
README_ROWS = [
    "Baseline: newstest2017.LIUM-NMT.4900.en-de | 26.6 (26.6 ± 0.6) | 55.9 (55.9 ± 0.5)",
    "newstest2017.online-A.0.en-de | 20.8 (20.8 ± 0.6) | 52.0 (52.0 ± 0.4)",
    "| (p = 0.0010)* | (p = 0.0010)*",
    "newstest2017.online-B.0.en-de | 26.7 (26.6 ± 0.7) | 56.3 (56.3 ± 0.5)",
    "| (p = 0.3077) | (p = 0.0240)*",
    "newstest2017.online-F.0.en-de | 15.5 (15.4 ± 0.5) | 49.3 (49.3 ± 0.4)",
    "newstest2017.online-G.0.en-de | 18.2 (18.2 ± 0.5) | 51.6 (51.6 ± 0.4)",
]


def short(name):
    return name.replace("Baseline: ", "").replace("newstest2017.", "").replace(".en-de", "")


def wmt17_main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    binary, systems_path = os.path.abspath(argv[0]), argv[1]
    systems = pickle.load(bz2.BZ2File(systems_path))
    _, refs = systems.pop()
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        paths = {}
        for name, lines in systems:
            paths[name] = f"{scratch}/{name}"
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write("\n".join(line.rstrip() for line in lines) + "\n")
        with open(f"{scratch}/ref", "w", encoding="utf-8") as f:
            f.write("\n".join(line.rstrip() for line in refs[0]) + "\n")

        def score(names, *flags):
            cmd = [binary, "score", "-r", "ref", "-i", *names, *flags]
            return subprocess.run(cmd, cwd=scratch, check=True, capture_output=True, text=True).stdout

        readme = ["newstest2017.LIUM-NMT.4900.en-de"] + [f"newstest2017.online-{x}.0.en-de" for x in "ABFG"]
        table = " ".join(score(readme, "-m", "bleu,chrf", "--paired-bs", "-f", "text").split())
        for row in README_ROWS:
            found = " ".join(row.split()) in table
            failures += not found
            print(f"README {'ok  ' if found else 'DIFF'} {row}")
        everyone = [name for name, _ in systems]
        for flags, published in ((["--paired-bs", "--paired-bs-n", "2000"], MOSES_BS), (["--paired-ar"], MULTEVAL_AR)):
            table_rows = json.loads(score(everyone, "-m", "bleu", "--tok", "none", *flags))
            for row in table_rows[1:]:
                p, want = row["BLEU"]["p_value"], published[short(row["system"])]
                ok = abs(p - want) < 1e-2
                failures += not ok
                print(f"{flags[0]:11} {short(row['system']):24} attn p = {p:.5f} published {want:.5f} "
                      f"{'ok' if ok else 'DIFF'}")
    print("all agree" if failures == 0 else f"{failures} differences")
    return 1 if failures else 0


COMMANDS = {"score": score_main, "paired": paired_main, "wmt17": wmt17_main}


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
