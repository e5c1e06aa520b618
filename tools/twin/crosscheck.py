#!/usr/bin/env python3
"""Cross-checks attn's Transformer against its PyTorch twin on fixed batches.

  crosscheck.py --twin-dump build/twin_dump [--work-dir DIR] [--isa all]
      the matrix: for pre/post norm x every embedding-sharing setting, writes a
      random model file (twin_dump init) and a batch of sentences of different
      lengths, runs attn on it (twin_dump run, once per ISA) and compares
  crosscheck.py --model M.attn --dump D.safetensors
      compares one existing dump (e.g. of a trained model)

Compared with the float64 twin (the reference): log-probabilities of every row
(max abs error <= 1e-4), the label-smoothed loss and the NLL sums (relative
error <= 1e-4) and every parameter gradient (max abs error relative to the
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
MATRIX = [
    ("pre  share=all     V=500  d=48 h=4", ["--norm", "pre", "--share", "all", "--vocab", "500", "--dim", "48",
                                           "--heads", "4", "--ffn-dim", "96"], 11,
     [(7, 5), (3, 9), (1, 0), (12, 4), (5, 1)]),
    ("post share=all     V=300  d=32 h=2", ["--norm", "post", "--share", "all", "--vocab", "300", "--dim", "32",
                                           "--heads", "2", "--ffn-dim", "80"], 12,
     [(4, 6), (9, 2), (2, 11), (6, 6)]),
    ("pre  share=none    V=777  d=64 h=8", ["--norm", "pre", "--share", "none", "--vocab", "777", "--dim", "64",
                                           "--heads", "8", "--ffn-dim", "128", "--enc-layers", "3"], 13,
     [(10, 3), (1, 7), (5, 5)]),
    ("post share=decoder V=1000 d=40 h=5", ["--norm", "post", "--share", "decoder", "--vocab", "1000", "--dim", "40",
                                           "--heads", "5", "--ffn-dim", "72", "--dec-layers", "3"], 14,
     [(8, 8), (2, 1), (0, 4), (11, 10), (3, 2), (6, 0)]),  # an empty source: its queries see no key
    ("pre  share=decoder V=400  d=32 h=4", ["--norm", "pre", "--share", "decoder", "--vocab", "400", "--dim", "32",
                                           "--heads", "4", "--ffn-dim", "64"], 15,
     [(5, 7), (0, 3), (8, 2)]),
    ("post share=none    V=600  d=48 h=6", ["--norm", "post", "--share", "none", "--vocab", "600", "--dim", "48",
                                           "--heads", "6", "--ffn-dim", "96"], 16,
     [(3, 4), (7, 9), (1, 1), (12, 0)]),
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


def run_matrix(args) -> int:
    os.makedirs(args.work_dir, exist_ok=True)
    rows, all_ok = [], True
    for index, (label, init_flags, seed, lengths) in enumerate(MATRIX):
        model_path = os.path.join(args.work_dir, f"model{index}.attn")
        subprocess.run([args.twin_dump, "init", model_path, "--seed", str(100 + index)] + init_flags, check=True,
                       stdout=subprocess.DEVNULL)
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
                print(result.stderr, file=sys.stderr)
                return 2
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--twin-dump", help="the twin_dump binary: run the whole matrix")
    parser.add_argument("--work-dir", default="build/twin-check")
    parser.add_argument("--isa", default="all", help="all | best | comma-separated list of scalar,avx2,avx512")
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--model", help="compare one dump: the model file it was made from")
    parser.add_argument("--dump", help="compare one dump: the twin_dump run output")
    parser.add_argument("--verbose", action="store_true", help="every gradient tensor's error")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    if args.model and args.dump:
        ok, cells = compare(args.model, args.dump, os.path.basename(args.model), args.verbose)
        print_table([cells])
        return 0 if ok else 1
    if not args.twin_dump:
        parser.error("give --twin-dump, or --model and --dump")
    return run_matrix(args)


if __name__ == "__main__":
    sys.exit(main())
