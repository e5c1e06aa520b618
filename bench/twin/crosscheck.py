#!/usr/bin/env python3
"""Cross-checks attn against its PyTorch twin on fixed batches, for every architecture.

  crosscheck.py --twin-dump build/twin_dump [--work-dir DIR] [--isa all] [--only muse,fastdisa]
      the twin's self-test (below), then the matrix: for each row (an architecture, a norm,
      an embedding-sharing setting, mechanism flags), writes a random model file
      (twin_dump init) and a batch of sentences of different lengths, runs attn on it
      (twin_dump run, once per ISA) and compares
  crosscheck.py --self-test
      the twin alone, no C++: each mechanism against a naive loop of its definition,
      Fast-DiSA's factorised form against the direct T x T x d_h one, and for every
      architecture incremental decoding == teacher forcing, decoder causality, a padded
      batch == each sentence alone, finite gradients
  crosscheck.py --model M.attn --dump D.safetensors
      compares one existing dump (e.g. of a trained model)
  crosscheck.py --twin-dump build/twin_dump --write-reference tests/model/twin_reference.json
      the float64 twin's loss and gradient norms on every row of the matrix, written as the
      reference that `make test` checks attn against on every run without PyTorch
      (tests/model/test_twin_reference.cpp): each row's model config, seed and batch, so the
      test rebuilds the same model with attn alone

Compared with the float64 twin (the reference): log-probabilities of every row
(max abs error <= 1e-4), the label-smoothed loss and the NLL sums (relative
error <= 1e-6) and every parameter gradient (max abs error relative to the
tensor's max abs <= 1e-3). The float32 twin's errors against the same reference
are printed beside attn's: they show what float32 rounding alone costs.
Exits 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Dict, List, Tuple

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_twin  # noqa: E402
from read_model import load as read_safetensors  # noqa: E402  (attn_twin put tools/ on the path)

TOL_LOGPROB = 1e-4  # max abs
# Relative. attn sums the loss in double: its measured errors are ~1e-8, and 1e-4 would let a
# wrong smoothing constant (eps / V instead of eps / (V - 1): ~3e-6) pass.
TOL_LOSS = 1e-6
TOL_GRAD = 1e-3     # max abs error / max abs of the reference tensor (see grad_errors)
TOL_PICK = 1e-5            # a decoding choice within this of the twin's best is a tie
TOL_DECODE_LOGPROB = 1e-4  # a hypothesis' log-prob sum, attn vs the twin
GRAD_FLOOR = 1e-3   # the scale of a tensor is never below this fraction of the model's largest gradient

# (label, twin_dump init flags, seed of the batch, lengths (source, target) of its sentences)
# Every batch has sentences longer than the ConvSAN windows and shorter than MUSE's kernel 15,
# and most have an empty target or an empty source.
_T = ["--arch", "transformer"]
MATRIX = [
    ("transformer pre  share=all     V=500 d=48 h=4", _T + ["--norm", "pre", "--share", "all", "--vocab", "500", "--dim",
                                                        "48", "--heads", "4", "--ffn-dim", "96"], 11,
     [(7, 5), (3, 9), (1, 0), (12, 4), (5, 1)]),
    ("transformer post share=all     V=300 d=32 h=2", _T + ["--norm", "post", "--share", "all", "--vocab", "300", "--dim",
                                                        "32", "--heads", "2", "--ffn-dim", "80"], 12,
     [(4, 6), (9, 2), (2, 11), (6, 6)]),
    ("transformer pre  share=none    V=777 d=64 h=8", _T + ["--norm", "pre", "--share", "none", "--vocab", "777", "--dim",
                                                        "64", "--heads", "8", "--ffn-dim", "128", "--enc-layers", "3"],
     13, [(10, 3), (1, 7), (5, 5)]),
    ("transformer post share=decoder V=1000 d=40 h=5", _T + ["--norm", "post", "--share", "decoder", "--vocab", "1000",
                                                        "--dim", "40", "--heads", "5", "--ffn-dim", "72",
                                                        "--dec-layers", "3"], 14,
     [(8, 8), (2, 1), (0, 4), (11, 10), (3, 2), (6, 0)]),  # an empty source: its queries see no key
    ("transformer pre  share=decoder V=400 d=32 h=4", _T + ["--norm", "pre", "--share", "decoder", "--vocab", "400",
                                                        "--dim", "32", "--heads", "4", "--ffn-dim", "64"], 15,
     [(5, 7), (0, 3), (8, 2)]),
    ("transformer post share=none    V=600 d=48 h=6", _T + ["--norm", "post", "--share", "none", "--vocab", "600",
                                                        "--dim", "48", "--heads", "6", "--ffn-dim", "96"], 16,
     [(3, 4), (7, 9), (1, 1), (12, 0)]),
    # MUSE: kernels 3 and 15 (longer than every sentence), and an even kernel in post-norm.
    ("muse        pre  k=3,15 d=32 h=2", ["--arch", "muse", "--norm", "pre", "--vocab", "300", "--dim", "32",
                                          "--heads", "2", "--ffn-dim", "64"], 21,
     [(7, 5), (3, 9), (1, 0), (12, 4), (0, 2)]),
    ("muse        post k=4,7  d=24 h=2 share=none", ["--arch", "muse", "--norm", "post", "--share", "none",
                                                     "--muse-kernels", "4,7", "--vocab", "300", "--dim", "24",
                                                     "--heads", "2", "--ffn-dim", "48"], 22,
     [(9, 3), (2, 8), (11, 11), (1, 0)]),
    # MUSE-separate: the cells read their own projection conv_in(x); the arch implies it (no config key),
    # --muse-separate-projection with --arch muse stores the key.
    ("muse-separate pre  k=3,15 d=32 h=2", ["--arch", "muse-separate", "--norm", "pre", "--vocab", "300", "--dim",
                                            "32", "--heads", "2", "--ffn-dim", "64"], 25,
     [(7, 5), (3, 9), (1, 0), (12, 4), (0, 2)]),
    ("muse-separate post k=4,7  d=24 h=2 share=none", ["--arch", "muse-separate", "--norm", "post", "--share", "none",
                                                       "--muse-kernels", "4,7", "--vocab", "300", "--dim", "24",
                                                       "--heads", "2", "--ffn-dim", "48"], 26,
     [(9, 3), (2, 8), (11, 11), (1, 0)]),
    ("muse        pre  --muse-separate-projection k=3,5 d=32 h=4 share=decoder",
     ["--arch", "muse", "--muse-separate-projection", "--norm", "pre", "--share", "decoder", "--muse-kernels", "3,5",
      "--vocab", "300", "--dim", "32", "--heads", "4", "--ffn-dim", "64"], 27,
     [(6, 4), (10, 7), (0, 3), (4, 12)]),
    ("muse-simple pre  d=32 h=4", ["--arch", "muse-simple", "--norm", "pre", "--vocab", "300", "--dim", "32",
                                   "--heads", "4", "--ffn-dim", "64"], 23,
     [(6, 4), (10, 7), (1, 0), (4, 12)]),
    ("muse-simple post d=16 h=2 share=decoder", ["--arch", "muse-simple", "--norm", "post", "--share", "decoder",
                                                 "--vocab", "300", "--dim", "16", "--heads", "2", "--ffn-dim", "32"],
     24, [(5, 5), (0, 3), (12, 1)]),
    # ConvSAN: window 5 (±2) over sentences up to 12; 3 encoder layers, the lower 2 windowed.
    ("convsan     pre  W=5 L=3(2) d=32 h=2", ["--arch", "convsan", "--norm", "pre", "--csan-window", "5",
                                              "--enc-layers", "3", "--vocab", "300", "--dim", "32", "--heads", "2",
                                              "--ffn-dim", "64"], 31,
     [(12, 5), (3, 9), (1, 0), (8, 4), (0, 2)]),
    ("convsan2d   pre  W=5x3 d=32 h=4", ["--arch", "convsan2d", "--norm", "pre", "--csan-window", "5",
                                         "--csan-head-window", "3", "--csan-layers", "2", "--vocab", "300",
                                         "--dim", "32", "--heads", "4", "--ffn-dim", "64"], 32,
     [(12, 5), (3, 9), (1, 0), (9, 4)]),
    ("convsan2d   post W=3x3 d=16 h=2 share=none", ["--arch", "convsan2d", "--norm", "post", "--share", "none",
                                                    "--csan-window", "3", "--csan-head-window", "3", "--vocab",
                                                    "300", "--dim", "16", "--heads", "2", "--ffn-dim", "32"], 33,
     [(10, 6), (2, 2), (7, 0)]),
    # Fast-DiSA: the first token of forward heads and the last of backward heads see no key.
    ("fastdisa    pre  exp gate d=32 h=2", ["--arch", "fastdisa", "--norm", "pre", "--vocab", "300", "--dim", "32",
                                            "--heads", "2", "--ffn-dim", "64"], 41,
     [(7, 5), (3, 9), (1, 0), (12, 4), (0, 2)]),
    ("fastdisa    post sigmoid no-gate d=32 h=4", ["--arch", "fastdisa", "--norm", "post", "--disa-t2t", "sigmoid",
                                                   "--no-disa-gate", "--vocab", "300", "--dim", "32", "--heads", "4",
                                                   "--ffn-dim", "64"], 42,
     [(9, 6), (2, 3), (11, 1)]),
    # Our causal decoder variants on a Transformer.
    ("transformer pre  dec=csan W=5 d=32 h=2", _T + ["--decoder-mixer", "csan", "--csan-window", "5", "--norm", "pre",
                                                 "--vocab", "300", "--dim", "32", "--heads", "2", "--ffn-dim", "64"],
     51, [(5, 12), (8, 3), (3, 0), (6, 9)]),
    ("transformer pre  dec=fastdisa d=32 h=2", _T + ["--decoder-mixer", "fastdisa", "--norm", "pre", "--vocab", "300",
                                                 "--dim", "32", "--heads", "2", "--ffn-dim", "64"], 52,
     [(5, 12), (8, 3), (3, 0), (0, 4)]),
    ("transformer post dec=muse k=3,15 d=32 h=2", _T + ["--decoder-mixer", "muse", "--norm", "post", "--vocab", "300",
                                                    "--dim", "32", "--heads", "2", "--ffn-dim", "64"], 53,
     [(5, 12), (8, 3), (3, 0), (6, 9)]),
]


def make_sentences(seed: int, vocab: int, lengths: List[Tuple[int, int]]):
    rng = np.random.default_rng(seed)
    draw = lambda n: [int(x) for x in rng.integers(attn_twin.EOS + 1, vocab, size=n)]  # noqa: E731
    return [draw(s) for s, _ in lengths], [draw(t) for _, t in lengths]


def batch_from_dump(tensors: Dict[str, np.ndarray]) -> Dict[str, torch.Tensor]:
    return {key: torch.from_numpy(np.rint(tensors["batch." + key]).astype(np.int64))
            for key in ("src", "src_lengths", "tgt_in", "tgt_out", "tgt_lengths")}


_twin_cache: Dict[tuple, tuple] = {}


def run_twin(model_path: str, batch: Dict[str, torch.Tensor], label_smoothing: float, dtype: torch.dtype):
    """Returns (log-probs [R, V] float64, loss, nll, tokens, {name: grad float64}, model); memoised, as
    the dumps of several ISAs share the model and the batch."""
    key = (os.path.abspath(model_path), os.path.getmtime(model_path), label_smoothing, dtype,
           tuple((k, tuple(v.flatten().tolist())) for k, v in sorted(batch.items())))
    if key not in _twin_cache:
        _twin_cache[key] = _run_twin(model_path, batch, label_smoothing, dtype)
    return _twin_cache[key]


def _run_twin(model_path: str, batch: Dict[str, torch.Tensor], label_smoothing: float, dtype: torch.dtype):
    model, _ = attn_twin.load_model_file(model_path, dtype)
    model.eval()
    lp = model(batch)
    loss, nll, tokens = attn_twin.label_smoothed_loss(lp.reshape(-1, lp.shape[-1]), batch["tgt_out"].reshape(-1),
                                                      label_smoothing)
    loss.backward()
    grads = {name: p.grad.detach().double().numpy() for name, p in model.named_parameters()}
    return lp.detach().double().reshape(-1, lp.shape[-1]).numpy(), float(loss), float(nll), tokens, grads, model


def incremental_error(model: attn_twin.Seq2Seq, batch: Dict[str, torch.Tensor], lp_forced: np.ndarray) -> float:
    """The twin's cached incremental decoder against its teacher-forced pass, on valid rows."""
    with torch.inference_mode():
        b, tt = batch["tgt_in"].shape
        memory = model.encode(batch["src"], batch["src_lengths"])
        state = model.start_decoding(memory, batch["src_lengths"], tt)
        forced = torch.from_numpy(lp_forced).view(b, tt, -1)
        worst = 0.0
        for t in range(tt):
            step = model.decode_step(state, batch["tgt_in"][:, t]).double()
            valid = t < batch["tgt_lengths"]
            if valid.any():
                worst = max(worst, float((step - forced[:, t])[valid].abs().max()))
    return worst


def rescore(model: attn_twin.Seq2Seq, source: List[int], tokens: List[int]) -> np.ndarray:
    """The twin's log-probs [len(tokens) + 1, V] of each step of a hypothesis (</s> last)."""
    with torch.inference_mode():
        return model(attn_twin.make_batch([source], [tokens]))[0].double().numpy()


def check_decoding(model: attn_twin.Seq2Seq, meta: Dict[str, str], batch: Dict[str, torch.Tensor]) -> Tuple[bool, str]:
    """attn's greedy and beam results (from the dump) against the twin. Greedy: every word attn
    picked is the twin's arg-max within TOL_PICK (or the forced </s>) and its log-prob sum agrees;
    the summary counts how many equal the twin's own greedy search.
    Beam: the same hypotheses as the twin's beam search; where they differ (a near tie can send two
    correct searches apart), attn's hypothesis must score, under the twin, within TOL_PICK of the
    twin's own best (else a failure), and it is counted in the summary."""
    if "greedy" not in meta:
        return True, "-"
    sources = [row[:n].tolist() for row, n in zip(batch["src"], batch["src_lengths"].tolist())]
    ok, problems, beam_differs, greedy_differs = True, [], 0, 0
    search = json.loads(meta["search"])
    lenpen, len_a, len_b = search["lenpen"], search["max_len_a"], search["max_len_b"]
    twin_greedy = attn_twin.greedy_search(model, sources, lenpen=lenpen, max_len_a=len_a, max_len_b=len_b)
    for i, hyp in enumerate(json.loads(meta["greedy"])):
        greedy_differs += hyp["tokens"] != twin_greedy[i].tokens
        lp = rescore(model, sources[i], hyp["tokens"])
        words = hyp["tokens"] + [attn_twin.EOS]
        limit = attn_twin.max_target_len(len(sources[i]), len_a, len_b, model.config.max_positions)
        if len(hyp["tokens"]) > limit:
            ok = False
            problems.append(f"greedy sentence {i}: {len(hyp['tokens'])} words, over the limit of {limit}")
        allowed = lp.copy()
        allowed[:, [attn_twin.PAD, attn_twin.BOS]] = -np.inf
        for t, w in enumerate(words):
            if not (t >= limit and w == attn_twin.EOS) and lp[t, w] < allowed[t].max() - TOL_PICK:
                ok = False
                problems.append(f"greedy sentence {i} step {t}: attn picked {w} ({lp[t, w]:.6f}), the twin's "
                                f"best is {int(allowed[t].argmax())} ({allowed[t].max():.6f})")
                break
        total = float(sum(lp[t, w] for t, w in enumerate(words)))
        if abs(total - hyp["logprob"]) > TOL_DECODE_LOGPROB:
            ok = False
            problems.append(f"greedy sentence {i}: attn's log-prob {hyp['logprob']:.6f}, the twin's {total:.6f}")
    twin_beam = attn_twin.beam_search(model, sources, beam=search["beam"], lenpen=lenpen, max_len_a=len_a,
                                      max_len_b=len_b)
    for i, hyp in enumerate(json.loads(meta["beam"])):
        mine = twin_beam[i][0]
        if hyp["tokens"] == mine.tokens:
            if abs(hyp["score"] - mine.score) > TOL_DECODE_LOGPROB:
                ok = False
                problems.append(f"beam sentence {i}: same words, scores {hyp['score']:.6f} (attn) "
                                f"{mine.score:.6f} (twin)")
            continue
        beam_differs += 1
        lp = rescore(model, sources[i], hyp["tokens"])
        words = hyp["tokens"] + [attn_twin.EOS]
        score = float(sum(lp[t, w] for t, w in enumerate(words))) / len(words) ** lenpen
        if score < mine.score - TOL_PICK:
            ok = False
            problems.append(f"beam sentence {i}: attn's hypothesis scores {score:.6f} under the twin, the twin's "
                            f"own {mine.score:.6f}:\n      attn {hyp['tokens']}\n      twin {mine.tokens}")
    for p in problems:
        print("  " + p)
    n = len(sources)
    summary = f"{'ok' if ok else 'FAIL'} {n - greedy_differs}/{n} {n - beam_differs}/{n}"
    return ok, summary


def grad_errors(grads: Dict[str, np.ndarray], reference: Dict[str, np.ndarray]) -> Tuple[Dict[str, float], set]:
    """Per tensor: max abs error / max(max abs of the reference tensor, GRAD_FLOOR x the largest
    gradient of the model). The floor is for gradients that are zero in exact arithmetic (the
    attention key biases: softmax ignores a constant added to every score), where any float32
    result is pure rounding noise. Returns (errors, names of the tensors measured against the floor)."""
    floor = GRAD_FLOOR * max((float(np.abs(r).max()) for r in reference.values() if r.size), default=0.0)
    out, floored = {}, set()
    for name, ref in reference.items():
        if not ref.size:
            out[name] = 0.0
            continue
        own = float(np.abs(ref).max())
        if own < floor:
            floored.add(name)
        scale = max(own, floor)
        diff = float(np.abs(grads[name].astype(np.float64) - ref).max())
        out[name] = diff / scale if scale > 0 else diff
    return out, floored


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def compare(model_path: str, dump_path: str, label: str, verbose: bool) -> Tuple[bool, List[str]]:
    """Compares one dump; returns (ok, table row cells)."""
    dump, meta = read_safetensors(dump_path)
    batch = batch_from_dump(dump)
    ls = float(meta["label_smoothing"])
    lp64, loss64, nll64, tokens64, grads64, model64 = run_twin(model_path, batch, ls, torch.float64)
    lp32, loss32, nll32, _, grads32, _ = run_twin(model_path, batch, ls, torch.float32)

    attn_lp = dump["logprobs"].astype(np.float64)
    attn_grads = {name[len("grad."):]: arr for name, arr in dump.items() if name.startswith("grad.")}
    missing = sorted(set(grads64) ^ set(attn_grads))
    if missing:
        raise SystemExit(f"{dump_path}: parameter sets differ between attn and the twin: {missing[:5]}")

    lp_err = float(np.abs(attn_lp - lp64).max())
    lp_err32 = float(np.abs(lp32 - lp64).max())
    loss_err, nll_err = rel(float(meta["loss"]), loss64), rel(float(meta["nll"]), nll64)
    g_err, floored = grad_errors(attn_grads, grads64)
    g_err32, _ = grad_errors(grads32, grads64)
    worst = max(g_err, key=g_err.get)
    normal = [n for n in g_err if n not in floored] or list(g_err)
    worst_normal = max(normal, key=g_err.get)
    worst_floored = max((g_err[n] for n in floored), default=0.0)
    tokens_ok = int(meta["tokens"]) == tokens64
    inc_key = (id(model64), "incremental")
    if inc_key not in _twin_cache:
        _twin_cache[inc_key] = incremental_error(model64, batch, lp64)
    inc_err = _twin_cache[inc_key]

    decode_key = (id(model64), "decoding", meta.get("greedy"), meta.get("beam"))
    if decode_key not in _twin_cache:
        _twin_cache[decode_key] = check_decoding(model64, meta, batch)
    decode_ok, decode_summary = _twin_cache[decode_key]
    ok = (lp_err <= TOL_LOGPROB and loss_err <= TOL_LOSS and nll_err <= TOL_LOSS and g_err[worst] <= TOL_GRAD
          and tokens_ok and inc_err <= 1e-9 and decode_ok)
    bad = [n for n, e in g_err.items() if e > TOL_GRAD]
    if verbose or bad:
        print(f"\n  {label} [{meta.get('isa', '?')}]: gradients, attn and twin32 vs twin64 "
              f"(see grad_errors), {'all' if verbose else 'failing'} tensors:")
        for name in sorted(g_err) if verbose else bad:
            flag = "  <-- over tolerance" if g_err[name] > TOL_GRAD else ""
            print(f"    {name:40s} {g_err[name]:9.2e} {g_err32[name]:9.2e}  max|g| {np.abs(grads64[name]).max():9.3e}{flag}")
    if not tokens_ok:
        print(f"\n  {label}: attn counted {meta['tokens']} target tokens, the twin {tokens64}")
    cells = [label, meta.get("isa", "?"), f"{lp_err:.1e} ({lp_err32:.0e})", f"{loss_err:.1e} ({rel(loss32, loss64):.0e})",
             f"{nll_err:.1e}", f"{g_err[worst_normal]:.1e} ({max(g_err32[n] for n in normal):.0e}) {worst_normal}",
             f"{worst_floored:.0e} ({len(floored)})", f"{inc_err:.0e}", decode_summary,
             "ok" if ok else "FAIL"]
    return ok, cells


HEADER = ["model", "isa", "logprob max|Δ| (f32 twin)", "loss rel (f32)", "nll rel", "grad worst rel (f32) tensor",
          "≈0 grads (n)", "twin incr", "decoding", ""]


def print_table(rows: List[List[str]]) -> None:
    widths = [max(len(r[i]) for r in [HEADER] + rows) for i in range(len(HEADER))]
    for r in [HEADER] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def isas_to_run(choice: str) -> List[str]:
    if choice == "all":
        return ["scalar", "avx2", "avx512"]
    if choice == "best":
        return [""]
    return choice.split(",")


# -- the twin's self-test (no C++) ------------------------------------------
import math  # noqa: E402

import mechanisms as M  # noqa: E402

TOL_SELF = 1e-10  # float64: the twin against itself or a naive loop


def naive_window_attention(q, k, v, lengths, left, right, n):
    """2D-CSAN (1D when n = 0) by loops. q/k/v [B, H, T, dh] float64 numpy -> [B, H, T, dh]."""
    b_, h_, t_, dh = q.shape
    out = np.zeros_like(q)
    for b in range(b_):
        for h in range(h_):
            for i in range(lengths[b]):
                slots = [(s, j) for s in range(max(0, h - n), min(h_, h + n + 1))
                         for j in range(max(0, i - left), min(lengths[b], i + right + 1))]
                logits = np.array([q[b, h, i] @ k[b, s, j] / math.sqrt(dh) for s, j in slots])
                w = np.exp(logits - logits.max())
                w /= w.sum()
                out[b, h, i] = sum(a * v[b, s, j] for a, (s, j) in zip(w, slots))
    return out


def naive_dynamic_conv(taps, v, lengths, offset):
    """MUSE's conv by loops: taps [B, T, H, k], v [B, T, d] -> [B, T, d]; v zero outside [0, length)."""
    b_, t_, h_, k_ = taps.shape
    d = v.shape[-1]
    dh = d // h_
    out = np.zeros_like(v)
    for b in range(b_):
        for t in range(lengths[b]):
            for c in range(d):
                out[b, t, c] = sum(taps[b, t, c // dh, kk] * v[b, t + kk - offset, c] for kk in range(k_)
                                   if 0 <= t + kk - offset < lengths[b])
    return out


def naive_featurewise(log_a, s, v, allowed):
    """Fast-DiSA's definition by loops: softmax over allowed j of log_a[i, j] + s[j, c], per feature c."""
    b_, h_, t_, dh = s.shape
    out = np.zeros((b_, h_, log_a.shape[2], dh))
    for b in range(b_):
        for h in range(h_):
            for i in range(log_a.shape[2]):
                keys = [j for j in range(t_) if allowed[b, h, i, j]]
                if not keys:
                    continue
                for c in range(dh):
                    z = np.array([log_a[b, h, i, j] + s[b, h, j, c] for j in keys])
                    w = np.exp(z - z.max())
                    out[b, h, i, c] = (w / w.sum()) @ np.array([v[b, h, j, c] for j in keys])
    return out


def _random_parameters(module: torch.nn.Module, seed: int, scale: float = 0.5) -> None:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=gen, dtype=p.dtype))


def mechanism_self_test() -> List[Tuple[str, float]]:
    """Each mixer's forward against a naive loop of its definition; float64, random inputs with padding."""
    results = []
    torch.manual_seed(0)
    b, t, d = 3, 9, 16
    lengths = [9, 4, 1]
    valid = torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]
    x = torch.randn(b, t, d, dtype=torch.float64)

    def rows(y):  # valid rows only
        return y[valid]

    for heads, window, head_window, causal in [(2, 5, 1, False), (4, 5, 3, False), (4, 3, 3, False),
                                               (2, 5, 1, True), (1, 3, 3, False), (4, 7, 3, True)]:
        spec = M.MixerSpec(kind="csan2d" if head_window > 1 else "csan", d=d, heads=heads, window=window,
                           head_window=head_window, causal=causal)
        mixer = M.make_mixer(spec).double()
        _random_parameters(mixer, 1)
        y = mixer(x, valid)
        q, k, v = (mixer.split(f(x)).detach().numpy() for f in (mixer.q, mixer.k, mixer.v))
        ctx = naive_window_attention(q, k, v, lengths, mixer.left, mixer.right, (head_window - 1) // 2)
        ref = mixer.o(M.merge_heads(torch.from_numpy(ctx)))
        results.append((f"csan h={heads} W={window}x{head_window}{' causal' if causal else ''} vs loops",
                        float((rows(y) - rows(ref)).abs().max())))

    for heads, kernels, causal, separate in [(2, [3, 15], False, False), (4, [4, 1], False, False),
                                             (2, [3, 5], True, False), (2, [2], True, False),
                                             (2, [3, 15], False, True), (4, [3, 5], True, True)]:
        spec = M.MixerSpec(kind="muse", d=d, heads=heads, kernels=kernels, causal=causal, muse_separate=separate)
        mixer = M.make_mixer(spec).double().eval()
        _random_parameters(mixer, 2)
        y = mixer(x, valid)
        qh, kh, vh = (M.split_heads(f(x), heads) for f in (mixer.q, mixer.k, mixer.v))
        allowed = valid[:, None, None, :] & (M.causal_mask(t) if causal else True)
        att = M.dot_attention(qh, kh, vh, allowed, valid)
        cells_in = (x @ mixer.conv_in.weight.T) if separate else mixer.v(x)  # what the cells read
        pi = torch.softmax(mixer.gate, 0).detach().numpy()
        cmix = 0
        for i, cell in enumerate(mixer.conv):
            taps = cell.taps(cells_in, 0.0).detach().numpy()
            cmix = cmix + pi[i] * naive_dynamic_conv(taps, cells_in.detach().numpy(), lengths,
                                                     mixer.offset(cell.kernel))
        ref = mixer.o(torch.cat([att, torch.from_numpy(cmix)], -1))
        results.append((f"muse{'-separate' if separate else ''} h={heads} k={kernels}{' causal' if causal else ''}"
                        " vs loops",
                        float((rows(y) - rows(ref)).abs().max())))

    for heads, t2t, gate, causal in [(2, "exp", True, False), (4, "sigmoid", False, False), (2, "exp", True, True),
                                     (3, "sigmoid", True, True)]:
        spec = M.MixerSpec(kind="fastdisa", d=d - d % heads if d % heads else d, heads=heads, disa_t2t=t2t,
                           disa_gate=gate, causal=causal)
        dd = spec.d
        xx = x[..., :dd]
        mixer = M.make_mixer(spec).double()
        _random_parameters(mixer, 3)
        with torch.no_grad():  # logits near +-80 in some rows: the shifts must keep them exact
            mixer.q.weight.mul_(6.0)
        y = mixer(xx, valid)
        mixer.factorised = False
        y_direct = mixer(xx, valid)
        mixer.factorised = True
        q, k, v = (M.split_heads(f(xx), heads) for f in (mixer.q, mixer.k, mixer.v))
        log_a = mixer.log_t2t(q @ k.transpose(-1, -2) / math.sqrt(dd // heads))
        allowed = (mixer.directions(t)[None] & valid[:, None, None, :]).numpy()
        o = naive_featurewise(log_a.detach().numpy(), mixer.source2token(v).detach().numpy(), v.detach().numpy(),
                              allowed)
        u = mixer.fuse(v, torch.from_numpy(o))
        ref = mixer.o(M.merge_heads(u))
        name = f"fastdisa h={heads} {t2t}{' gate' if gate else ''}{' causal' if causal else ''}"
        results.append((name + " factorised vs loops", float((rows(y) - rows(ref)).abs().max())))
        results.append((name + " direct vs loops", float((rows(y_direct) - rows(ref)).abs().max())))
        # Gradients of the two forms (the factorised one's shifts are constants).
        grads = []
        for factorised in (True, False):
            mixer.factorised = factorised
            mixer.zero_grad()
            xg = xx.clone().requires_grad_(True)
            (mixer(xg, valid) * torch.cos(torch.arange(dd, dtype=torch.float64))).sum().backward()
            grads.append([xg.grad] + [p.grad.clone() for p in mixer.parameters()])
        mixer.factorised = True
        # Relative to the largest gradient: k.bias and s2.bias have an exact gradient of 0 (a constant
        # added to every key's logit), so their own scale is rounding noise.
        scale = max(float(g.abs().max()) for g in grads[1])
        err = max(float((a - b_).abs().max()) for a, b_ in zip(*grads)) / scale
        results.append((name + " grads factorised vs direct", err))
    return results


SELF_TEST_CONFIGS = [
    {"arch": "transformer"},
    {"arch": "transformer", "norm": "post", "share_all_embeddings": False, "share_decoder_output": False},
    {"arch": "muse"},
    {"arch": "muse", "norm": "post", "muse_kernels": [4, 1], "share_all_embeddings": False},
    {"arch": "muse-simple"},
    {"arch": "muse-separate"},
    {"arch": "muse", "muse_separate_projection": True, "norm": "post", "muse_kernels": [4, 1]},
    {"arch": "convsan", "csan_window": 3},
    {"arch": "convsan2d", "csan_window": 5, "heads": 4, "csan_layers": 2},
    {"arch": "fastdisa"},
    {"arch": "fastdisa", "norm": "post", "disa_t2t": "sigmoid", "disa_gate": False, "heads": 4},
    {"arch": "transformer", "decoder_mixer": "csan", "csan_window": 3},
    {"arch": "transformer", "decoder_mixer": "fastdisa", "heads": 1},
    {"arch": "transformer", "decoder_mixer": "fastdisa", "disa_t2t": "sigmoid", "norm": "post"},
    {"arch": "transformer", "decoder_mixer": "muse", "muse_kernels": [3, 5]},
    {"arch": "transformer", "decoder_mixer": "muse", "muse_separate_projection": True},
    {"arch": "convsan2d", "decoder_mixer": "muse", "norm": "post", "csan_window": 3},
]


def model_self_test(overrides: dict, seed: int) -> Dict[str, float]:
    """One architecture in float64 with random parameters: incremental == teacher forcing, decoder
    causality, padded batch == each sentence alone, finite gradients. Returns the errors."""
    config = {"vocab_size": 40, "dim": 16, "heads": 2, "ffn_dim": 24, "enc_layers": 2, "dec_layers": 2,
              "dropout": 0.0, "max_positions": 64}
    config.update(overrides)
    model = attn_twin.build_model(config, dtype=torch.float64, seed=seed).eval()
    _random_parameters(model, seed, 0.3)
    rng = np.random.default_rng(seed)
    lengths = [(7, 5), (3, 9), (1, 0), (11, 4), (0, 2)]
    draw = lambda n: [int(x) for x in rng.integers(attn_twin.EOS + 1, config["vocab_size"], size=n)]  # noqa: E731
    sources, targets = [draw(a) for a, _ in lengths], [draw(b) for _, b in lengths]
    batch = attn_twin.make_batch(sources, targets)
    errors = {}
    with torch.no_grad():
        lp = model(batch)
        errors["incremental"] = incremental_error(model, batch, lp.reshape(-1, lp.shape[-1]).numpy())
        alone = 0.0
        for i, (src, tgt) in enumerate(zip(sources, targets)):
            one = model(attn_twin.make_batch([src], [tgt]))[0]
            alone = max(alone, float((one - lp[i, :len(tgt) + 1]).abs().max()))
        errors["padding"] = alone
        # Causality: changing target words after position t changes no log-prob at <= t.
        worst = 0.0
        for t in range(batch["tgt_in"].shape[1] - 1):
            changed = dict(batch)
            tgt_in = batch["tgt_in"].clone()
            tgt_in[:, t + 1:] = torch.from_numpy(rng.integers(attn_twin.EOS + 1, config["vocab_size"],
                                                              size=tuple(tgt_in[:, t + 1:].shape)))
            changed["tgt_in"] = tgt_in
            worst = max(worst, float((model(changed)[:, :t + 1] - lp[:, :t + 1]).abs().max()))
        errors["causality"] = worst
    model.zero_grad()
    loss, _, _ = model.loss(batch, 0.1)
    loss.backward()
    finite = all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)
    errors["finite grads"] = 0.0 if finite else math.inf
    return errors


def self_test(verbose: bool = False) -> bool:
    ok = True
    print("twin self-test (float64, no C++): each mechanism against a naive loop of its definition")
    for name, err in mechanism_self_test():
        good = err <= TOL_SELF
        ok &= good
        if verbose or not good:
            print(f"  {name:58s} {err:9.1e}  {'ok' if good else 'FAIL'}")
    print("  per architecture: incremental decoding == teacher forcing, decoder causality, a padded batch == "
          "each sentence alone, finite gradients")
    for index, overrides in enumerate(SELF_TEST_CONFIGS):
        errors = model_self_test(overrides, 7 + index)
        good = all(e <= TOL_SELF for e in errors.values())
        ok &= good
        label = " ".join(f"{k}={v}" for k, v in overrides.items())
        cells = "  ".join(f"{k} {v:.0e}" for k, v in errors.items())
        if verbose or not good:
            print(f"  {label:70s} {cells}  {'ok' if good else 'FAIL'}")
    print(f"twin self-test: {'ok' if ok else 'FAILED'} (tolerance {TOL_SELF:g})\n")
    return ok


def run_matrix(args) -> int:
    os.makedirs(args.work_dir, exist_ok=True)
    rows, all_ok = [], True
    if not args.no_self_test:
        all_ok &= self_test(args.verbose)
    only = [word.strip() for word in args.only.split(",")] if args.only else []
    for index, (label, init_flags, seed, lengths) in enumerate(MATRIX):
        if only and not any(label.split()[0] == word or word in label for word in only):
            continue
        model_path = os.path.join(args.work_dir, f"model{index}.attn")
        result = subprocess.run([args.twin_dump, "init", model_path, "--seed", str(100 + index)] + init_flags,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:  # e.g. a mixer this build of attn does not have yet
            print(f"  {label}: twin_dump init failed: {result.stderr.strip()}")
            rows.append([label, "-", "attn could not build the model", "", "", "", "", "", "", "FAIL"])
            all_ok = False
            continue
        vocab = int(init_flags[init_flags.index("--vocab") + 1])
        sources, targets = make_sentences(seed, vocab, lengths)
        batch_path = os.path.join(args.work_dir, f"batch{index}.json")
        with open(batch_path, "w") as f:
            json.dump({"sources": sources, "targets": targets}, f)
        for isa in isas_to_run(args.isa):
            dump_path = os.path.join(args.work_dir, f"dump{index}{'-' + isa if isa else ''}.safetensors")
            cmd = [args.twin_dump, "run", model_path, dump_path, "--batch", batch_path,
                   "--label-smoothing", str(args.label_smoothing)] + (["--isa", isa] if isa else [])
            result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if result.returncode != 0:
                if "lacks" in result.stderr or "not support" in result.stderr:
                    print(f"  {label}: skipping ISA {isa}: {result.stderr.strip()}")
                    continue
                print(f"  {label} [{isa}]: twin_dump run failed: {result.stderr.strip()}")
                rows.append([label, isa, "attn failed on the batch", "", "", "", "", "", "", "FAIL"])
                all_ok = False
                continue
            ok, cells = compare(model_path, dump_path, label, args.verbose)
            all_ok &= ok
            rows.append(cells)
    print()
    print_table(rows)
    print(f"\ntolerances: log-probs {TOL_LOGPROB:g} abs, loss/nll {TOL_LOSS:g} rel, gradients {TOL_GRAD:g} "
          f"(max|Δ| / max(max|ref|, {GRAD_FLOOR:g} x the largest gradient) per tensor; '≈0 grads': the n tensors "
          f"whose exact gradient is below that floor, e.g. attention key biases); reference: the float64 twin; "
          f"'twin incr': the twin's cached decoder vs its teacher-forced pass; 'decoding': attn's greedy picks "
          f"are the twin's arg-max (within {TOL_PICK:g}), and how many of attn's greedy / beam results equal the "
          f"twin's")
    print("crosscheck: " + ("all match" if all_ok else "MISMATCH"))
    return 0 if all_ok else 1


def write_reference(args) -> int:
    """The float64 twin on every row of the matrix, as the committed reference of
    tests/model/test_twin_reference.cpp: the row's config (from the model file twin_dump init
    wrote), its init seed and perturbation, the batch, the label-smoothed loss and NLL sums and
    every parameter gradient's L2 norm."""
    os.makedirs(args.work_dir, exist_ok=True)
    rows = []
    for index, (label, init_flags, seed, lengths) in enumerate(MATRIX):
        model_path = os.path.join(args.work_dir, f"model{index}.attn")
        init_seed = 100 + index
        subprocess.run([args.twin_dump, "init", model_path, "--seed", str(init_seed)] + init_flags,
                       stdout=subprocess.DEVNULL, check=True)
        _, meta = read_safetensors(model_path)
        vocab = int(init_flags[init_flags.index("--vocab") + 1])
        sources, targets = make_sentences(seed, vocab, lengths)
        batch_path = os.path.join(args.work_dir, f"batch{index}.json")
        with open(batch_path, "w") as f:
            json.dump({"sources": sources, "targets": targets}, f)
        dump_path = os.path.join(args.work_dir, f"dump{index}.safetensors")
        subprocess.run([args.twin_dump, "run", model_path, dump_path, "--batch", batch_path, "--label-smoothing",
                        str(args.label_smoothing)], stdout=subprocess.DEVNULL, check=True)
        batch = batch_from_dump(read_safetensors(dump_path)[0])
        _, loss, nll, tokens, grads, _ = _run_twin(model_path, batch, args.label_smoothing, torch.float64)
        rows.append({"label": label, "config": json.loads(meta["config"]), "init_seed": init_seed, "perturb": 0.05,
                     "sources": sources, "targets": targets, "label_smoothing": args.label_smoothing,
                     "loss": loss, "nll": nll, "tokens": int(tokens),
                     "grad_norms": {name: float(np.linalg.norm(g)) for name, g in sorted(grads.items())}})
        print(f"  {label}: loss {loss:.10g}, {len(grads)} gradients")
    with open(args.write_reference, "w") as f:
        json.dump({"about": "float64 PyTorch twin (bench/twin) on fixed tiny batches; written by "
                            "bench/twin/crosscheck.py --write-reference, checked by tests/model/test_twin_reference.cpp",
                   "rows": rows}, f, indent=1)
        f.write("\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--twin-dump", help="the twin_dump binary: run the whole matrix")
    parser.add_argument("--work-dir", default="build/twin-check")
    parser.add_argument("--isa", default="all", help="all | best | comma-separated list of scalar,avx2,avx512")
    parser.add_argument("--only", help="comma-separated: rows whose arch (first word) or label contains one of them")
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--model", help="compare one dump: the model file it was made from")
    parser.add_argument("--dump", help="compare one dump: the twin_dump run output")
    parser.add_argument("--self-test", action="store_true", help="only the twin's self-test (no C++)")
    parser.add_argument("--no-self-test", action="store_true", help="skip the self-test before the matrix")
    parser.add_argument("--verbose", action="store_true", help="every gradient tensor's error, every self-test row")
    parser.add_argument("--write-reference", help="with --twin-dump: write the twin's reference for make test here")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.self_test:
        return 0 if self_test(verbose=True) else 1
    if args.model and args.dump:
        ok, cells = compare(args.model, args.dump, os.path.basename(args.model), args.verbose)
        print_table([cells])
        return 0 if ok else 1
    if not args.twin_dump:
        parser.error("give --twin-dump, or --model and --dump, or --self-test")
    if args.write_reference:
        return write_reference(args)
    return run_matrix(args)


if __name__ == "__main__":
    sys.exit(main())
