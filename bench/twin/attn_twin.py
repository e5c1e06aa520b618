"""The PyTorch twin of attn's models (src/model/seq2seq.cpp, src/nn/*.cpp): every architecture
(transformer, muse, muse-simple, muse-separate, convsan, convsan2d, fastdisa, and --decoder-mixer variants).

Same computation, same parameter names and shapes, so an attn model file loads
with load_state_dict(strict=True). Used to cross-check attn's forward and
backward passes (crosscheck.py) and as the PyTorch yardstick in benchmarks.

    from attn_twin import load_model_file, make_batch
    model, meta = load_model_file("runs/toy/best.attn")          # float32, eval mode
    batch = make_batch([[5, 6, 7]], [[8, 9]])
    loss, nll, tokens = model.loss(batch, label_smoothing=0.1)

The model, as attn defines it:
  embed(ids)  = sqrt(d) * table[ids] + sinusoidal[t]   (fairseq layout, t from 0), then dropout
  sequential layers (transformer, convsan*, fastdisa), one residual block per sublayer:
    pre-norm    x = x + Drop(Sublayer(LN(x)))   and a final LayerNorm on each stack ("enc.ln", "dec.ln")
    post-norm   x = LN(x + Drop(Sublayer(x)))
    names       enc.<i>.{self_attn, ln_attn, ffn, ln_ffn}, dec.<i>.{self_attn, ln_self, cross_attn, ln_cross, ffn, ln_ffn}
  parallel layers (muse, muse-simple, muse-separate), one residual block per layer, the branches reading the same input:
    pre-norm    x = x + Drop(Mixer(h)) [+ Drop(Cross(h, memory))] + Drop(FFN(h)),  h = LN(x)
    post-norm   x = LN(x + Drop(Mixer(x)) [+ Drop(Cross(x, memory))] + Drop(FFN(x)))
    names       enc.<i>.{self_attn, ln, ffn}, dec.<i>.{self_attn, cross_attn, ln, ffn}
  self_attn   the layer's token mixer (mechanisms.py; ModelConfig.encoder_mixer / decoder_self_mixer)
  attention   per-sequence lengths: keys at j >= k_len[b] are masked (and j > t when causal);
              queries at t >= q_len[b] (or every query when k_len[b] == 0) give a zero context,
              so their output is the output projection's bias
  FFN         fc2(Drop_act(ReLU(fc1(x))))
  output      log_softmax(h @ W^T), W the tied target embedding or "out_proj.weight"
  loss        label smoothing as fairseq: the target gets 1 - eps, every other word
              eps / (V - 1); rows whose target is <pad> (0) are skipped; summed over tokens
              (label_smoothed_loss, what crosscheck.py compares). The benchmark trains with
              PyTorch's fused F.cross_entropy(label_smoothing=eps, ignore_index=<pad>) instead
              (fused_loss=True): eps / V on every word, the target's included, so its value differs
              slightly from attn's while its cost is the framework's best.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from read_model import load as read_safetensors  # noqa: E402  (tools/read_model.py)
from mechanisms import (MixerSpec, MultiHeadAttention, make_mixer,  # noqa: E402,F401  (bench/twin/mechanisms.py)
                        reset_mixer_parameters)

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # include/attn/text/vocab.h
ARCHS = ("transformer", "muse", "muse-simple", "muse-separate", "convsan", "convsan2d", "fastdisa")
MUSE_ARCHS = ("muse", "muse-separate")  # MUSE mixers in the encoder and the decoder (src/model/presets.cpp)


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
    # Mechanisms' options (docs/mechanisms-spec.md §0.5); each only matters for the archs that use it.
    muse_kernels: List[int] = dataclasses.field(default_factory=lambda: [3, 15])
    muse_tap_dropout: float = 0.1
    # The conv cells read their own projection (--muse-separate-projection); attn stores the key only
    # when true, and not for the arch muse-separate, which implies it.
    muse_separate_projection: bool = False
    csan_window: int = 11
    csan_head_window: int = 3
    csan_layers: int = -1  # -1: ceil(enc_layers / 2)
    disa_gate: bool = True
    disa_t2t: str = "exp"
    decoder_mixer: str = ""  # "" (the arch's own) | mha | csan | fastdisa | muse

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
        if self.arch not in ARCHS:
            raise ValueError(f"arch {self.arch!r} is not one of {', '.join(ARCHS)}")
        if self.dim <= 0 or self.dim % 2 or self.dim % self.heads:
            raise ValueError(f"dim {self.dim} must be positive, even and divisible by heads {self.heads}")
        if self.norm not in ("pre", "post"):
            raise ValueError(f"norm must be pre or post, not {self.norm!r}")
        if self.vocab_size <= 4:
            raise ValueError(f"vocab_size {self.vocab_size} is too small")
        if not self.muse_kernels or any(k < 1 for k in self.muse_kernels):
            raise ValueError(f"muse_kernels {self.muse_kernels} must be sizes >= 1")
        if self.csan_window < 1 or self.csan_window % 2 == 0 or self.csan_head_window < 1 \
                or self.csan_head_window % 2 == 0:
            raise ValueError("csan_window and csan_head_window must be odd and >= 1")
        if not -1 <= self.csan_layers <= self.enc_layers:
            raise ValueError(f"csan_layers {self.csan_layers} must be in -1..enc_layers")
        if self.disa_t2t not in ("exp", "sigmoid"):
            raise ValueError(f"disa_t2t must be exp or sigmoid, not {self.disa_t2t!r}")
        if self.decoder_mixer not in ("", "mha", "csan", "fastdisa", "muse"):
            raise ValueError(f"decoder_mixer {self.decoder_mixer!r} is not one of mha, csan, fastdisa, muse")
        if self.arch == "fastdisa" and self.heads % 2:
            raise ValueError("fastdisa needs an even number of heads")

    # src/model/config.cpp
    def parallel_layers(self) -> bool:
        return self.arch in MUSE_ARCHS + ("muse-simple",)

    def _spec(self) -> MixerSpec:
        return MixerSpec(d=self.dim, heads=self.heads, window=self.csan_window, kernels=list(self.muse_kernels),
                         tap_dropout=self.muse_tap_dropout, disa_gate=self.disa_gate, disa_t2t=self.disa_t2t,
                         muse_separate=self.muse_separate_projection or self.arch == "muse-separate")

    def encoder_mixer(self, layer: int) -> MixerSpec:
        spec = self._spec()
        windowed = self.csan_layers if self.csan_layers >= 0 else (self.enc_layers + 1) // 2
        if self.arch in MUSE_ARCHS:
            spec.kind = "muse"
        elif self.arch in ("convsan", "convsan2d") and layer < windowed:
            spec.kind = "csan" if self.arch == "convsan" else "csan2d"
            spec.head_window = 1 if self.arch == "convsan" else self.csan_head_window
        elif self.arch == "fastdisa":
            spec.kind = "fastdisa"
        return spec

    def decoder_self_mixer(self) -> MixerSpec:
        spec = self._spec()
        spec.causal = True
        spec.head_window = 1
        spec.kind = self.decoder_mixer or ("muse" if self.arch in MUSE_ARCHS else "mha")
        return spec


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


class FeedForward(nn.Module):
    def __init__(self, d: int, ffn_dim: int, activation_dropout: float):
        super().__init__()
        self.fc1 = nn.Linear(d, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d)
        self.activation_dropout = nn.Dropout(activation_dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.activation_dropout(F.relu(self.fc1(x))))


Branch = Callable[[torch.Tensor], torch.Tensor]


def residual(pre_norm: bool, ln: nn.LayerNorm, dropout: nn.Dropout, x: torch.Tensor,
             branches: Sequence[Branch]) -> torch.Tensor:
    """pre: x + sum Drop(f(LN(x)));  post: LN(x + sum Drop(f(x))). One branch: the sequential
    layout's block; several: MUSE's parallel layer."""
    if pre_norm:
        h = ln(x)
        for f in branches:
            x = x + dropout(f(h))
        return x
    total = x
    for f in branches:
        total = total + dropout(f(x))
    return ln(total)


class EncoderLayer(nn.Module):
    def __init__(self, c: ModelConfig, mixer: MixerSpec):
        super().__init__()
        self.pre_norm = c.norm == "pre"
        self.parallel = c.parallel_layers()
        self.self_attn = make_mixer(mixer)
        if self.parallel:
            self.ln = nn.LayerNorm(c.dim, eps=1e-5)
        else:
            self.ln_attn = nn.LayerNorm(c.dim, eps=1e-5)
        self.ffn = FeedForward(c.dim, c.ffn_dim, c.activation_dropout)
        if not self.parallel:
            self.ln_ffn = nn.LayerNorm(c.dim, eps=1e-5)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """x [B, T, d]; valid bool [B, T] (position < length)."""
        mixer: Branch = lambda h: self.self_attn(h, valid)  # noqa: E731
        if self.parallel:
            return residual(self.pre_norm, self.ln, self.dropout, x, [mixer, self.ffn])
        x = residual(self.pre_norm, self.ln_attn, self.dropout, x, [mixer])
        return residual(self.pre_norm, self.ln_ffn, self.dropout, x, [self.ffn])


@dataclasses.dataclass
class LayerCache:
    self_cache: Dict[str, torch.Tensor]  # the mixer's, each [N, ...]
    cross_k: torch.Tensor  # [N, H, Ts, dh]
    cross_v: torch.Tensor
    cross_allowed: torch.Tensor  # [N, 1, 1, Ts]
    cross_query_valid: torch.Tensor  # [N, 1]


class DecoderLayer(nn.Module):
    def __init__(self, c: ModelConfig, mixer: MixerSpec):
        super().__init__()
        self.pre_norm = c.norm == "pre"
        self.parallel = c.parallel_layers()
        self.self_attn = make_mixer(mixer)
        if self.parallel:
            self.ln = nn.LayerNorm(c.dim, eps=1e-5)
        else:
            self.ln_self = nn.LayerNorm(c.dim, eps=1e-5)
        self.cross_attn = MultiHeadAttention(c.dim, c.heads)
        if not self.parallel:
            self.ln_cross = nn.LayerNorm(c.dim, eps=1e-5)
        self.ffn = FeedForward(c.dim, c.ffn_dim, c.activation_dropout)
        if not self.parallel:
            self.ln_ffn = nn.LayerNorm(c.dim, eps=1e-5)
        self.dropout = nn.Dropout(c.dropout)

    def run(self, x: torch.Tensor, self_branch: Branch, cross_branch: Branch) -> torch.Tensor:
        if self.parallel:
            return residual(self.pre_norm, self.ln, self.dropout, x, [self_branch, cross_branch, self.ffn])
        x = residual(self.pre_norm, self.ln_self, self.dropout, x, [self_branch])
        x = residual(self.pre_norm, self.ln_cross, self.dropout, x, [cross_branch])
        return residual(self.pre_norm, self.ln_ffn, self.dropout, x, [self.ffn])

    def forward(self, x: torch.Tensor, memory: torch.Tensor, tgt_valid: torch.Tensor, cross_allowed: torch.Tensor,
                cross_query_valid: torch.Tensor) -> torch.Tensor:
        return self.run(x, lambda h: self.self_attn(h, tgt_valid),
                        lambda h: self.cross_attn(h, memory, cross_allowed, cross_query_valid))

    def step(self, x: torch.Tensor, t: int, cache: LayerCache) -> torch.Tensor:
        """Incremental decoding at position t. x: [N, 1, d] -> [N, 1, d]."""
        cross = self.cross_attn
        return self.run(x, lambda h: self.self_attn.step(h, t, cache.self_cache),
                        lambda h: cross.attend(cross.split(cross.q(h)), cache.cross_k, cache.cross_v,
                                               cache.cross_allowed, cache.cross_query_valid))


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
class DecoderState:
    layers: List[LayerCache]
    t: int = 0  # the next position to decode
    t_max: int = 0

    def reorder(self, order: torch.Tensor) -> None:
        """Hypothesis i continues hypothesis order[i]; within a sentence, so the
        cross caches (the same for every hypothesis of a sentence) stay. Caches laid out
        [N, H, t_max, ...] move only their first t positions (the rest is not written yet),
        as attn's Seq2Seq::reorder does."""
        for c in self.layers:
            for name, tensor in c.self_cache.items():
                if tensor.dim() >= 3 and tensor.shape[2] == self.t_max:
                    tensor[:, :, :self.t] = tensor[:, :, :self.t].index_select(0, order)
                else:
                    c.self_cache[name] = tensor.index_select(0, order)

    def select(self, rows: torch.Tensor) -> None:
        """Keeps only `rows`, in that order (row i continues rows[i]), so the state shrinks when
        sentences leave it, as attn's Seq2Seq::select: the self-attention caches copy their first t
        positions into new, smaller tensors, and the cross caches are gathered too (a hypothesis keeps
        its own sentence's rows)."""
        n = int(rows.numel())
        for c in self.layers:
            for name, tensor in c.self_cache.items():
                if tensor.dim() >= 3 and tensor.shape[2] == self.t_max:
                    fresh = tensor.new_empty((n,) + tuple(tensor.shape[1:]))
                    fresh[:, :, :self.t] = tensor[:, :, :self.t].index_select(0, rows)
                    c.self_cache[name] = fresh
                else:
                    c.self_cache[name] = tensor.index_select(0, rows)
            c.cross_k = c.cross_k.index_select(0, rows)
            c.cross_v = c.cross_v.index_select(0, rows)
            c.cross_allowed = c.cross_allowed.index_select(0, rows)
            c.cross_query_valid = c.cross_query_valid.index_select(0, rows)


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
        self.enc = Stack([EncoderLayer(c, c.encoder_mixer(i)) for i in range(c.enc_layers)],
                         nn.LayerNorm(c.dim, eps=1e-5) if pre else None)
        self.dec = Stack([DecoderLayer(c, c.decoder_self_mixer()) for _ in range(c.dec_layers)],
                         nn.LayerNorm(c.dim, eps=1e-5) if pre else None)
        self.embed_dropout = nn.Dropout(c.dropout)
        self.register_buffer("positions", sinusoidal_positions(c.max_positions, c.dim), persistent=False)
        self.reset_parameters()

    # -- parameters ---------------------------------------------------------
    def reset_parameters(self) -> None:
        """attn's initialisation (ParamStore::initialize): embeddings and out_proj N(0, 1/d),
        Linear weights Xavier-uniform, biases 0, LayerNorm 1 and 0; the mixers' own parameters
        as mechanisms.reset_mixer_parameters."""
        std = 1.0 / math.sqrt(self.config.dim)
        for module in self.modules():
            with torch.no_grad():
                if isinstance(module, nn.Embedding):
                    module.weight.normal_(0.0, std)
                elif isinstance(module, nn.Linear):
                    if module is getattr(self, "out_proj", None):
                        module.weight.normal_(0.0, std)
                    else:
                        nn.init.xavier_uniform_(module.weight)
                    if module.bias is not None:
                        module.bias.zero_()
                elif isinstance(module, nn.LayerNorm):
                    module.weight.fill_(1.0)
                    module.bias.zero_()
        for stack in (self.enc, self.dec):
            for layer in stack.layers():
                reset_mixer_parameters(layer.self_attn)

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
        valid = length_mask(src_lengths, src.shape[1])  # [B, Ts]
        x = self.embed_tokens(self.src_table(), src)
        for layer in self.enc.layers():
            x = layer(x, valid)
        return self.enc.ln(x) if self.enc.ln is not None else x

    def decode(self, tgt_in: torch.Tensor, tgt_lengths: torch.Tensor, memory: torch.Tensor,
               src_lengths: torch.Tensor) -> torch.Tensor:
        """Teacher-forced decoder: tgt_in [B, Tt] -> hidden [B, Tt, d] (before the output projection)."""
        tt, ts = tgt_in.shape[1], memory.shape[1]
        tgt_valid = length_mask(tgt_lengths, tt)
        cross_allowed = length_mask(src_lengths, ts)[:, None, None, :]
        cross_query_valid = tgt_valid & (src_lengths > 0)[:, None]
        x = self.embed_tokens(self.tgt_table(), tgt_in)
        for layer in self.dec.layers():
            x = layer(x, memory, tgt_valid, cross_allowed, cross_query_valid)
        return self.dec.ln(x) if self.dec.ln is not None else x

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(F.linear(hidden, self.output_weight()), dim=-1)

    def logits(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        """Teacher-forced scores before the softmax [B, Tt, V]."""
        memory = self.encode(batch["src"], batch["src_lengths"])
        hidden = self.decode(batch["tgt_in"], batch["tgt_lengths"], memory, batch["src_lengths"])
        return F.linear(hidden, self.output_weight())

    def forward(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        """Teacher-forced log-probabilities [B, Tt, V]."""
        memory = self.encode(batch["src"], batch["src_lengths"])
        return self.log_probs(self.decode(batch["tgt_in"], batch["tgt_lengths"], memory, batch["src_lengths"]))

    def loss(self, batch: Dict[str, torch.Tensor], label_smoothing: float, fused: bool = False):
        """(label-smoothed loss, nll, target tokens), losses summed over non-pad targets. fused: PyTorch's
        F.cross_entropy (its smoothing convention, eps / V; see fused_label_smoothed_loss), else attn's."""
        if fused:
            scores = self.logits(batch)
            return fused_label_smoothed_loss(scores.reshape(-1, scores.shape[-1]), batch["tgt_out"].reshape(-1),
                                             label_smoothing)
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
            cross = layer.cross_attn
            caches.append(LayerCache(layer.self_attn.new_cache(n, t_max, memory), cross.split(cross.k(memory)),
                                     cross.split(cross.v(memory)), cross_allowed, cross_query_valid))
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


def fused_label_smoothed_loss(logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float):
    """logits [R, V], targets [R]: PyTorch's own fused loss, F.cross_entropy(label_smoothing=eps,
    ignore_index=<pad>, reduction="sum"): (1 - eps) * nll + eps / V * (-sum of log-probs), i.e. eps / V
    on every word including the target, where attn (label_smoothed_loss) gives the other words
    eps / (V - 1). Per token they differ by eps / (V - 1) * (mean NLL over the vocabulary - NLL):
    ~1e-7 relative at a near-uniform model, ~1e-4 for a trained one; the cost, which the benchmark
    measures, is the framework's. Returns (loss sum, nll sum, tokens); the nll (reported,
    as attn reports it) is computed outside the graph from the same logits."""
    loss = F.cross_entropy(logits, targets, label_smoothing=label_smoothing, ignore_index=PAD, reduction="sum")
    with torch.no_grad():
        nll = F.cross_entropy(logits.detach(), targets, ignore_index=PAD, reduction="sum")
    return loss, nll, int((targets != PAD).sum())


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
               label_smoothing: float = 0.1, clip_norm: float = 0.0, lr: Optional[float] = None,
               fused_loss: bool = False, autocast_dtype: Optional[torch.dtype] = None) -> dict:
    """One update on the loss averaged over target tokens (attn's grad_scale = 1 / tokens).
    fused_loss: PyTorch's F.cross_entropy (Seq2Seq.loss); autocast_dtype (torch.bfloat16): the
    forward pass and the loss under torch.autocast("cpu", dtype), the backward pass outside it,
    parameters, gradients and AdamW in float32 (PyTorch's own mixed precision)."""
    model.train()
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    if autocast_dtype is not None:
        with torch.autocast("cpu", dtype=autocast_dtype):
            loss, nll, tokens = model.loss(batch, label_smoothing, fused=fused_loss)
    else:
        loss, nll, tokens = model.loss(batch, label_smoothing, fused=fused_loss)
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
                  max_len_a: float = 2.0, max_len_b: float = 10.0, drop_finished: bool = False) -> List[Hypothesis]:
    """Argmax at every step (never <pad> or <s>), forced </s> at the length limit. Finished sentences
    stay in the batch (fed </s>, their results ignored) unless drop_finished, which removes them from
    the decoder state as attn's greedy_search does (DecoderState.select)."""
    if drop_finished:
        return _greedy_search_dropping(model, sources, lenpen, max_len_a, max_len_b)
    model.eval()
    state, max_len = _encode_for_search(model, sources, 1, max_len_a, max_len_b)
    b = len(sources)
    tokens = [BOS] * b
    out = [Hypothesis([], 0.0, 0.0) for _ in range(b)]
    done = [False] * b
    t = 0
    while not all(done):
        lp = model.decode_step(state, torch.tensor(tokens, dtype=torch.long)).float()
        lp[:, PAD] = -math.inf
        lp[:, BOS] = -math.inf
        best_lp, best = lp.max(dim=1)
        # Python lists, not tensor indexing, in the per-sentence loop (the benchmark's yardstick).
        best_lp, best, eos_lp = best_lp.tolist(), best.tolist(), lp[:, EOS].tolist()
        for i in range(b):
            if done[i]:
                continue
            forced = t >= max_len[i]
            word = EOS if forced else best[i]
            out[i].logprob += eos_lp[i] if forced else best_lp[i]
            if word == EOS:
                done[i] = True
                out[i].score = out[i].logprob / (len(out[i].tokens) + 1) ** lenpen
            else:
                out[i].tokens.append(word)
            tokens[i] = word
        t += 1
    return out


def _greedy_search_dropping(model: Seq2Seq, sources: Sequence[Sequence[int]], lenpen: float, max_len_a: float,
                            max_len_b: float) -> List[Hypothesis]:
    """greedy_search with drop_finished: row s of the state decodes sentence live[s] (attn's layout)."""
    model.eval()
    state, max_len = _encode_for_search(model, sources, 1, max_len_a, max_len_b)
    b = len(sources)
    out = [Hypothesis([], 0.0, 0.0) for _ in range(b)]
    live = list(range(b))
    tokens = [BOS] * b
    t = 0
    while live:
        lp = model.decode_step(state, torch.tensor(tokens, dtype=torch.long)).float()
        lp[:, PAD] = -math.inf
        lp[:, BOS] = -math.inf
        best_lp, best = lp.max(dim=1)
        best_lp, best, eos_lp = best_lp.tolist(), best.tolist(), lp[:, EOS].tolist()
        continuing = []
        for s, i in enumerate(live):
            forced = t >= max_len[i]
            word = EOS if forced else best[s]
            out[i].logprob += eos_lp[s] if forced else best_lp[s]
            if word == EOS:
                out[i].score = out[i].logprob / (len(out[i].tokens) + 1) ** lenpen
                continue
            out[i].tokens.append(word)
            tokens[s] = word
            continuing.append(s)
        t += 1
        if len(continuing) == len(live):
            continue
        live = [live[s] for s in continuing]
        tokens = [tokens[s] for s in continuing]
        if live:
            state.select(torch.tensor(continuing, dtype=torch.long))
    return out


@torch.inference_mode()
def beam_search(model: Seq2Seq, sources: Sequence[Sequence[int]], beam: int = 5, lenpen: float = 1.0,
                max_len_a: float = 2.0, max_len_b: float = 10.0, nbest: int = 1,
                drop_finished: bool = False) -> List[List[Hypothesis]]:
    """fairseq-style, as attn's: the best 2K candidates per sentence each step; those ending in
    </s> finish (up to K per sentence), the best K others continue; a sentence stops once K
    hypotheses have finished or at its length limit. Finished sentences stay in the batch (their
    rows scored -inf) unless drop_finished, which removes their K rows from the decoder state as
    attn's beam_search does (DecoderState.select, reordering and shrinking in one gather)."""
    if drop_finished:
        return _beam_search_dropping(model, sources, beam, lenpen, max_len_a, max_len_b, nbest)
    model.eval()
    k = max(1, beam)
    b = len(sources)
    n = b * k
    state, max_len = _encode_for_search(model, sources, k, max_len_a, max_len_b)
    vocab = model.config.vocab_size
    # Scores as Python lists of float32 values (exact both ways), tokens as a list: the
    # per-sentence loop below does no tensor indexing (the benchmark's yardstick).
    score = [[0.0] + [-math.inf] * (k - 1) for _ in range(b)]
    prefixes: List[List[int]] = [[] for _ in range(n)]
    tokens = [BOS] * n
    finished: List[List[Hypothesis]] = [[] for _ in range(b)]
    done = [False] * b
    t = 0
    while not all(done):
        lp = model.decode_step(state, torch.tensor(tokens, dtype=torch.long)).float().view(b, k, vocab)
        lp[:, :, PAD] = -math.inf
        lp[:, :, BOS] = -math.inf
        score_t = torch.tensor(score, dtype=torch.float32)
        cand = (score_t[:, :, None] + lp).view(b, k * vocab)
        top_scores, top_index = cand.topk(min(2 * k, k * vocab), dim=1)
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        eos_scores = (score_t + lp[:, :, EOS]).tolist()  # for sentences forced to end
        order = list(range(n))
        next_prefixes: List[List[int]] = [[] for _ in range(n)]
        next_score = [[-math.inf] * k for _ in range(b)]
        for i in range(b):
            if done[i]:
                continue
            force_end = t >= max_len[i]
            if force_end:
                pairs = [(eos_scores[i][h], h, EOS) for h in range(k) if score[i][h] != -math.inf]
                pairs.sort(key=lambda p: (-p[0], p[1]))
            else:
                pairs = [(s, j // vocab, j % vocab) for s, j in zip(top_scores[i], top_index[i]) if s != -math.inf]
            slot = 0
            for rank, (s, h, word) in enumerate(pairs):
                hyp = i * k + h
                if word == EOS:  # finishes only from the first k ranks (fairseq), so beam 1 is greedy
                    if rank < k and len(finished[i]) < k:
                        finished[i].append(Hypothesis(list(prefixes[hyp]), s / (len(prefixes[hyp]) + 1) ** lenpen, s))
                    continue
                if slot == k:
                    continue
                dest = i * k + slot
                slot += 1
                order[dest] = hyp
                next_prefixes[dest] = prefixes[hyp] + [word]
                next_score[i][dest - i * k] = s
                tokens[dest] = word
            if len(finished[i]) >= k or force_end:
                done[i] = True
                next_score[i] = [-math.inf] * k
        prefixes, score = next_prefixes, next_score
        if not all(done):
            state.reorder(torch.tensor(order, dtype=torch.long))
        t += 1
    best = []
    for hyps in finished:
        hyps.sort(key=lambda h: -h.score)
        best.append(hyps[:max(1, min(nbest, k))])
    return best


def _beam_search_dropping(model: Seq2Seq, sources: Sequence[Sequence[int]], beam: int, lenpen: float,
                          max_len_a: float, max_len_b: float, nbest: int) -> List[List[Hypothesis]]:
    """beam_search with drop_finished: rows s*K .. s*K + K - 1 of the state are the beams of sentence
    live[s] (attn's layout); the same candidates and rules as beam_search."""
    model.eval()
    k = max(1, beam)
    b = len(sources)
    state, max_len = _encode_for_search(model, sources, k, max_len_a, max_len_b)
    vocab = model.config.vocab_size
    live = list(range(b))
    score = [[0.0] + [-math.inf] * (k - 1) for _ in range(b)]  # per live sentence
    prefixes: List[List[int]] = [[] for _ in range(b * k)]  # per live row
    tokens = [BOS] * (b * k)
    finished: List[List[Hypothesis]] = [[] for _ in range(b)]
    t = 0
    while live:
        n_live = len(live)
        n = n_live * k
        lp = model.decode_step(state, torch.tensor(tokens, dtype=torch.long)).float().view(n_live, k, vocab)
        lp[:, :, PAD] = -math.inf
        lp[:, :, BOS] = -math.inf
        score_t = torch.tensor(score, dtype=torch.float32)
        cand = (score_t[:, :, None] + lp).view(n_live, k * vocab)
        top_scores, top_index = cand.topk(min(2 * k, k * vocab), dim=1)
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        eos_scores = (score_t + lp[:, :, EOS]).tolist()
        order = list(range(n))
        next_prefixes: List[List[int]] = [[] for _ in range(n)]
        next_score = [[-math.inf] * k for _ in range(n_live)]
        next_tokens = [EOS] * n
        kept: List[int] = []  # live positions of the sentences that go on
        for s, i in enumerate(live):
            force_end = t >= max_len[i]
            if force_end:
                pairs = [(eos_scores[s][h], h, EOS) for h in range(k) if score[s][h] != -math.inf]
                pairs.sort(key=lambda p: (-p[0], p[1]))
            else:
                pairs = [(sc, j // vocab, j % vocab) for sc, j in zip(top_scores[s], top_index[s]) if sc != -math.inf]
            slot = 0
            for rank, (sc, h, word) in enumerate(pairs):
                hyp = s * k + h
                if word == EOS:
                    if rank < k and len(finished[i]) < k:
                        finished[i].append(Hypothesis(list(prefixes[hyp]), sc / (len(prefixes[hyp]) + 1) ** lenpen, sc))
                    continue
                if slot == k:
                    continue
                dest = s * k + slot
                slot += 1
                order[dest] = hyp
                next_prefixes[dest] = prefixes[hyp] + [word]
                next_score[s][dest - s * k] = sc
                next_tokens[dest] = word
            if not (len(finished[i]) >= k or force_end):
                kept.append(s)
        t += 1
        if not kept:
            break
        rows = [s * k + h for s in kept for h in range(k)]
        live = [live[s] for s in kept]
        score = [next_score[s] for s in kept]
        prefixes = [next_prefixes[r] for r in rows]
        tokens = [next_tokens[r] for r in rows]
        if len(kept) == n_live:
            state.reorder(torch.tensor(order, dtype=torch.long))  # nobody left: reorder in place, as beam_search
        else:
            state.select(torch.tensor([order[r] for r in rows], dtype=torch.long))
    best = []
    for hyps in finished:
        hyps.sort(key=lambda h: -h.score)
        best.append(hyps[:max(1, min(nbest, k))])
    return best
