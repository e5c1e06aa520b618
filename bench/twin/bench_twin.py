"""The PyTorch side of bench/twin_bench.sh: the twin trains on attn's batches and decodes attn's sources.

    bench_twin.py train  --batches B.json --init INIT.attn --out OUT.json [--steps N] [--threads 2]
                         [--loss fused|attn] [--autocast bf16]
    bench_twin.py decode --model M.attn --attn-result ATTN.json --out OUT.json [--threads 2] [--warmup 8]
                         [--drop-finished]

train: B.json and INIT.attn come from `twin_dump batches` (the first batches `attn train --seed S`
makes, and the parameters it starts from). Before timing, the initial model's evaluation-mode loss on
batch 0 is compared with attn's (the same parameters and batch, attn's smoothing convention, or
the run stops). Each step is attn's update: zero the gradients, forward, label-smoothed loss
averaged over target tokens, backward, gradient norm, AdamW (lr = attn's inverse-sqrt schedule,
lr 1e-3, warm-up 400), timed with perf_counter from zero_grad to the end of the optimizer step
(batch tensors are built before the clock starts). The loss is PyTorch's fused
F.cross_entropy(label_smoothing=eps, ignore_index=<pad>, reduction="sum") (--loss fused, the
default: eps / V on every word, attn gives eps / (V - 1) to the others, so the value differs
slightly, ~1e-7 relative at the initial model; the cost is what is measured) or the twin's hand-written copy of attn's
(--loss attn). --autocast bf16: forward and loss under torch.autocast("cpu", dtype=torch.bfloat16),
PyTorch's own mixed precision (float32 parameters, gradients and AdamW).

decode: the sources, beam, batch size and length rule of one bench_decode run (ATTN.json), decoded
in the same order and batches (longest first) with greedy_search (beam 1) or beam_search, under
torch.inference_mode, key/value caches, last-position logits. A warm-up batch of the first
--warmup sentences runs untimed first, as bench_decode does. Finished sentences stay in the batch
(fed </s>, as a simple PyTorch search does) unless --drop-finished, which removes them from the
decoder state each step as attn's search does: the two rows show how much of attn's lead is search
bookkeeping rather than kernels.

Both write JSON with the timings, the process's peak resident memory (ru_maxrss) and, when loaded,
the OpenBLAS core: run with OPENBLAS_CORETYPE=SkylakeX (bench/twin_bench.sh sets it for this process
only), or Debian's OpenBLAS falls back to its SSE3 kernels on this CPU; bench/twin_bench.sh also sets
OPENBLAS_NUM_THREADS to the thread count, beside torch.set_num_threads.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_twin as T  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def openblas_core() -> str:
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def environment(threads: int) -> dict:
    torch.set_num_threads(threads)
    return {"side": "twin", "torch": torch.__version__, "threads": torch.get_num_threads(),
            "openblas_core": openblas_core(), "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", ""),
            "mkldnn_available": bool(torch.backends.mkldnn.is_available())}


def write(path: str, result: dict) -> None:
    with open(path, "w") as f:
        json.dump(result, f)
        f.write("\n")


def train(args) -> int:
    result = environment(args.threads)
    autocast = {"none": None, "bf16": torch.bfloat16}[args.autocast]
    fused = args.loss == "fused"
    result.update(loss=args.loss, autocast=args.autocast)
    with open(args.batches) as f:
        data = json.load(f)
    torch.manual_seed(data["seed"])
    model, _ = T.load_model_file(args.init)
    label_smoothing = float(data["label_smoothing"])
    result["parameters"] = sum(p.numel() for p in model.parameters())
    batches = data["batches"][:args.steps] if args.steps > 0 else data["batches"]
    tensors = [T.make_batch(b["sources"], b["targets"]) for b in batches]

    # The same parameters and batch as attn: its loss on batch 0 without dropout.
    with torch.no_grad():
        model.eval()
        loss, _, tokens = model.loss(tensors[0], label_smoothing)
    expected = float(data["init_eval_loss"])
    result["init_loss"] = {"attn": expected, "twin": float(loss), "rel_diff": abs(float(loss) - expected) / abs(expected)}
    if tokens != data["init_eval_tokens"] or result["init_loss"]["rel_diff"] > 1e-4:
        print(f"bench_twin: the twin's initial loss on batch 0 is {float(loss):.6f} over {tokens} tokens, attn's "
              f"{expected:.6f} over {data['init_eval_tokens']}: not the same model or batch", file=sys.stderr)
        return 1
    # The loss the timed steps compute, on the same batch: the fused loss's other smoothing convention,
    # and under autocast bf16 the rounding too (reported, not checked).
    with torch.no_grad():
        if autocast is not None:
            with torch.autocast("cpu", dtype=autocast):
                timed, _, _ = model.loss(tensors[0], label_smoothing, fused=fused)
        else:
            timed, _, _ = model.loss(tensors[0], label_smoothing, fused=fused)
    result["init_loss"]["timed"] = float(timed)
    result["init_loss"]["timed_rel_diff"] = abs(float(timed) - expected) / abs(expected)

    optimizer = T.make_optimizer(model, lr=1e-3)
    for group in optimizer.param_groups:
        if "foreach" in group:
            group["foreach"] = True  # one fused update over all tensors: the twin's fastest AdamW
    result["rss_setup_mb"] = peak_rss_mb()
    steps = []
    for update, (batch, meta) in enumerate(zip(tensors, batches), start=1):
        lr = T.inverse_sqrt_lr(update, 1e-3, 400)
        start = time.perf_counter()
        info = T.train_step(model, optimizer, batch, label_smoothing=label_smoothing, lr=lr, fused_loss=fused,
                            autocast_dtype=autocast)
        seconds = time.perf_counter() - start
        if info["tokens"] != meta["target_tokens"]:
            print(f"bench_twin: batch {update} has {info['tokens']} target tokens, attn's {meta['target_tokens']}",
                  file=sys.stderr)
            return 1
        if not math.isfinite(info["loss"]):
            print(f"bench_twin: update {update}: the loss is {info['loss']}", file=sys.stderr)
            return 1
        steps.append({"update": update, "tokens": info["tokens"], "seconds": seconds, "loss": info["loss"] / info["tokens"],
                      "nll": info["nll"] / info["tokens"]})
        if args.verbose:
            print(f"twin update {update}: {info['tokens']} tokens, {seconds:.2f} s, {info['tokens'] / seconds:.0f} tok/s, "
                  f"loss {info['loss'] / info['tokens']:.3f}, nll {info['nll'] / info['tokens']:.3f}", file=sys.stderr)
    result["steps"] = steps
    result["peak_rss_mb"] = peak_rss_mb()
    write(args.out, result)
    rates = sorted(s["tokens"] / s["seconds"] for s in steps)
    print(f"twin train ({args.loss} loss{', autocast ' + args.autocast if autocast is not None else ''}): "
          f"{len(steps)} updates, median {rates[len(rates) // 2]:.0f} target tokens/s, last loss "
          f"{steps[-1]['loss']:.3f}, nll {steps[-1]['nll']:.3f}", file=sys.stderr)
    return 0


def decode(args) -> int:
    result = environment(args.threads)
    with open(args.attn_result) as f:
        ref = json.load(f)
    model, _ = T.load_model_file(args.model)
    sources = ref["sources"]
    beam, batch_size, search = int(ref["beam"]), int(ref["batch_size"]), ref["search"]
    # bench_decode's (and attn translate's) order: longest first, stable, empty lines skipped.
    order = [i for i in sorted(range(len(sources)), key=lambda i: -len(sources[i])) if sources[i]]

    def run(ids):
        batch = [sources[i] for i in ids]
        kw = dict(lenpen=search["lenpen"], max_len_a=search["max_len_a"], max_len_b=search["max_len_b"],
                  drop_finished=args.drop_finished)
        if beam == 1:
            return T.greedy_search(model, batch, **kw)
        return [hyps[0] for hyps in T.beam_search(model, batch, beam=beam, **kw)]

    warm = order[:min(args.warmup, batch_size)]
    if warm:
        run(warm)
    hypotheses = [[] for _ in sources]
    output_tokens = 0
    start = time.perf_counter()
    for first in range(0, len(order), batch_size):
        ids = order[first:first + batch_size]
        for i, hyp in zip(ids, run(ids)):
            hypotheses[i] = hyp.tokens
            output_tokens += len(hyp.tokens) + 1
    seconds = time.perf_counter() - start
    result.update(beam=beam, batch_size=batch_size, sentences=len(order), seconds=seconds, drop_finished=args.drop_finished,
                  output_tokens=output_tokens, hypotheses=hypotheses, peak_rss_mb=peak_rss_mb())
    write(args.out, result)
    print(f"twin decode beam {beam} batch {batch_size}{', finished dropped' if args.drop_finished else ''}: "
          f"{len(order)} sentences in {seconds:.2f} s, "
          f"{len(order) / seconds:.1f} sentences/s, {output_tokens / seconds:.0f} tokens/s", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="time training steps on attn's batches")
    p.add_argument("--batches", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=0, help="0: every batch in the file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--loss", choices=("fused", "attn"), default="fused",
                   help="fused: F.cross_entropy(label_smoothing=...), PyTorch's own; attn: the twin's copy of attn's")
    p.add_argument("--autocast", choices=("none", "bf16"), default="none",
                   help='bf16: forward and loss under torch.autocast("cpu", dtype=torch.bfloat16)')
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(run=train)
    p = sub.add_parser("decode", help="time decoding of attn's sources")
    p.add_argument("--model", required=True)
    p.add_argument("--attn-result", required=True, help="the JSON of the bench_decode run to mirror")
    p.add_argument("--out", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--drop-finished", action="store_true",
                   help="remove finished sentences from the batch each step, as attn's search does")
    p.set_defaults(run=decode)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
