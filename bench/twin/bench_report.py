"""The tables of bench/twin_bench.sh: attn against the PyTorch twin, from the files one run left in OUT.

    bench_report.py OUT [--json] [--warmup W]

Reads OUT/meta.json, OUT/peak.jsonl and, per architecture OUT/<arch>/: batches.json (twin_dump
batches), attn-train.r<k>.jsonl (attn train --log-every 1) and .rss (/usr/bin/time %M, KiB),
twin-train.r<k>.json and .rss, the bf16 rows attn-train-bf16.r<k>.jsonl (attn --precision bf16)
and twin-train-bf16.r<k>.json (torch.autocast bf16), decode/{attn,twin,twin-drop}.b<beam>.n<batch>.r<k>.json
(twin-drop: finished sentences dropped from the batch, as attn does). Prints one table per
architecture (or, with --json, one JSON object per line) and writes OUT/results.json.

Training: the rate of each update (target tokens ÷ its time), median over the updates after the
first W of every round, all rounds pooled (the range of the per-round medians is shown beside it).
attn's times come from its log: with --log-every 1 every update closes a window (gather_batch,
forward, backward, gradient scaling and check, Adam); the twin times zero_grad … optimizer.step.
Peak memory: the whole process (/usr/bin/time), the largest over rounds. Decoding: the median
over rounds of each run's rate.

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
    """Pooled: the median over every round's updates after its warm-up; and each round's own median."""
    rates, gflops, n, per_round = [], [], 0, []
    for steps in steps_by_round:
        mine = []
        for s in steps[warmup:]:
            mine.append(s["tokens"] / s["seconds"])
            i = s["update"] - 1
            if i < len(flops):
                gflops.append(flops[i] / s["seconds"] * 1e-9)
            n += 1
        rates += mine
        if mine:
            per_round.append(statistics.median(mine))
    if not rates:
        return None
    return {"tokens_per_s": statistics.median(rates), "gflops": median_or_none(gflops), "steps": n,
            "rounds": len(per_round), "round_medians": per_round}


# Training rows: key, files (under OUT/<arch>/), reader, label, the attn row it is compared with.
TRAIN_SIDES = (("attn", "attn-train", "jsonl", "attn fp32", None),
               ("twin", "twin-train", "json", "twin (PyTorch fp32)", "attn"),
               ("attn_bf16", "attn-train-bf16", "jsonl", "attn bf16", None),
               ("twin_bf16", "twin-train-bf16", "json", "twin autocast bf16", "attn_bf16"))
# Decoding rows: key, file prefix under decode/, label.
DECODE_SIDES = (("attn", "attn", "attn"), ("twin", "twin", "twin"),
                ("twin_drop", "twin-drop", "twin, finished dropped"))


def arch_results(out: str, arch: str, warmup: int, peak: Optional[float]) -> dict:
    d = os.path.join(out, arch)
    res: Dict[str, object] = {"arch": arch}
    batches_path = os.path.join(d, "batches.json")
    data = load_json(batches_path) if os.path.exists(batches_path) else None
    flops = [batch_train_flops(data["config"], b) for b in data["batches"]] if data else []
    if data:
        res["config"] = data["config"]
    train: Dict[str, object] = {"warmup": warmup}
    side_rounds: Dict[str, List[List[dict]]] = {}
    for key, stem, ext, _, _ in TRAIN_SIDES:
        files = rounds(os.path.join(d, f"{stem}.r*.{ext}"))
        if ext == "jsonl":
            side_rounds[key] = [attn_steps(p) for p in files]
        else:
            side_rounds[key] = [load_json(p)["steps"] for p in files]
            if files:
                t = load_json(files[0])
                train[f"{key}_rss_setup_mb"] = t.get("rss_setup_mb")
                train[f"{key}_init_loss"] = t.get("init_loss")
                if key == "twin":
                    train["twin_rss_setup_mb"] = t.get("rss_setup_mb")
                    train["init_loss_rel_diff"] = t.get("init_loss", {}).get("rel_diff")
                    train["openblas_core"] = t.get("openblas_core")
                    train["torch"] = t.get("torch")
                    res["parameters"] = t.get("parameters")
        train[key] = train_summary(side_rounds[key], warmup, flops)
        train[f"{key}_rss_mb"] = max(filter(None, [rss_mb(p) for p in glob.glob(os.path.join(d, f"{stem}.r*.rss"))]),
                                     default=None)
    if data:
        want = [b["target_tokens"] for b in data["batches"]]
        got = [[s["tokens"] for s in steps] for key in ("attn", "attn_bf16") for steps in side_rounds[key]]
        train["same_batches"] = bool(got) and all(g == want[:len(g)] for g in got)
        used = max([len(g) for g in got] + [len(s) for rs in side_rounds.values() for s in rs] + [0])
        train["flops_per_step"] = statistics.mean(flops[:used]) if used else None
        train["tokens_per_step"] = statistics.mean(want[:used]) if used else None
    for key, *_ in TRAIN_SIDES:
        s = train[key]
        if s and s["gflops"] is not None and peak:
            s["peak_share"] = s["gflops"] / peak
    res["train"] = train

    decodes = []
    for attn_path in sorted(glob.glob(os.path.join(d, "decode", "attn.b*.n*.r1.json"))):
        m = re.search(r"attn\.b(\d+)\.n(\d+)\.r1\.json$", attn_path)
        beam, bs = int(m.group(1)), int(m.group(2))
        row: Dict[str, object] = {"beam": beam, "batch_size": bs}
        hyps: Dict[str, list] = {}
        for side, prefix, _ in DECODE_SIDES:
            runs = [load_json(p) for p in rounds(os.path.join(d, "decode", f"{prefix}.b{beam}.n{bs}.r*.json"))]
            if not runs:
                row[side] = None
                continue
            row[side] = {"sentences_per_s": statistics.median(r["sentences"] / r["seconds"] for r in runs),
                         "tokens_per_s": statistics.median(r["output_tokens"] / r["seconds"] for r in runs),
                         "round_sentences_per_s": [r["sentences"] / r["seconds"] for r in runs],
                         "sentences": runs[0]["sentences"], "output_tokens": runs[0]["output_tokens"],
                         "rounds": len(runs)}
            hyps[side] = runs[0]["hypotheses"]
        for side in ("twin", "twin_drop"):
            if "attn" in hyps and side in hyps:
                pairs = [(a, b) for a, b in zip(hyps["attn"], hyps[side])]
                same = sum(a == b for a, b in pairs) / max(len(pairs), 1)
                row["identical_outputs" if side == "twin" else f"{side}_identical_outputs"] = same
                row[side]["identical_outputs"] = same  # type: ignore[index]
        decodes.append(row)
    decodes.sort(key=lambda r: (-r["batch_size"], r["beam"]))
    res["decode"] = decodes
    return res


# -- printing -------------------------------------------------------------------

def fmt(v, spec=",.0f", none="—"):
    return none if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def spread(values, spec=",.0f") -> str:
    """The range of the per-round medians, "(lo–hi)", when there are several rounds."""
    if not values or len(values) < 2:
        return ""
    return f"({format(min(values), spec)}–{format(max(values), spec)})"


def print_arch(r: dict, meta: dict) -> None:
    c = r.get("config", {})
    head = f"{r['arch']}"
    if c:
        params = f"{r['parameters'] / 1e6:.2f} M parameters, " if r.get("parameters") else ""
        head += (f": {params}d {c['dim']}, {c['enc_layers']}+{c['dec_layers']} layers, {c['heads']} heads, FFN {c['ffn_dim']}, "
                 f"vocab {c['vocab_size']}")
    print(f"\n== {head} ==")
    t = r["train"]
    present = [side for side in TRAIN_SIDES if t.get(side[0])]
    if present:
        first = t[present[0][0]]
        if not t.get("twin"):
            same = "the PyTorch twin was not run"
        elif t.get("same_batches"):
            same = "the same batches and initial parameters on both sides"
            if t.get("init_loss_rel_diff") is not None:
                same += f" (initial loss rel. diff {t['init_loss_rel_diff']:.1e}"
                timed = (t.get("twin_init_loss") or {}).get("timed_rel_diff")
                if timed is not None:
                    same += f"; F.cross_entropy's smoothing convention {timed:.1e}"
                same += ")"
        else:
            same = "WARNING: attn's target tokens per update differ from the batches the twin trained on"
        print(f"training: {meta.get('threads')} threads, median over {first['steps']} updates after {t['warmup']} warm-up "
              f"(per round, {first.get('rounds', 1)} rounds pooled), batches of ~{fmt(t.get('tokens_per_step'))} "
              f"target tokens; {same}")
        print(f"  {'':22} {'target tokens/s':>15} {'(round medians)':>17} {'attn÷this':>9} {'peak MB':>8} "
              f"{'GFLOP/s':>8} {'FMA peak':>8}")
        for key, _, _, label, versus in TRAIN_SIDES:
            x = t.get(key)
            if not x:
                continue
            base = t.get(versus) if versus else None
            print(f"  {label:22} {fmt(x['tokens_per_s']):>15} {spread(x.get('round_medians')):>17} "
                  f"{fmt(ratio(base and base['tokens_per_s'], x['tokens_per_s']), '.2f', ''):>9} "
                  f"{fmt(t.get(f'{key}_rss_mb')):>8} {fmt(x['gflops'], ',.1f'):>8} {fmt(x.get('peak_share'), '.1%'):>8}")
        if t.get("twin_rss_setup_mb"):
            print(f"  (PyTorch's resident memory before its first update: {fmt(t['twin_rss_setup_mb'])} MB)")
        if t.get("flops_per_step"):
            print(f"  ({t['flops_per_step'] / 1e9:,.1f} GFLOP per update on average, "
                  f"{t['flops_per_step'] / t['tokens_per_step'] / 1e6:.1f} MFLOP per target token; "
                  f"attn÷this: against attn at the same precision)")
    if r["decode"]:
        print(f"decoding {meta.get('test')} (model: {meta.get('decode_updates')} updates of attn train; same sources, "
              f"order, batches and length limit {meta.get('max_len_rule', '2·src+10')}; tokens include </s>)")
        print(f"  {'':32} {'sentences/s':>11} {'(round range)':>15} {'tokens/s':>9} {'attn÷this':>9} "
              f"{'out tokens':>10} {'same as attn':>12}")
        for d in r["decode"]:
            x0 = next((d[k] for k, _, _ in DECODE_SIDES if d.get(k)), None)
            if not x0:
                continue
            n = x0["sentences"]
            what = f"{'greedy' if d['beam'] == 1 else 'beam ' + str(d['beam'])}, batch {d['batch_size']}"
            what += f" ({n} sent.)" if d["batch_size"] > 1 else f" (first {n})"
            print(f"  {what}")
            a = d.get("attn")
            for key, _, label in DECODE_SIDES:
                x = d.get(key)
                if not x:
                    continue
                print(f"    {label:30} {fmt(x['sentences_per_s'], '.1f'):>11} "
                      f"{spread(x.get('round_sentences_per_s'), '.1f'):>15} {fmt(x['tokens_per_s']):>9} "
                      f"{fmt(ratio(a and a['sentences_per_s'], x['sentences_per_s']) if key != 'attn' else None, '.2f', ''):>9} "
                      f"{fmt(x['output_tokens']):>10} {fmt(x.get('identical_outputs'), '.0%', ''):>12}")


def json_rows(results: List[dict], meta: dict) -> List[dict]:
    base = {"commit": meta.get("commit"), "date": meta.get("date")}
    rows = [dict(base, kind="meta", **{k: v for k, v in meta.items() if k not in base})]
    for r in results:
        t = r["train"]
        a, w = t["attn"] or {}, t["twin"] or {}
        ab, wb = t.get("attn_bf16") or {}, t.get("twin_bf16") or {}
        rows.append(dict(base, kind="train", arch=r["arch"], threads=meta.get("threads"),
                         steps=a.get("steps") or w.get("steps"), warmup=t["warmup"], rounds=a.get("rounds") or w.get("rounds"),
                         tokens_per_step=t.get("tokens_per_step"), same_batches=t.get("same_batches"),
                         attn_tokens_per_s=a.get("tokens_per_s"), twin_tokens_per_s=w.get("tokens_per_s"),
                         tokens_per_s_ratio=ratio(a.get("tokens_per_s"), w.get("tokens_per_s")),
                         attn_round_medians=a.get("round_medians"), twin_round_medians=w.get("round_medians"),
                         attn_peak_rss_mb=t["attn_rss_mb"], twin_peak_rss_mb=t["twin_rss_mb"],
                         twin_rss_before_training_mb=t.get("twin_rss_setup_mb"),
                         rss_ratio=ratio(t["attn_rss_mb"], t["twin_rss_mb"]),
                         flops_per_step=t.get("flops_per_step"), attn_gflops=a.get("gflops"), twin_gflops=w.get("gflops"),
                         fma_peak_gflops=meta.get("fma_peak_gflops"), attn_peak_share=a.get("peak_share"),
                         twin_peak_share=w.get("peak_share"), twin_openblas_core=t.get("openblas_core"),
                         twin_loss="F.cross_entropy(label_smoothing, ignore_index=pad, reduction=sum)",
                         twin_init_loss=t.get("twin_init_loss"),
                         attn_bf16_tokens_per_s=ab.get("tokens_per_s"), twin_bf16_tokens_per_s=wb.get("tokens_per_s"),
                         twin_bf16="torch.autocast(cpu, bfloat16)",
                         bf16_tokens_per_s_ratio=ratio(ab.get("tokens_per_s"), wb.get("tokens_per_s")),
                         attn_bf16_round_medians=ab.get("round_medians"), twin_bf16_round_medians=wb.get("round_medians"),
                         attn_bf16_peak_rss_mb=t.get("attn_bf16_rss_mb"), twin_bf16_peak_rss_mb=t.get("twin_bf16_rss_mb"),
                         attn_bf16_gflops=ab.get("gflops"), twin_bf16_gflops=wb.get("gflops"),
                         twin_bf16_init_loss=t.get("twin_bf16_init_loss")))
        for d in r["decode"]:
            a, w, wd = d["attn"] or {}, d["twin"] or {}, d.get("twin_drop") or {}
            rows.append(dict(base, kind="decode", arch=r["arch"], beam=d["beam"], batch_size=d["batch_size"],
                             sentences=a.get("sentences") or w.get("sentences"), rounds=a.get("rounds"),
                             attn_sentences_per_s=a.get("sentences_per_s"), twin_sentences_per_s=w.get("sentences_per_s"),
                             sentences_per_s_ratio=ratio(a.get("sentences_per_s"), w.get("sentences_per_s")),
                             attn_tokens_per_s=a.get("tokens_per_s"), twin_tokens_per_s=w.get("tokens_per_s"),
                             tokens_per_s_ratio=ratio(a.get("tokens_per_s"), w.get("tokens_per_s")),
                             attn_output_tokens=a.get("output_tokens"), twin_output_tokens=w.get("output_tokens"),
                             identical_outputs=d.get("identical_outputs"),
                             twin_drop_sentences_per_s=wd.get("sentences_per_s"),
                             twin_drop_tokens_per_s=wd.get("tokens_per_s"),
                             sentences_per_s_ratio_drop=ratio(a.get("sentences_per_s"), wd.get("sentences_per_s")),
                             twin_drop_output_tokens=wd.get("output_tokens"),
                             twin_drop_identical_outputs=d.get("twin_drop_identical_outputs"),
                             attn_round_sentences_per_s=a.get("round_sentences_per_s"),
                             twin_round_sentences_per_s=w.get("round_sentences_per_s"),
                             twin_drop_round_sentences_per_s=wd.get("round_sentences_per_s")))
    return rows


def tidy(v):
    """Floats to 4 significant digits (rates and ratios; the run's noise is far larger)."""
    if isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")) and v != 0:
        return float(f"{v:.4g}")
    if isinstance(v, dict):
        return {k: tidy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tidy(x) for x in v]
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
    # One line per thread count per start of bench.sh (a resumed run measured it again): the median.
    measured: Dict[int, List[float]] = {}
    peak_path = os.path.join(out, "peak.jsonl")
    if os.path.exists(peak_path):
        with open(peak_path) as f:
            for line in f:
                if line.strip():
                    p = json.loads(line)
                    measured.setdefault(p["threads"], []).append(p["fma_peak_gflops"])
                    meta["cpu_isa"] = p.get("isa")
    peaks = {t: statistics.median(v) for t, v in measured.items()}
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
    print(f"CPU: {meta.get('cpu')}; flags {' '.join(meta.get('cpu_flags', [])) or '—'}")
    starts = max((len(v) for v in measured.values()), default=1)
    resumed = meta.get("resumed", [])
    print("FMA peak measured in this run (bench_gemm --peak-only"
          + (f", median of {starts} starts" if starts > 1 else "") + "): "
          + (", ".join(f"{v:.0f} GFLOP/s on {k} thread{'s' if k > 1 else ''}" for k, v in sorted(peaks.items())) or "—")
          + f"; load average at start {' '.join(meta.get('load_average', []))}"
          + (f"; resumed {', '.join(resumed)}" if resumed else ""))
    print(f"attn --threads {meta.get('threads')} (ISA {meta.get('isa') or meta.get('cpu_isa', '?')}); PyTorch {meta.get('torch', '—')}, "
          f"set_num_threads({meta.get('threads')}), {meta.get('twin_env', 'OpenBLAS core ' + str(meta.get('openblas_core', '—')))} "
          f"(OpenBLAS core {meta.get('openblas_core', '—')}), loss F.cross_entropy; data {meta.get('data')}")
    for r in results:
        print_arch(r, meta)
    print(f"\nFLOPs: the model's matrix products on real tokens, 3× forward for training (bench/twin/bench_report.py). "
          f"Results: {os.path.join(out, 'results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
