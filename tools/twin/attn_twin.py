"""The PyTorch twin of attn's Transformer (src/model/seq2seq.cpp, src/nn/*.cpp).

Same computation, same parameter names and shapes, so an attn model file loads
with load_state_dict(strict=True). Used to cross-check attn's forward and
backward passes (crosscheck.py) and as the PyTorch yardstick in benchmarks.

    from attn_twin import load_model_file, make_batch
    model, meta = load_model_file("runs/toy/best.attn")          # float32, eval mode
    batch = make_batch([[5, 6, 7]], [[8, 9]])
    loss, nll, tokens = model.loss(batch, label_smoothing=0.1)

The model, as attn defines it:
  embed(ids)  = sqrt(d) * table[ids] + sinusoidal[t]   (fairseq layout, t from 0), then dropout
  pre-norm    x = x + Drop(Sublayer(LN(x)))   and a final LayerNorm on each stack ("enc.ln", "dec.ln")
  post-norm   x = LN(x + Drop(Sublayer(x)))
  attention   per-sequence lengths: keys at j >= k_len[b] are masked (and j > t when causal);
              queries at t >= q_len[b] (or every query when k_len[b] == 0) give a zero context,
              so their output is the output projection's bias
  FFN         fc2(Drop_act(ReLU(fc1(x))))
  output      log_softmax(h @ W^T), W the tied target embedding or "out_proj.weight"
  loss        label smoothing as fairseq: the target gets 1 - eps, every other word
              eps / (V - 1); rows whose target is <pad> (0) are skipped; summed over tokens
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from read_model import load as read_safetensors  # noqa: E402  (tools/read_model.py)

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # include/attn/text/vocab.h


@dataclasses.dataclass
class ModelConfig:
    """include/attn/model/config.h; the JSON stored in every model file's "config"."""

    arch: str = "transformer"
    vocab_size: int = 0
    dim: int = 256
    ffn_dim: int = 1024
    heads: int = 4
    enc_layers: int = 3
    dec_layers: int = 3
    dropout: float = 0.3
    activation_dropout: float = 0.0
    norm: str = "pre"
    share_all_embeddings: bool = True
    share_decoder_output: bool = True
    max_positions: int = 1024

    @classmethod
    def from_dict(cls, values: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown model config keys: {sorted(unknown)}")
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        if self.arch != "transformer":
            raise ValueError(f"the twin implements arch 'transformer' only, not {self.arch!r}")
        if self.dim <= 0 or self.dim % 2 or self.dim % self.heads:
            raise ValueError(f"dim {self.dim} must be positive, even and divisible by heads {self.heads}")
        if self.norm not in ("pre", "post"):
            raise ValueError(f"norm must be pre or post, not {self.norm!r}")
        if self.vocab_size <= 4:
            raise ValueError(f"vocab_size {self.vocab_size} is too small")


def sinusoidal_positions(max_len: int, d: int) -> torch.Tensor:
    """[max_len, d]: column j < d/2 is sin(t w_j), column d/2 + j is cos(t w_j),
    w_j = 10000^(-j / (d/2 - 1)). Computed in double and rounded to float32, as attn stores it."""
    half = d // 2
    step = math.log(10000.0) / (half - 1) if half > 1 else 0.0
    freq = torch.exp(-torch.arange(half, dtype=torch.float64) * step)
    angle = torch.arange(max_len, dtype=torch.float64)[:, None] * freq[None, :]
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1).to(torch.float32)


def length_mask(lengths: torch.Tensor, t: int) -> torch.Tensor:
    """lengths [B] -> bool [B, t], True at positions < length."""
    return torch.arange(t, device=lengths.device)[None, :] < lengths[:, None]


class MultiHeadAttention(nn.Module):
    """Names "<name>.{q,k,v,o}.{weight,bias}", weights [d, d] as attn stores them."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.d, self.heads, self.head_dim = d, heads, d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """[B, T, d] -> [B, H, T, dh]."""
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: Optional[torch.Tensor],
               query_valid: Optional[torch.Tensor]) -> torch.Tensor:
        """q [B, H, Tq, dh], k/v [B, H, Tk, dh]; allowed: bool broadcastable to [B, H, Tq, Tk];
        query_valid: bool [B, Tq] (False: zero context). Returns o(context) [B, Tq, d]."""
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        if allowed is not None:
            # A finite fill: a row with no allowed key (only when k_len == 0) stays finite and is
            # zeroed through query_valid, so no NaN reaches the backward pass.
            scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, tq, _ = context.shape
        context = context.transpose(1, 2).reshape(b, tq, self.d)
        if query_valid is not None:
            context = context * query_valid[:, :, None].to(context.dtype)
        return self.o(context)

    def forward(self, x: torch.Tensor, memory: Optional[torch.Tensor], allowed: Optional[torch.Tensor],
                query_valid: Optional[torch.Tensor]) -> torch.Tensor:
        """Self-attention when memory is None, else cross-attention over memory [B, Tk, d]."""
        kv_input = x if memory is None else memory
        return self.attend(self.split(self.q(x)), self.split(self.k(kv_input)), self.split(self.v(kv_input)),
                           allowed, query_valid)


class FeedForward(nn.Module):
    def __init__(self, d: int, ffn_dim: int, activation_dropout: float):
        super().__init__()
        self.fc1 = nn.Linear(d, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d)
        self.activation_dropout = nn.Dropout(activation_dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.activation_dropout(F.relu(self.fc1(x))))


class Residual:
    """pre: x + Drop(f(LN(x)));  post: LN(x + Drop(f(x)))."""

    @staticmethod
    def apply(pre_norm: bool, ln: nn.LayerNorm, dropout: nn.Dropout, x: torch.Tensor, sublayer) -> torch.Tensor:
        if pre_norm:
            return x + dropout(sublayer(ln(x)))
        return ln(x + dropout(sublayer(x)))


class EncoderLayer(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.pre_norm = c.norm == "pre"
        self.self_attn = MultiHeadAttention(c.dim, c.heads)
        self.ln_attn = nn.LayerNorm(c.dim, eps=1e-5)
        self.ffn = FeedForward(c.dim, c.ffn_dim, c.activation_dropout)
        self.ln_ffn = nn.LayerNorm(c.dim, eps=1e-5)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor, allowed: torch.Tensor, query_valid: torch.Tensor) -> torch.Tensor:
        x = Residual.apply(self.pre_norm, self.ln_attn, self.dropout, x,
                           lambda h: self.self_attn(h, None, allowed, query_valid))
        return Residual.apply(self.pre_norm, self.ln_ffn, self.dropout, x, self.ffn)


class DecoderLayer(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.pre_norm = c.norm == "pre"
        self.self_attn = MultiHeadAttention(c.dim, c.heads)
        self.ln_self = nn.LayerNorm(c.dim, eps=1e-5)
        self.cross_attn = MultiHeadAttention(c.dim, c.heads)
        self.ln_cross = nn.LayerNorm(c.dim, eps=1e-5)
        self.ffn = FeedForward(c.dim, c.ffn_dim, c.activation_dropout)
        self.ln_ffn = nn.LayerNorm(c.dim, eps=1e-5)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, self_allowed: torch.Tensor,
                cross_allowed: torch.Tensor, query_valid: torch.Tensor, cross_query_valid: torch.Tensor):
        x = Residual.apply(self.pre_norm, self.ln_self, self.dropout, x,
                           lambda h: self.self_attn(h, None, self_allowed, query_valid))
        x = Residual.apply(self.pre_norm, self.ln_cross, self.dropout, x,
                           lambda h: self.cross_attn(h, memory, cross_allowed, cross_query_valid))
        return Residual.apply(self.pre_norm, self.ln_ffn, self.dropout, x, self.ffn)

    def step(self, x: torch.Tensor, t: int, cache: "LayerCache") -> torch.Tensor:
        """Incremental decoding at position t. x: [N, 1, d] -> [N, 1, d]."""
        attn = self.self_attn
        attn_cross = self.cross_attn

        def self_sublayer(h):
            cache.self_k[:, :, t:t + 1] = attn.split(attn.k(h))
            cache.self_v[:, :, t:t + 1] = attn.split(attn.v(h))
            return attn.attend(attn.split(attn.q(h)), cache.self_k[:, :, :t + 1], cache.self_v[:, :, :t + 1],
                               None, None)

        def cross_sublayer(h):
            return attn_cross.attend(attn_cross.split(attn_cross.q(h)), cache.cross_k, cache.cross_v,
                                     cache.cross_allowed, cache.cross_query_valid)

        x = Residual.apply(self.pre_norm, self.ln_self, self.dropout, x, self_sublayer)
        x = Residual.apply(self.pre_norm, self.ln_cross, self.dropout, x, cross_sublayer)
        return Residual.apply(self.pre_norm, self.ln_ffn, self.dropout, x, self.ffn)


class Stack(nn.Module):
    """Layers named "0", "1", ... and, for pre-norm, the final LayerNorm "ln"."""

    def __init__(self, layers: Sequence[nn.Module], final_norm: Optional[nn.LayerNorm]):
        super().__init__()
        self.count = len(layers)
        for i, layer in enumerate(layers):
            self.add_module(str(i), layer)
        self.ln = final_norm

    def layers(self) -> List[nn.Module]:
        return [getattr(self, str(i)) for i in range(self.count)]


@dataclasses.dataclass
class LayerCache:
    self_k: torch.Tensor  # [N, H, t_max, dh]
    self_v: torch.Tensor
    cross_k: torch.Tensor  # [N, H, Ts, dh]
    cross_v: torch.Tensor
    cross_allowed: torch.Tensor  # [N, 1, 1, Ts]
    cross_query_valid: torch.Tensor  # [N, 1]


@dataclasses.dataclass
class DecoderState:
    layers: List[LayerCache]
    t: int = 0  # the next position to decode
    t_max: int = 0

    def reorder(self, order: torch.Tensor) -> None:
        """Hypothesis i continues hypothesis order[i]; within a sentence, so the
        cross caches (the same for every hypothesis of a sentence) stay."""
        for c in self.layers:
            c.self_k = c.self_k.index_select(0, order)
            c.self_v = c.self_v.index_select(0, order)


class Seq2Seq(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        config.validate()
        self.config = config
        c = config
        if c.share_all_embeddings:
            self.embed = nn.Embedding(c.vocab_size, c.dim)
        else:
            self.src_embed = nn.Embedding(c.vocab_size, c.dim)
            self.tgt_embed = nn.Embedding(c.vocab_size, c.dim)
            if not c.share_decoder_output:
                self.out_proj = nn.Linear(c.dim, c.vocab_size, bias=False)
        pre = c.norm == "pre"
        self.enc = Stack([EncoderLayer(c) for _ in range(c.enc_layers)], nn.LayerNorm(c.dim, eps=1e-5) if pre else None)
        self.dec = Stack([DecoderLayer(c) for _ in range(c.dec_layers)], nn.LayerNorm(c.dim, eps=1e-5) if pre else None)
        self.embed_dropout = nn.Dropout(c.dropout)
        self.register_buffer("positions", sinusoidal_positions(c.max_positions, c.dim), persistent=False)
        self.reset_parameters()

    # -- parameters ---------------------------------------------------------
    def reset_parameters(self) -> None:
        """attn's initialisation (ParamStore::initialize): embeddings and out_proj N(0, 1/d),
        Linear weights Xavier-uniform, biases 0, LayerNorm 1 and 0."""
        std = 1.0 / math.sqrt(self.config.dim)
        for name, p in self.named_parameters():
            with torch.no_grad():
                if name.endswith("embed.weight") or name == "out_proj.weight":
                    p.normal_(0.0, std)
                elif name.endswith(".bias"):
                    p.zero_()
                elif p.dim() == 1:
                    p.fill_(1.0)
                else:
                    nn.init.xavier_uniform_(p)

    def src_table(self) -> torch.Tensor:
        return self.embed.weight if self.config.share_all_embeddings else self.src_embed.weight

    def tgt_table(self) -> torch.Tensor:
        return self.embed.weight if self.config.share_all_embeddings else self.tgt_embed.weight

    def output_weight(self) -> torch.Tensor:
        c = self.config
        if c.share_all_embeddings or c.share_decoder_output:
            return self.tgt_table()
        return self.out_proj.weight

    # -- forward ------------------------------------------------------------
    def embed_tokens(self, table: torch.Tensor, ids: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """ids [B, T] -> [B, T, d]."""
        t = ids.shape[1]
        if offset + t > self.config.max_positions:
            raise ValueError(f"{offset + t} positions exceed the model's {self.config.max_positions}")
        x = F.embedding(ids, table) * math.sqrt(self.config.dim)
        return self.embed_dropout(x + self.positions[offset:offset + t].to(x.dtype))

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
        """src [B, Ts] -> memory [B, Ts, d]."""
        ts = src.shape[1]
        valid = length_mask(src_lengths, ts)  # [B, Ts]
        allowed = valid[:, None, None, :]
        query_valid = valid & (src_lengths > 0)[:, None]
        x = self.embed_tokens(self.src_table(), src)
        for layer in self.enc.layers():
            x = layer(x, allowed, query_valid)
        return self.enc.ln(x) if self.enc.ln is not None else x

    def decode(self, tgt_in: torch.Tensor, tgt_lengths: torch.Tensor, memory: torch.Tensor,
               src_lengths: torch.Tensor) -> torch.Tensor:
        """Teacher-forced decoder: tgt_in [B, Tt] -> hidden [B, Tt, d] (before the output projection)."""
        tt, ts = tgt_in.shape[1], memory.shape[1]
        tgt_valid = length_mask(tgt_lengths, tt)
        causal = torch.ones(tt, tt, dtype=torch.bool, device=tgt_in.device).tril()
        self_allowed = tgt_valid[:, None, None, :] & causal[None, None]
        self_query_valid = tgt_valid
        cross_allowed = length_mask(src_lengths, ts)[:, None, None, :]
        cross_query_valid = tgt_valid & (src_lengths > 0)[:, None]
        x = self.embed_tokens(self.tgt_table(), tgt_in)
        for layer in self.dec.layers():
            x = layer(x, memory, self_allowed, cross_allowed, self_query_valid, cross_query_valid)
        return self.dec.ln(x) if self.dec.ln is not None else x

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(F.linear(hidden, self.output_weight()), dim=-1)

    def forward(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        """Teacher-forced log-probabilities [B, Tt, V]."""
        memory = self.encode(batch["src"], batch["src_lengths"])
        return self.log_probs(self.decode(batch["tgt_in"], batch["tgt_lengths"], memory, batch["src_lengths"]))

    def loss(self, batch: Dict[str, torch.Tensor], label_smoothing: float):
        """(label-smoothed loss, nll, target tokens), losses summed over non-pad targets."""
        lp = self.forward(batch)
        return label_smoothed_loss(lp.reshape(-1, lp.shape[-1]), batch["tgt_out"].reshape(-1), label_smoothing)

    # -- incremental decoding -----------------------------------------------
    def start_decoding(self, memory: torch.Tensor, src_lengths: torch.Tensor, t_max: int) -> DecoderState:
        """memory [N, Ts, d] (already repeated per hypothesis), src_lengths [N]."""
        if t_max > self.config.max_positions:
            raise ValueError(f"{t_max} positions exceed the model's {self.config.max_positions}")
        n, ts, _ = memory.shape
        valid = length_mask(src_lengths, ts)
        cross_allowed = valid[:, None, None, :]
        cross_query_valid = (src_lengths > 0)[:, None]
        caches = []
        for layer in self.dec.layers():
            a = layer.self_attn
            empty = memory.new_zeros(n, a.heads, t_max, a.head_dim)
            caches.append(LayerCache(empty, empty.clone(), layer.cross_attn.split(layer.cross_attn.k(memory)),
                                     layer.cross_attn.split(layer.cross_attn.v(memory)), cross_allowed,
                                     cross_query_valid))
        return DecoderState(caches, 0, t_max)

    def decode_step(self, state: DecoderState, tokens: torch.Tensor) -> torch.Tensor:
        """tokens [N] at position state.t -> log-probabilities [N, V] of the next word; advances state.t."""
        if state.t >= state.t_max:
            raise ValueError("decoding past the maximum length")
        x = self.embed_tokens(self.tgt_table(), tokens[:, None], offset=state.t)
        for layer, cache in zip(self.dec.layers(), state.layers):
            x = layer.step(x, state.t, cache)
        if self.dec.ln is not None:
            x = self.dec.ln(x)
        state.t += 1
        return self.log_probs(x[:, 0])


def label_smoothed_loss(log_probs: torch.Tensor, targets: torch.Tensor, label_smoothing: float):
    """log_probs [R, V], targets [R]. Returns (loss sum, nll sum, tokens); rows whose target is <pad> skipped."""
    keep = targets != PAD
    lp = log_probs[keep]
    tg = targets[keep]
    vocab = log_probs.shape[-1]
    nll = -lp.gather(1, tg[:, None]).squeeze(1)
    smooth = -lp.sum(dim=1)
    eps_other = label_smoothing / (vocab - 1)
    loss = ((1.0 - label_smoothing - eps_other) * nll + eps_other * smooth).sum()
    return loss, nll.sum(), int(keep.sum())


# -- batches ----------------------------------------------------------------
def make_batch(sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]] = (),
               device: str = "cpu") -> Dict[str, torch.Tensor]:
    """As attn::model::make_batch: right-padded, tgt_in = <s> y, tgt_out = y </s>, lengths n + 1."""
    b = len(sources)
    ts = max([len(s) for s in sources] + [1])
    src = torch.full((b, ts), PAD, dtype=torch.long)
    for i, s in enumerate(sources):
        src[i, :len(s)] = torch.tensor(list(s), dtype=torch.long)
    batch = {"src": src, "src_lengths": torch.tensor([len(s) for s in sources], dtype=torch.long)}
    if targets:
        if len(targets) != b:
            raise ValueError("make_batch: sources and targets differ in number")
        tt = max(len(t) for t in targets) + 1
        tgt_in = torch.full((b, tt), PAD, dtype=torch.long)
        tgt_out = torch.full((b, tt), PAD, dtype=torch.long)
        for i, t in enumerate(targets):
            ids = torch.tensor(list(t), dtype=torch.long)
            tgt_in[i, 0] = BOS
            tgt_in[i, 1:len(t) + 1] = ids
            tgt_out[i, :len(t)] = ids
            tgt_out[i, len(t)] = EOS
        batch.update(tgt_in=tgt_in, tgt_out=tgt_out,
                     tgt_lengths=torch.tensor([len(t) + 1 for t in targets], dtype=torch.long))
    return {k: v.to(device) for k, v in batch.items()}


# -- model files ------------------------------------------------------------
def build_model(config: dict, dtype: torch.dtype = torch.float32, seed: Optional[int] = None) -> Seq2Seq:
    """A freshly initialised model from a config dict (ModelConfig JSON keys)."""
    if seed is not None:
        torch.manual_seed(seed)
    return Seq2Seq(ModelConfig.from_dict(dict(config))).to(dtype)


def load_model_file(path: str, dtype: torch.dtype = torch.float32) -> Tuple[Seq2Seq, Dict[str, str]]:
    """Loads an attn model file (strict: every parameter present, none extra). Returns
    (model in eval mode, metadata). A checkpoint's optimizer moments ("opt.*") are skipped;
    any other tensor the twin does not know is an error."""
    tensors, metadata = read_safetensors(path)
    if "config" not in metadata:
        raise ValueError(f"{path}: no 'config' in the metadata; not an attn model file")
    model = Seq2Seq(ModelConfig.from_dict(json.loads(metadata["config"])))
    names = set(model.state_dict())
    state = {name: torch.from_numpy(np.array(arr)) for name, arr in tensors.items() if name in names}
    extra = sorted(set(tensors) - names)
    unexpected = [n for n in extra if not n.startswith("opt.")]
    if unexpected:
        raise ValueError(f"{path}: tensors the twin does not know: {unexpected[:5]}")
    model.load_state_dict(state, strict=True)
    return model.to(dtype).eval(), metadata


# -- training ---------------------------------------------------------------
def inverse_sqrt_lr(update: int, lr: float, warmup: int, warmup_init_lr: float = 1e-7) -> float:
    """fairseq's inverse_sqrt, as attn::train::inverse_sqrt_lr (update counts from 1)."""
    u = max(update, 1)
    if warmup > 0 and u < warmup:
        return warmup_init_lr + (lr - warmup_init_lr) * u / warmup
    return lr * math.sqrt(max(warmup, 1) / u)


def make_optimizer(model: nn.Module, lr: float = 1e-3, betas=(0.9, 0.98), eps: float = 1e-8,
                   weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """Adam(W) as attn's: decoupled weight decay, never on biases and norms."""
    decay = [p for n, p in model.named_parameters() if p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if p.dim() <= 1]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=betas, eps=eps)


def train_step(model: Seq2Seq, optimizer: torch.optim.Optimizer, batch: Dict[str, torch.Tensor],
               label_smoothing: float = 0.1, clip_norm: float = 0.0, lr: Optional[float] = None) -> dict:
    """One update on the loss averaged over target tokens (attn's grad_scale = 1 / tokens)."""
    model.train()
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss, nll, tokens = model.loss(batch, label_smoothing)
    (loss / max(tokens, 1)).backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm if clip_norm > 0 else float("inf"))
    optimizer.step()
    return {"loss": float(loss), "nll": float(nll), "tokens": tokens, "grad_norm": float(grad_norm)}


# -- search (src/decode/search.cpp) -----------------------------------------
@dataclasses.dataclass
class Hypothesis:
    tokens: List[int]  # without </s>
    score: float  # logprob / length^lenpen, length counting </s>
    logprob: float  # sum of log p, </s> included


def max_target_len(src_len: int, max_len_a: float, max_len_b: float, max_positions: int) -> int:
    return min(max(int(max_len_a * src_len + max_len_b), 1), max_positions - 1)


def _encode_for_search(model: Seq2Seq, sources, copies: int, max_len_a: float, max_len_b: float):
    batch = make_batch(sources)
    memory = model.encode(batch["src"], batch["src_lengths"])
    lengths = batch["src_lengths"]
    max_len = [max_target_len(int(n), max_len_a, max_len_b, model.config.max_positions) for n in lengths]
    t_max = max(max_len + [0]) + 1
    state = model.start_decoding(memory.repeat_interleave(copies, 0), lengths.repeat_interleave(copies, 0), t_max)
    return state, max_len


@torch.inference_mode()
def greedy_search(model: Seq2Seq, sources: Sequence[Sequence[int]], lenpen: float = 1.0,
                  max_len_a: float = 2.0, max_len_b: float = 10.0) -> List[Hypothesis]:
    """Argmax at every step (never <pad> or <s>), forced </s> at the length limit."""
    model.eval()
    state, max_len = _encode_for_search(model, sources, 1, max_len_a, max_len_b)
    b = len(sources)
    tokens = torch.full((b,), BOS, dtype=torch.long)
    out = [Hypothesis([], 0.0, 0.0) for _ in range(b)]
    done = [False] * b
    t = 0
    while not all(done):
        lp = model.decode_step(state, tokens).float()
        lp[:, PAD] = -math.inf
        lp[:, BOS] = -math.inf
        best_lp, best = lp.max(dim=1)
        for i in range(b):
            if done[i]:
                continue
            word = EOS if t >= max_len[i] else int(best[i])
            out[i].logprob += float(lp[i, word])
            if word == EOS:
                done[i] = True
                out[i].score = out[i].logprob / (len(out[i].tokens) + 1) ** lenpen
            else:
                out[i].tokens.append(word)
            tokens[i] = word
        t += 1
    return out


@torch.inference_mode()
def beam_search(model: Seq2Seq, sources: Sequence[Sequence[int]], beam: int = 5, lenpen: float = 1.0,
                max_len_a: float = 2.0, max_len_b: float = 10.0, nbest: int = 1) -> List[List[Hypothesis]]:
    """fairseq-style, as attn's: the best 2K candidates per sentence each step; those ending in
    </s> finish (up to K per sentence), the best K others continue; a sentence stops once K
    hypotheses have finished or at its length limit."""
    model.eval()
    k = max(1, beam)
    b = len(sources)
    n = b * k
    state, max_len = _encode_for_search(model, sources, k, max_len_a, max_len_b)
    vocab = model.config.vocab_size
    score = torch.full((b, k), -math.inf, dtype=torch.float32)
    score[:, 0] = 0.0
    prefixes: List[List[int]] = [[] for _ in range(n)]
    tokens = torch.full((n,), BOS, dtype=torch.long)
    finished: List[List[Hypothesis]] = [[] for _ in range(b)]
    done = [False] * b
    t = 0
    while not all(done):
        lp = model.decode_step(state, tokens).float().view(b, k, vocab)
        lp[:, :, PAD] = -math.inf
        lp[:, :, BOS] = -math.inf
        cand = (score[:, :, None] + lp).view(b, k * vocab)
        top_scores, top_index = cand.topk(min(2 * k, k * vocab), dim=1)
        eos_scores = score + lp[:, :, EOS]  # for sentences forced to end
        order = torch.arange(n, dtype=torch.long)
        next_prefixes: List[List[int]] = [[] for _ in range(n)]
        next_score = torch.full((b, k), -math.inf, dtype=torch.float32)
        for i in range(b):
            if done[i]:
                continue
            force_end = t >= max_len[i]
            if force_end:
                pairs = [(float(eos_scores[i, h]), h, EOS) for h in range(k) if score[i, h] != -math.inf]
                pairs.sort(key=lambda p: (-p[0], p[1]))
            else:
                pairs = [(float(s), int(j) // vocab, int(j) % vocab)
                         for s, j in zip(top_scores[i].tolist(), top_index[i].tolist()) if s != -math.inf]
            slot = 0
            for s, h, word in pairs:
                hyp = i * k + h
                if word == EOS:
                    if len(finished[i]) < k:
                        finished[i].append(Hypothesis(list(prefixes[hyp]), s / (len(prefixes[hyp]) + 1) ** lenpen, s))
                    continue
                if slot == k:
                    continue
                dest = i * k + slot
                slot += 1
                order[dest] = hyp
                next_prefixes[dest] = prefixes[hyp] + [word]
                next_score[i, dest - i * k] = s
                tokens[dest] = word
            if len(finished[i]) >= k or force_end:
                done[i] = True
                next_score[i] = -math.inf
        prefixes, score = next_prefixes, next_score
        if not all(done):
            state.reorder(order)
        t += 1
    best = []
    for hyps in finished:
        hyps.sort(key=lambda h: -h.score)
        best.append(hyps[:max(1, min(nbest, k))])
    return best
