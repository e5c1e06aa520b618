#!/usr/bin/env python3
"""Cross-checks `attn score` against a small, independent Python version of
sacreBLEU 2.x's corpus BLEU (13a, exp smoothing), chrF (order 6, beta 2) and
chrF++ (plus word orders 1-2),
for machines where sacreBLEU itself cannot be installed (Debian has no
package). Python's own str.split/rstrip/lower and re module are the point:
they are what sacreBLEU's numbers rest on.

    tools/check_score.py ATTN_BINARY HYP REF [REF ...]
    tools/check_score.py ATTN_BINARY --perturb REF   # makes a hypothesis from REF

Prints both scores and exits 1 unless they agree to the last bit. Not part
of `make test` (it needs Python and a corpus).
"""
import json
import math
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
    bp = 1.0 if hyp_len >= ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0)
    if not any(correct):
        return 0.0
    precisions = [0.0] * max_order
    smooth = 1.0
    for n in range(max_order):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    logs = [math.log(p) if p != 0.0 else -9999999999 for p in precisions]
    log_sum = 0
    for value in logs:  # left to right, as sum() did before Python 3.12
        log_sum += value
    return bp * math.exp(log_sum / max_order)


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


def chrf_f(stats, order, beta):
    factor = beta ** 2
    precision = recall = 0.0
    effective = 0
    for n in range(order):
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
            f = chrf_f(stats, order + word_order, beta)
            if f > best_f:
                best, best_f = stats, f
        totals = [a + b for a, b in zip(totals, best)]
    return chrf_f(totals, order + word_order, beta)


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


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    binary = argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        if argv[2] == "--perturb":
            refs = argv[3:]
            hyp = f"{scratch}/hyp.txt"
            with open(hyp, "w", encoding="utf-8") as file:
                file.write("\n".join(perturb(read_lines(refs[0]))) + "\n")
        else:
            hyp, refs = argv[2], argv[3:]
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
