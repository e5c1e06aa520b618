#!/usr/bin/env python3
"""Checks `attn score`'s paired tests against the numbers sacreBLEU publishes
for the WMT17 en-de systems: its README's --paired-bs table (every score, μ,
CI and p-value, to the printed digits) and test_significance.py's p-values
(bootstrap with 2000 resamples against Moses', randomization against
multeval's, within sacreBLEU's own tolerance of 0.01).

    tools/check_significance_wmt17.py ATTN_BINARY wmt17_en_de_systems.pkl.bz2

The systems file is sacreBLEU's test/wmt17_en_de_systems.pkl.bz2 (not
shipped here). Exits 1 on any difference. Not part of `make test`.
"""
import bz2
import os
import json
import pickle
import subprocess
import sys
import tempfile

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


def main(binary, systems_path):
    binary = os.path.abspath(binary)
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
            rows = json.loads(score(everyone, "-m", "bleu", "--tok", "none", *flags))
            for row in rows[1:]:
                p, want = row["BLEU"]["p_value"], published[short(row["system"])]
                ok = abs(p - want) < 1e-2
                failures += not ok
                print(f"{flags[0]:11} {short(row['system']):24} attn p = {p:.5f} published {want:.5f} "
                      f"{'ok' if ok else 'DIFF'}")
    print("all agree" if failures == 0 else f"{failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
