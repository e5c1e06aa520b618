"""The tables of tools/bench.sh: attn against the PyTorch twin, from the files one run left in OUT.

    bench_report.py OUT [--json] [--warmup W]

Reads OUT/meta.json, OUT/peak.jsonl and, per architecture OUT/<arch>/: batches.json (twin_dump
batches), attn-train.r<k>.jsonl (attn train --log-every 1) and .rss (/usr/bin/time %M, KiB),
twin-train.r<k>.json and .rss, decode/{attn,twin}.b<beam>.n<batch>.r<k>.json. Prints one table
per architecture (or, with --json, one JSON object per line) and writes OUT/results.json.

Training: the rate of each update (target tokens ÷ its time), median over the updates after the
first W of every round. attn's times come from its log: with --log-every 1 every update closes a
window (gather_batch, forward, backward, gradient scaling and check, Adam); the twin times
zero_grad … optimizer.step. Peak memory: the whole process (/usr/bin/time), the largest over rounds.

FLOPs (matmul_flops): the model's matrix products on each batch, counted from the shapes on real
tokens (no padding), for the keys each query may see (causal: j <= i; Fast-DiSA's directions:
j < i or j > i; windows: the band; convsan2d: the neighbouring heads), the MUSE depth-wise
convolutions counted as products too (k multiply-adds per channel); training = 3 × forward.
Not counted: LayerNorm, softmax, activations, embeddings, the optimizer.
"""
from __future__ import annotations

import glob
import json
import os
import re
import statistics
import sys
from typing import Dict, List, Optional


# -- FLOPs ---------------------------------------------------------------------

def band_keys(n: int, left: int, right: int) -> int:
    """Σ over queries i < n of the keys j in [i - left, i + right] ∩ [0, n)."""
    return sum(min(i + right, n - 1) - max(i - left, 0) + 1 for i in range(n))


def head_neighbours(heads: int, n: int) -> int:
    """Σ over query heads h of the heads s with |s - h| <= n, 0 <= s < heads."""
    return sum(min(h + n, heads - 1) - max(h - n, 0) + 1 for h in range(heads))


def mixer_flops(kind: str, c: dict, n: int, causal: bool, layer_windowed: bool) -> float:
    """Forward FLOPs of one self-attention slot over one sentence of n positions."""
    d, heads = c["dim"], c["heads"]
    dh = d // heads
    lin = 2.0 * n * d * d  # one d x d projection
    pairs = n * (n + 1) // 2 if causal else n * n  # (query, key) pairs of global attention
    if kind == "mha":
        return 4 * lin + 2 * 2.0 * pairs * d  # q k v o; Q K^T and P V
    if kind in ("csan", "csan2d"):
        m = (c["csan_window"] - 1) // 2
        keys = band_keys(n, m, 0 if causal else m)
        head_slots = head_neighbours(heads, (c["csan_head_window"] - 1) // 2) if kind == "csan2d" else heads
        return 4 * lin + 2 * 2.0 * keys * dh * head_slots
    if kind == "muse":
        conv = sum(2.0 * n * d * heads * k + 2.0 * n * d * k for k in c["muse_kernels"])  # filters, convolution
        conv_in = lin if c["arch"] == "muse-separate" or c.get("muse_separate_projection") else 0.0  # the cells' own
        return 3 * lin + conv_in + 2 * 2.0 * pairs * d + conv + 2.0 * n * (2 * d) * d  # o: [att; conv] -> d
    if kind == "fastdisa":
        dir_pairs = pairs if causal else n * (n - 1) // 2  # every head sees one side
        per_head = 2.0 * n * dh * dh  # one d_h x d_h per-head linear, all heads: x heads
        gate = 2 * per_head * heads if c.get("disa_gate", True) else 0.0
        return 4 * lin + 3 * 2.0 * dir_pairs * d + 2 * per_head * heads + gate  # R, A·E, A·(v∘E); s1, s2
    raise ValueError(f"no FLOP count for mixer {kind!r}")


MUSE_ARCHS = ("muse", "muse-separate")  # as attn_twin.MUSE_ARCHS (this script runs without torch)


def encoder_kind(c: dict, layer: int) -> str:
    arch = c["arch"]
    windowed = c["csan_layers"] if c["csan_layers"] >= 0 else (c["enc_layers"] + 1) // 2
    if arch in MUSE_ARCHS:
        return "muse"
    if arch in ("convsan", "convsan2d") and layer < windowed:
        return "csan" if arch == "convsan" else "csan2d"
    if arch == "fastdisa":
        return "fastdisa"
    return "mha"


def decoder_kind(c: dict) -> str:
    return c.get("decoder_mixer") or ("muse" if c["arch"] in MUSE_ARCHS else "mha")


def sentence_flops(c: dict, n: int, m: int) -> float:
    """Forward FLOPs of one pair: n source tokens, m target positions (<s> y, so len(y) + 1)."""
    d, f, v = c["dim"], c["ffn_dim"], c["vocab_size"]
    ffn = lambda t: 2 * 2.0 * t * d * f  # noqa: E731
    total = 0.0
    for layer in range(c["enc_layers"]):
        total += mixer_flops(encoder_kind(c, layer), c, n, False, True) + ffn(n)
    cross = 2 * 2.0 * m * d * d + 2 * 2.0 * n * d * d + 2 * 2.0 * m * n * d  # q o on m, k v on n, QK^T PV
    for _ in range(c["dec_layers"]):
        total += mixer_flops(decoder_kind(c), c, m, True, False) + cross + ffn(m)
    return total + 2.0 * m * d * v  # output projection


def batch_train_flops(c: dict, batch: dict) -> float:
    return 3.0 * sum(sentence_flops(c, len(s), len(t) + 1) for s, t in zip(batch["sources"], batch["targets"]))


# -- reading the run -------------------------------------------------------------

def load_json(path: str):
    with open(path) as f:
        return json.load(f)


def rounds(pattern: str) -> List[str]:
    return sorted(glob.glob(pattern), key=lambda p: int(re.search(r"\.r(\d+)\.", p).group(1)))


def rss_mb(path: str) -> Optional[float]:
    try:
        with open(path) as f:
            return int(f.read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None


def attn_steps(path: str) -> List[dict]:
    """Per update: tokens and seconds, from attn's JSON log with --log-every 1."""
    steps, seen = [], 0
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("split") != "train" or not r.get("tokens_per_s"):
                continue
            tokens = r["target_tokens"] - seen
            seen = r["target_tokens"]
            steps.append({"update": r["update"], "tokens": tokens, "seconds": tokens / r["tokens_per_s"]})
    return steps


def median_or_none(values):
    return statistics.median(values) if values else None


def train_summary(steps_by_round: List[List[dict]], warmup: int, flops: List[float]) -> Optional[dict]:
    rates, gflops, n = [], [], 0
    for steps in steps_by_round:
        for s in steps[warmup:]:
            rates.append(s["tokens"] / s["seconds"])
            i = s["update"] - 1
            if i < len(flops):
                gflops.append(flops[i] / s["seconds"] * 1e-9)
            n += 1
    if not rates:
        return None
    return {"tokens_per_s": statistics.median(rates), "gflops": median_or_none(gflops), "steps": n}


def arch_results(out: str, arch: str, warmup: int, peak: Optional[float]) -> dict:
    d = os.path.join(out, arch)
    res: Dict[str, object] = {"arch": arch}
    batches_path = os.path.join(d, "batches.json")
    data = load_json(batches_path) if os.path.exists(batches_path) else None
    flops = [batch_train_flops(data["config"], b) for b in data["batches"]] if data else []
    if data:
        res["config"] = data["config"]
    attn_rounds = [attn_steps(p) for p in rounds(os.path.join(d, "attn-train.r*.jsonl"))]
    twin_files = rounds(os.path.join(d, "twin-train.r*.json"))
    twin_rounds = [load_json(p)["steps"] for p in twin_files]
    train = {"warmup": warmup, "attn": train_summary(attn_rounds, warmup, flops),
             "twin": train_summary(twin_rounds, warmup, flops)}
    train["attn_rss_mb"] = max(filter(None, [rss_mb(p) for p in glob.glob(os.path.join(d, "attn-train.r*.rss"))]),
                               default=None)
    train["twin_rss_mb"] = max(filter(None, [rss_mb(p) for p in glob.glob(os.path.join(d, "twin-train.r*.rss"))]),
                               default=None)
    if twin_files:
        t = load_json(twin_files[0])
        train["twin_rss_setup_mb"] = t.get("rss_setup_mb")
        train["init_loss_rel_diff"] = t.get("init_loss", {}).get("rel_diff")
        train["openblas_core"] = t.get("openblas_core")
        train["torch"] = t.get("torch")
        res["parameters"] = t.get("parameters")
    if data:
        want = [b["target_tokens"] for b in data["batches"]]
        got = [[s["tokens"] for s in steps] for steps in attn_rounds]
        train["same_batches"] = bool(got) and all(g == want[:len(g)] for g in got)
        used = max([len(g) for g in got] + [len(s) for s in twin_rounds] + [0])
        train["flops_per_step"] = statistics.mean(flops[:used]) if used else None
        train["tokens_per_step"] = statistics.mean(want[:used]) if used else None
    for side in ("attn", "twin"):
        s = train[side]
        if s and s["gflops"] is not None and peak:
            s["peak_share"] = s["gflops"] / peak
    res["train"] = train

    decodes = []
    for attn_path in sorted(glob.glob(os.path.join(d, "decode", "attn.b*.n*.r1.json"))):
        m = re.search(r"attn\.b(\d+)\.n(\d+)\.r1\.json$", attn_path)
        beam, bs = int(m.group(1)), int(m.group(2))
        row: Dict[str, object] = {"beam": beam, "batch_size": bs}
        for side in ("attn", "twin"):
            runs = [load_json(p) for p in rounds(os.path.join(d, "decode", f"{side}.b{beam}.n{bs}.r*.json"))]
            if not runs:
                row[side] = None
                continue
            row[side] = {"sentences_per_s": statistics.median(r["sentences"] / r["seconds"] for r in runs),
                         "tokens_per_s": statistics.median(r["output_tokens"] / r["seconds"] for r in runs),
                         "sentences": runs[0]["sentences"], "output_tokens": runs[0]["output_tokens"],
                         "rounds": len(runs)}
            row.setdefault("hyps", {})[side] = runs[0]["hypotheses"]  # type: ignore[union-attr]
        hyps = row.pop("hyps", {})
        if "attn" in hyps and "twin" in hyps:
            pairs = [(a, b) for a, b in zip(hyps["attn"], hyps["twin"])]
            row["identical_outputs"] = sum(a == b for a, b in pairs) / max(len(pairs), 1)
        decodes.append(row)
    decodes.sort(key=lambda r: (-r["batch_size"], r["beam"]))
    res["decode"] = decodes
    return res


# -- printing -------------------------------------------------------------------

def fmt(v, spec=",.0f", none="—"):
    return none if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def print_arch(r: dict, meta: dict) -> None:
    c = r.get("config", {})
    head = f"{r['arch']}"
    if c:
        params = f"{r['parameters'] / 1e6:.2f} M parameters, " if r.get("parameters") else ""
        head += (f": {params}d {c['dim']}, {c['enc_layers']}+{c['dec_layers']} layers, {c['heads']} heads, FFN {c['ffn_dim']}, "
                 f"vocab {c['vocab_size']}")
    print(f"\n== {head} ==")
    t = r["train"]
    a, w = t["attn"], t["twin"]
    if a or w:
        steps = (a or w)["steps"]
        if not w:
            same = "the PyTorch twin was not run"
        elif t.get("same_batches"):
            same = "the same batches and initial parameters on both sides"
            if t.get("init_loss_rel_diff") is not None:
                same += f" (initial loss rel. diff {t['init_loss_rel_diff']:.1e})"
        else:
            same = "WARNING: attn's target tokens per update differ from the batches the twin trained on"
        print(f"training: {meta.get('threads')} threads, median over {steps} updates after {t['warmup']} warm-up "
              f"(per round), batches of ~{fmt(t.get('tokens_per_step'))} target tokens; {same}")
        print(f"  {'':34} {'attn':>10} {'PyTorch':>10} {'attn÷PyTorch':>13}")
        print(f"  {'target tokens/s':34} {fmt(a and a['tokens_per_s']):>10} {fmt(w and w['tokens_per_s']):>10} "
              f"{fmt(ratio(a and a['tokens_per_s'], w and w['tokens_per_s']), '.2f'):>13}")
        print(f"  {'peak resident memory, MB':34} {fmt(t['attn_rss_mb']):>10} {fmt(t['twin_rss_mb']):>10} "
              f"{fmt(ratio(t['attn_rss_mb'], t['twin_rss_mb']), '.2f'):>13}")
        if t.get("twin_rss_setup_mb"):
            print(f"  {'  PyTorch before its first update':34} {'':>10} {fmt(t['twin_rss_setup_mb']):>10}")
        if t.get("flops_per_step"):
            print(f"  {'matmul GFLOP/s':34} {fmt(a and a['gflops'], ',.1f'):>10} {fmt(w and w['gflops'], ',.1f'):>10} "
                  f"{fmt(ratio(a and a['gflops'], w and w['gflops']), '.2f'):>13}")
            print(f"  {'share of the FMA peak':34} {fmt(a and a.get('peak_share'), '.1%'):>10} "
                  f"{fmt(w and w.get('peak_share'), '.1%'):>10}")
            print(f"  ({t['flops_per_step'] / 1e9:,.1f} GFLOP per update on average, "
                  f"{t['flops_per_step'] / t['tokens_per_step'] / 1e6:.1f} MFLOP per target token)")
    if r["decode"]:
        print(f"decoding {meta.get('test')} (model: {meta.get('decode_updates')} updates of attn train; same sources, "
              f"order, batches and length limit {meta.get('max_len_rule', '2·src+10')}; tokens include </s>)")
        print(f"  {'':30} {'sentences/s':>24} {'target tokens/s':>24} {'output tokens':>17} {'same':>6}")
        print(f"  {'':30} {'attn':>7} {'PyTorch':>8} {'ratio':>7} {'attn':>7} {'PyTorch':>8} {'ratio':>7} "
              f"{'attn':>8} {'PyTorch':>8} {'output':>6}")
        for d in r["decode"]:
            a, w = d["attn"], d["twin"]
            n = (a or w)["sentences"]
            what = f"{'greedy' if d['beam'] == 1 else 'beam ' + str(d['beam'])}, batch {d['batch_size']}"
            what += f" ({n} sent.)" if d["batch_size"] > 1 else f" (first {n})"
            print(f"  {what:30} {fmt(a and a['sentences_per_s'], '.1f'):>7} {fmt(w and w['sentences_per_s'], '.1f'):>8} "
                  f"{fmt(ratio(a and a['sentences_per_s'], w and w['sentences_per_s']), '.2f'):>7} "
                  f"{fmt(a and a['tokens_per_s']):>7} {fmt(w and w['tokens_per_s']):>8} "
                  f"{fmt(ratio(a and a['tokens_per_s'], w and w['tokens_per_s']), '.2f'):>7} "
                  f"{fmt(a and a['output_tokens']):>8} {fmt(w and w['output_tokens']):>8} "
                  f"{fmt(d.get('identical_outputs'), '.0%'):>6}")


def json_rows(results: List[dict], meta: dict) -> List[dict]:
    base = {"commit": meta.get("commit"), "date": meta.get("date")}
    rows = [dict(base, kind="meta", **{k: v for k, v in meta.items() if k not in base})]
    for r in results:
        t = r["train"]
        a, w = t["attn"] or {}, t["twin"] or {}
        rows.append(dict(base, kind="train", arch=r["arch"], threads=meta.get("threads"),
                         steps=a.get("steps") or w.get("steps"), warmup=t["warmup"],
                         tokens_per_step=t.get("tokens_per_step"), same_batches=t.get("same_batches"),
                         attn_tokens_per_s=a.get("tokens_per_s"), twin_tokens_per_s=w.get("tokens_per_s"),
                         tokens_per_s_ratio=ratio(a.get("tokens_per_s"), w.get("tokens_per_s")),
                         attn_peak_rss_mb=t["attn_rss_mb"], twin_peak_rss_mb=t["twin_rss_mb"],
                         twin_rss_before_training_mb=t.get("twin_rss_setup_mb"),
                         rss_ratio=ratio(t["attn_rss_mb"], t["twin_rss_mb"]),
                         flops_per_step=t.get("flops_per_step"), attn_gflops=a.get("gflops"), twin_gflops=w.get("gflops"),
                         fma_peak_gflops=meta.get("fma_peak_gflops"), attn_peak_share=a.get("peak_share"),
                         twin_peak_share=w.get("peak_share"), twin_openblas_core=t.get("openblas_core")))
        for d in r["decode"]:
            a, w = d["attn"] or {}, d["twin"] or {}
            rows.append(dict(base, kind="decode", arch=r["arch"], beam=d["beam"], batch_size=d["batch_size"],
                             sentences=a.get("sentences") or w.get("sentences"),
                             attn_sentences_per_s=a.get("sentences_per_s"), twin_sentences_per_s=w.get("sentences_per_s"),
                             sentences_per_s_ratio=ratio(a.get("sentences_per_s"), w.get("sentences_per_s")),
                             attn_tokens_per_s=a.get("tokens_per_s"), twin_tokens_per_s=w.get("tokens_per_s"),
                             tokens_per_s_ratio=ratio(a.get("tokens_per_s"), w.get("tokens_per_s")),
                             attn_output_tokens=a.get("output_tokens"), twin_output_tokens=w.get("output_tokens"),
                             identical_outputs=d.get("identical_outputs")))
    return rows


def tidy(v):
    """Floats to 4 significant digits (rates and ratios; the run's noise is far larger)."""
    if isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")) and v != 0:
        return float(f"{v:.4g}")
    if isinstance(v, dict):
        return {k: tidy(x) for k, x in v.items()}
    return v


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    as_json = "--json" in sys.argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    meta = load_json(os.path.join(out, "meta.json"))
    warmup = int(meta.get("warmup", 5))
    peaks = {}
    peak_path = os.path.join(out, "peak.jsonl")
    if os.path.exists(peak_path):
        with open(peak_path) as f:
            for line in f:
                if line.strip():
                    p = json.loads(line)
                    peaks[p["threads"]] = p["fma_peak_gflops"]
                    meta["cpu_isa"] = p.get("isa")
    peak = peaks.get(int(meta.get("threads", 2)))
    meta["fma_peak_gflops"] = peak
    meta["fma_peaks"] = peaks
    results = [arch_results(out, arch, warmup, peak) for arch in meta["archs"]]
    # Who ran: attn's ISA and the twin's torch and OpenBLAS core, as the processes reported them.
    for path in sorted(glob.glob(os.path.join(out, "*", "decode", "*.r1.json")) +
                       glob.glob(os.path.join(out, "*", "twin-train.r1.json"))):
        r = load_json(path)
        if r.get("side") == "attn":
            meta.setdefault("isa", r.get("isa"))
        else:
            meta.setdefault("torch", r.get("torch"))
            meta.setdefault("openblas_core", r.get("openblas_core"))
    rows = [{k: tidy(v) for k, v in row.items()} for row in json_rows(results, meta)]
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1, ensure_ascii=False)
        f.write("\n")
    if as_json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    print(f"attn vs the PyTorch twin — commit {meta.get('commit')}, {meta.get('date')}")
    print(f"{meta.get('cpu')}; FMA peak " + ", ".join(f"{v:.0f} GFLOP/s on {k} thread{'s' if k > 1 else ''}"
                                                      for k, v in sorted(peaks.items()))
          + f"; load average at start {' '.join(meta.get('load_average', []))}")
    print(f"attn --threads {meta.get('threads')} (ISA {meta.get('isa') or meta.get('cpu_isa', '?')}); PyTorch {meta.get('torch', '—')}, "
          f"set_num_threads({meta.get('threads')}), OpenBLAS core {meta.get('openblas_core', '—')}; data {meta.get('data')}")
    for r in results:
        print_arch(r, meta)
    print(f"\nFLOPs: the model's matrix products on real tokens, 3× forward for training (tools/twin/bench_report.py). "
          f"Results: {os.path.join(out, 'results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
