"""The token mixers of attn in PyTorch (src/nn/{mha,csan,muse,fast_disa}_mixer.cpp): the module
that fills the self-attention slot "<layer>.self_attn" of an encoder or decoder layer.

Every mixer has the same interface:

    y = mixer(x, valid)              x [B, T, d], valid bool [B, T] (position < length) -> y [B, T, d]
    cache = mixer.new_cache(n, t_max, like)    {name: tensor [n, ...]}; beam search reorders dim 0
    y = mixer.step(x, t, cache)      decoder only: x [N, 1, d] at position t -> [N, 1, d]

and attn's conventions: padded keys are never read; a padded query's context is 0, so its output
is the output projection's bias; a row with no allowed key gives 0, never NaN. Each mechanism is
written the plain way (dense masked tensors, T x T or T x T x d_h), which is the point of a twin:
an independent formulation of what attn computes with bands, ring buffers and factorisations.

Parameter names and shapes (weights [out, in] as in PyTorch), under "<layer>.self_attn":
  mha, csan, csan2d   q, k, v, o: .weight [d, d], .bias [d]
  muse                q, k, v as mha; conv.<i>.weight [H*k_i, d] (no bias); gate [n]; o.weight [d, 2d], o.bias [d];
                      muse-separate adds conv_in.weight [d, d] (no bias), declared after q, k, v
  fastdisa            q, k, v, o as mha; s1.weight [H, d_h, d_h], s1.bias [H, d_h]; s2 likewise;
                      gate.weight [H, d_h, 2 d_h], gate.bias [H, d_h] (with the fusion gate)

The mechanisms (docs/mechanisms-spec.md):
  csan      query i sees keys j in [i - m, i + m] (causal: [i - m, i]), m = (window - 1) / 2;
  csan2d    query head h also sees the key/value heads s in [h - n, h + n] & [0, H), one softmax
            jointly over every (s, j) slot; head h's output is sum over (s, j) of a * v^s_j
  muse      attention over (q, k, v) and, in parallel, dynamic depth-wise convolutions of the same v:
            per kernel k_i, taps w = softmax_k(v W_i^T) per head, C_i[t] = sum_kappa w[t, kappa] v[t + kappa - P]
            with P = k // 2 (encoder) or k - 1 (decoder), v zero at padded and out-of-range positions;
            Cmix = sum_i softmax(gate)_i C_i;  y = [Att ; Cmix] W_o^T + b_o.
            muse-separate (the paper's "unified semantic space" ablation): the cells read their own
            projection c = x W_c^T instead of v (taps from c, the convolution over c), attention keeps v
  fastdisa  per head: R = q k^T / sqrt(d_h); S = ELU(v W_s1^T + b_s1) W_s2^T + b_s2 (per key, per feature);
            a feature-wise softmax over the allowed keys of log phi(R_ij) + S_jk (phi = exp: R itself;
            phi = sigmoid: log sigma(R)); O_ik = sum_j P_ijk v_jk; gate G = sigma([v ; O] W_g^T + b_g),
            U = G v + (1 - G) O; heads concatenated, then o. Encoder: the first H/2 heads see j < i, the
            others j > i; decoder: every head sees j <= i.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

Cache = Dict[str, torch.Tensor]


@dataclasses.dataclass
class MixerSpec:
    """include/attn/nn/token_mixer.h: MixerSpec."""

    kind: str = "mha"  # mha | csan | csan2d | muse | fastdisa
    d: int = 0
    heads: int = 0
    causal: bool = False
    window: int = 11
    head_window: int = 1
    kernels: List[int] = dataclasses.field(default_factory=lambda: [3, 15])
    tap_dropout: float = 0.1
    muse_separate: bool = False  # muse: the conv cells read conv_in(x), not v
    disa_gate: bool = True
    disa_t2t: str = "exp"


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, T, d] -> [B, H, T, d_h]."""
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """[B, H, T, d_h] -> [B, T, d]."""
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def causal_mask(t: int, device=None) -> torch.Tensor:
    """bool [t, t], True where key j <= query i."""
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def dot_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: Optional[torch.Tensor],
                  query_valid: Optional[torch.Tensor]) -> torch.Tensor:
    """q [B, H, Tq, dh], k/v [B, H, Tk, dh]; allowed: bool broadcastable to [B, H, Tq, Tk];
    query_valid: bool [B, Tq] (False: zero context). Returns the merged context [B, Tq, d]."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if allowed is not None:
        # A finite fill: a row with no allowed key stays finite and is zeroed through
        # query_valid, so no NaN reaches the backward pass.
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    context = merge_heads(torch.matmul(torch.softmax(scores, dim=-1), v))
    if query_valid is not None:
        context = context * query_valid[:, :, None].to(context.dtype)
    return context


class MultiHeadAttention(nn.Module):
    """Names "<name>.{q,k,v,o}.{weight,bias}", weights [d, d] as attn stores them. Also the
    cross-attention of every decoder layer."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.d, self.heads, self.head_dim = d, heads, d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """[B, T, d] -> [B, H, T, dh]."""
        return split_heads(x, self.heads)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: Optional[torch.Tensor],
               query_valid: Optional[torch.Tensor]) -> torch.Tensor:
        """o(dot_attention(...)) [B, Tq, d]."""
        return self.o(dot_attention(q, k, v, allowed, query_valid))

    def forward(self, x: torch.Tensor, memory: Optional[torch.Tensor], allowed: Optional[torch.Tensor],
                query_valid: Optional[torch.Tensor]) -> torch.Tensor:
        """Self-attention when memory is None, else cross-attention over memory [B, Tk, d]."""
        kv_input = x if memory is None else memory
        return self.attend(self.split(self.q(x)), self.split(self.k(kv_input)), self.split(self.v(kv_input)),
                           allowed, query_valid)


# ---------------------------------------------------------------------------
# mha: global (encoder) or causal (decoder) self-attention

class MhaMixer(MultiHeadAttention):
    kind = "mha"

    def __init__(self, spec: MixerSpec):
        super().__init__(spec.d, spec.heads)
        self.causal = spec.causal

    def key_mask(self, valid: torch.Tensor) -> torch.Tensor:
        """bool [B, 1, T, T]: the keys each query may see."""
        allowed = valid[:, None, None, :]
        if self.causal:
            allowed = allowed & causal_mask(valid.shape[1], valid.device)
        return allowed

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.attend(self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x)), self.key_mask(valid),
                           valid)

    def new_cache(self, n: int, t_max: int, like: torch.Tensor) -> Cache:
        empty = like.new_zeros(n, self.heads, t_max, self.head_dim)
        return {"k": empty, "v": empty.clone()}

    def store_kv(self, x: torch.Tensor, t: int, cache: Cache) -> torch.Tensor:
        """Writes position t's k, v; returns its q [N, H, 1, dh]."""
        cache["k"][:, :, t:t + 1] = self.split(self.k(x))
        cache["v"][:, :, t:t + 1] = self.split(self.v(x))
        return self.split(self.q(x))

    def step(self, x: torch.Tensor, t: int, cache: Cache) -> torch.Tensor:
        q = self.store_kv(x, t, cache)
        return self.attend(q, cache["k"][:, :, :t + 1], cache["v"][:, :, :t + 1], None, None)


# ---------------------------------------------------------------------------
# csan / csan2d: convolutional self-attention (windows; 2D: neighbouring heads)

def head_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: torch.Tensor,
                          query_valid: Optional[torch.Tensor], n: int) -> torch.Tensor:
    """2D-CSAN, densely: q [B, H, Tq, dh], k/v [B, H, Tk, dh], allowed bool broadcastable to
    [B, 1, Tq, Tk] (positions), n: heads each side. One softmax per (b, h, i) over every (s, j)
    with |s - h| <= n, 0 <= s < H (truncate at the boundary) and allowed[i, j]; returns the merged
    context [B, Tq, d]."""
    b, heads, tq, dh = q.shape
    tk = k.shape[2]
    scores = torch.einsum("bhic,bsjc->bhisj", q, k) * (1.0 / math.sqrt(dh))  # [B, H, Tq, H, Tk]
    h_idx = torch.arange(heads, device=q.device)
    heads_ok = (h_idx[:, None] - h_idx[None, :]).abs() <= n  # [H (query), H (key)]
    pos_ok = allowed.expand(b, 1, tq, tk)[:, 0]  # [B, Tq, Tk]
    mask = heads_ok[None, :, None, :, None] & pos_ok[:, None, :, None, :]  # [B, H, Tq, H, Tk]
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores.reshape(b, heads, tq, heads * tk), dim=-1).view(b, heads, tq, heads, tk)
    context = merge_heads(torch.einsum("bhisj,bsjc->bhic", probs, v))
    if query_valid is not None:
        context = context * query_valid[:, :, None].to(context.dtype)
    return context


def band_mask(tq: int, tk: int, left: int, right: int, device=None, first_query: int = 0) -> torch.Tensor:
    """bool [tq, tk]: key j is within [i - left, i + right] of query i = first_query + row."""
    i = torch.arange(first_query, first_query + tq, device=device)[:, None]
    j = torch.arange(tk, device=device)[None, :]
    return (j >= i - left) & (j <= i + right)


class CsanMixer(MhaMixer):
    def __init__(self, spec: MixerSpec):
        super().__init__(spec)
        if spec.window < 1 or spec.window % 2 == 0 or spec.head_window < 1 or spec.head_window % 2 == 0:
            raise ValueError(f"csan: window {spec.window} and head window {spec.head_window} must be odd and >= 1")
        self.window, self.head_window = spec.window, spec.head_window
        self.left = (spec.window - 1) // 2
        self.right = 0 if spec.causal else self.left
        self.kind = "csan2d" if spec.head_window > 1 else "csan"

    def context(self, q, k, v, allowed, query_valid):
        if self.head_window == 1:
            return dot_attention(q, k, v, allowed, query_valid)
        return head_window_attention(q, k, v, allowed, query_valid, (self.head_window - 1) // 2)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        t = valid.shape[1]
        allowed = valid[:, None, None, :] & band_mask(t, t, self.left, self.right, valid.device)
        return self.o(self.context(self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x)), allowed,
                                   valid))

    def step(self, x: torch.Tensor, t: int, cache: Cache) -> torch.Tensor:
        if not self.causal:
            raise ValueError("csan: incremental decoding needs the causal variant")
        q = self.store_kv(x, t, cache)
        first = max(0, t - self.left)  # the window [t - m, t]
        keys, values = cache["k"][:, :, first:t + 1], cache["v"][:, :, first:t + 1]
        allowed = torch.ones(1, 1, 1, t + 1 - first, dtype=torch.bool, device=x.device)
        return self.o(self.context(q, keys, values, allowed, None))


# ---------------------------------------------------------------------------
# muse: shared v feeding attention and dynamic depth-wise convolutions (muse-separate: their own projection)

class ConvCell(nn.Module):
    """One kernel's filter generator: "<name>.conv.<i>.weight" [H*k, d], no bias."""

    def __init__(self, d: int, heads: int, kernel: int):
        super().__init__()
        self.heads, self.kernel = heads, kernel
        self.weight = nn.Parameter(torch.empty(heads * kernel, d))

    def taps(self, v: torch.Tensor, tap_dropout: float) -> torch.Tensor:
        """v [..., d] -> normalised taps [..., H, k] (DropConnect in training)."""
        z = F.linear(v, self.weight)
        w = torch.softmax(z.view(*z.shape[:-1], self.heads, self.kernel), dim=-1)
        return F.dropout(w, tap_dropout, self.training)


def dynamic_conv(taps: torch.Tensor, v: torch.Tensor, offset: int) -> torch.Tensor:
    """taps [B, T, H, k], v [B, T, d] (zero where it must not be read) ->
    C [B, T, d], C[b, t, c] = sum_kappa taps[b, t, h(c), kappa] v[b, t + kappa - offset, c],
    v outside [0, T) zero."""
    b, t, heads, k = taps.shape
    d = v.shape[-1]
    padded = F.pad(v, (0, 0, offset, k - 1 - offset))  # [B, T + k - 1, d]
    windows = padded.unfold(1, k, 1)  # [B, T, d, k]: windows[b, t, c, kappa] = v[b, t + kappa - offset, c]
    return (windows.reshape(b, t, heads, d // heads, k) * taps[:, :, :, None, :]).sum(-1).reshape(b, t, d)


class MuseMixer(nn.Module):
    kind = "muse"

    def __init__(self, spec: MixerSpec):
        super().__init__()
        if not spec.kernels:
            raise ValueError("muse: needs at least one kernel size")
        self.d, self.heads, self.head_dim = spec.d, spec.heads, spec.d // spec.heads
        self.causal, self.tap_dropout = spec.causal, spec.tap_dropout
        self.kernels = list(spec.kernels)
        self.q = nn.Linear(spec.d, spec.d)
        self.k = nn.Linear(spec.d, spec.d)
        self.v = nn.Linear(spec.d, spec.d)
        # muse-separate: "<name>.conv_in.weight" [d, d], the cells' own input (attn: only with kernels)
        self.conv_in = nn.Linear(spec.d, spec.d, bias=False) if spec.muse_separate and self.kernels else None
        self.conv = nn.ModuleList([ConvCell(spec.d, spec.heads, k) for k in self.kernels])
        self.gate = nn.Parameter(torch.zeros(len(self.kernels)))
        self.o = nn.Linear(2 * spec.d, spec.d)

    def offset(self, k: int) -> int:
        return k - 1 if self.causal else k // 2

    def conv_input(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """What the conv cells read: v, or (muse-separate) their own projection of x."""
        return v if self.conv_in is None else self.conv_in(x)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        t = valid.shape[1]
        q, k, v = self.q(x), self.k(x), self.v(x)
        allowed = valid[:, None, None, :]
        if self.causal:
            allowed = allowed & causal_mask(t, x.device)
        att = dot_attention(split_heads(q, self.heads), split_heads(k, self.heads), split_heads(v, self.heads),
                            allowed, valid)
        c = self.conv_input(x, v)
        keep = valid[:, :, None].to(c.dtype)
        c_read = c * keep  # padded positions feed nothing into real ones
        pi = torch.softmax(self.gate, dim=0)
        cmix = 0
        for i, cell in enumerate(self.conv):
            taps = cell.taps(c, self.tap_dropout) * keep[:, :, :, None]  # padded rows have no taps
            cmix = cmix + pi[i] * dynamic_conv(taps, c_read, self.offset(cell.kernel))
        return self.o(torch.cat([att, cmix], dim=-1))

    def new_cache(self, n: int, t_max: int, like: torch.Tensor) -> Cache:
        empty = like.new_zeros(n, self.heads, t_max, self.head_dim)
        cache = {"k": empty, "v": empty.clone()}
        if self.conv_in is not None:
            cache["c"] = empty.clone()  # the cells' input (muse-separate)
        return cache

    def step(self, x: torch.Tensor, t: int, cache: Cache) -> torch.Tensor:
        if not self.causal:
            raise ValueError("muse: incremental decoding needs the causal variant")
        q, k, v = self.q(x), self.k(x), self.v(x)
        cache["k"][:, :, t:t + 1] = split_heads(k, self.heads)
        cache["v"][:, :, t:t + 1] = split_heads(v, self.heads)
        att = dot_attention(split_heads(q, self.heads), cache["k"][:, :, :t + 1], cache["v"][:, :, :t + 1], None,
                            None)
        c, cached = v, cache["v"]
        if self.conv_in is not None:
            c, cached = self.conv_in(x), cache["c"]
            cached[:, :, t:t + 1] = split_heads(c, self.heads)
        pi = torch.softmax(self.gate, dim=0)
        cmix = 0
        for i, cell in enumerate(self.conv):
            kk = cell.kernel
            taps = cell.taps(c[:, 0], self.tap_dropout)  # [N, H, k]
            first = max(0, t - kk + 1)
            window = cached[:, :, first:t + 1]  # [N, H, m, dh]: positions t - k + 1 .. t that exist
            window = F.pad(window, (0, 0, kk - window.shape[2], 0))  # positions before 0 read zeros
            conv = torch.einsum("nhk,nhkc->nhc", taps, window)
            cmix = cmix + pi[i] * conv.reshape(x.shape[0], 1, self.d)
        return self.o(torch.cat([att, cmix], dim=-1))


# ---------------------------------------------------------------------------
# fastdisa: Fast directional self-attention

class HeadLinear(nn.Module):
    """A Linear per head: weight [H, out, in], bias [H, out]; x [B, H, T, in] -> [B, H, T, out]."""

    def __init__(self, heads: int, inputs: int, outputs: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(heads, outputs, inputs))
        self.bias = nn.Parameter(torch.zeros(heads, outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bhti,hoi->bhto", x, self.weight) + self.bias[None, :, None, :]


def featurewise_attention_direct(log_a: torch.Tensor, s: torch.Tensor, v: torch.Tensor,
                                 allowed: torch.Tensor) -> torch.Tensor:
    """The definition, with the T x T x d_h tensor: log_a [B, H, Tq, Tk] (log phi(R)), s, v
    [B, H, Tk, dh], allowed bool broadcastable to [B, H, Tq, Tk]. P_ijk = softmax over allowed j of
    log_a_ij + s_jk; O_ik = sum_j P_ijk v_jk; 0 where row i has no allowed key."""
    allowed = allowed.expand_as(log_a)
    logits = log_a[..., None] + s[:, :, None, :, :]  # [B, H, Tq, Tk, dh]
    logits = logits.masked_fill(~allowed[..., None], torch.finfo(logits.dtype).min)
    probs = torch.softmax(logits, dim=3) * allowed[..., None].to(logits.dtype)
    return (probs * v[:, :, None, :, :]).sum(3)


def featurewise_attention_factorised(log_a: torch.Tensor, s: torch.Tensor, v: torch.Tensor,
                                     allowed: torch.Tensor, key_valid: torch.Tensor) -> torch.Tensor:
    """The same as featurewise_attention_direct in the Fast-DiSA form (docs/mechanisms-spec.md §3.1, §4.4):
    A = exp(log_a - row max) at allowed keys, E = exp(s - per-feature max over valid keys),
    O = (A (v * E)) / (A E). key_valid: bool [B, 1, Tk, 1]. The shifts cancel; they are constants."""
    allowed = allowed.expand_as(log_a)
    la = log_a.masked_fill(~allowed, -math.inf)
    row_max = la.amax(-1, keepdim=True).detach()
    a = torch.exp(la - torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)))
    sm = s.masked_fill(~key_valid, -math.inf)
    col_max = sm.amax(-2, keepdim=True).detach()
    e = torch.exp(sm - torch.where(torch.isfinite(col_max), col_max, torch.zeros_like(col_max)))
    den = torch.matmul(a, e)
    num = torch.matmul(a, v * e)
    ok = den > torch.finfo(den.dtype).tiny
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(num))


class FastDisaMixer(nn.Module):
    kind = "fastdisa"

    def __init__(self, spec: MixerSpec):
        super().__init__()
        if spec.d % spec.heads:
            raise ValueError("fastdisa: d must be divisible by heads")
        if not spec.causal and spec.heads % 2:
            raise ValueError("fastdisa: the encoder form needs an even number of heads")
        if spec.disa_t2t not in ("exp", "sigmoid"):
            raise ValueError(f"fastdisa: disa_t2t must be exp or sigmoid, not {spec.disa_t2t!r}")
        self.d, self.heads, self.head_dim = spec.d, spec.heads, spec.d // spec.heads
        self.causal, self.sigmoid = spec.causal, spec.disa_t2t == "sigmoid"
        self.factorised = True  # False: the direct T x T x d_h form (for checking)
        dh = self.head_dim
        self.q = nn.Linear(spec.d, spec.d)
        self.k = nn.Linear(spec.d, spec.d)
        self.v = nn.Linear(spec.d, spec.d)
        self.o = nn.Linear(spec.d, spec.d)
        self.s1 = HeadLinear(spec.heads, dh, dh)
        self.s2 = HeadLinear(spec.heads, dh, dh)
        self.gate = HeadLinear(spec.heads, 2 * dh, dh) if spec.disa_gate else None

    def directions(self, t: int, device=None) -> torch.Tensor:
        """bool [H, T, T]: encoder: forward heads (h < H/2) j < i, backward heads j > i; causal: j <= i."""
        i = torch.arange(t, device=device)[:, None]
        j = torch.arange(t, device=device)[None, :]
        if self.causal:
            return (j <= i)[None].expand(self.heads, t, t)
        forward = self.heads // 2
        return torch.cat([(j < i)[None].expand(forward, t, t), (j > i)[None].expand(self.heads - forward, t, t)])

    def source2token(self, v: torch.Tensor) -> torch.Tensor:
        return self.s2(F.elu(self.s1(v)))

    def log_t2t(self, r: torch.Tensor) -> torch.Tensor:
        return F.logsigmoid(r) if self.sigmoid else r

    def fuse(self, v: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        if self.gate is None:
            return o
        g = torch.sigmoid(self.gate(torch.cat([v, o], dim=-1)))
        return g * v + (1.0 - g) * o

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        t = valid.shape[1]
        q, k, v = (split_heads(f(x), self.heads) for f in (self.q, self.k, self.v))
        s = self.source2token(v)
        log_a = self.log_t2t(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim)))
        allowed = self.directions(t, x.device)[None] & valid[:, None, None, :]  # [B, H, T, T]
        if self.factorised:
            o = featurewise_attention_factorised(log_a, s, v, allowed, valid[:, None, :, None])
        else:
            o = featurewise_attention_direct(log_a, s, v, allowed)
        u = self.fuse(v, o) * valid[:, None, :, None].to(v.dtype)  # padded rows: 0
        return self.o(merge_heads(u))

    def new_cache(self, n: int, t_max: int, like: torch.Tensor) -> Cache:
        empty = like.new_zeros(n, self.heads, t_max, self.head_dim)
        return {"k": empty, "s": empty.clone(), "v": empty.clone()}

    def step(self, x: torch.Tensor, t: int, cache: Cache) -> torch.Tensor:
        if not self.causal:
            raise ValueError("fastdisa: incremental decoding needs the causal variant")
        q, k, v = (split_heads(f(x), self.heads) for f in (self.q, self.k, self.v))
        cache["k"][:, :, t:t + 1] = k
        cache["s"][:, :, t:t + 1] = self.source2token(v)
        cache["v"][:, :, t:t + 1] = v
        keys, s, values = cache["k"][:, :, :t + 1], cache["s"][:, :, :t + 1], cache["v"][:, :, :t + 1]
        log_a = self.log_t2t(torch.matmul(q, keys.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim)))
        allowed = torch.ones(1, 1, 1, t + 1, dtype=torch.bool, device=x.device)
        if self.factorised:
            o = featurewise_attention_factorised(log_a, s, values, allowed,
                                                 torch.ones(1, 1, t + 1, 1, dtype=torch.bool, device=x.device))
        else:
            o = featurewise_attention_direct(log_a, s, values, allowed)
        return self.o(merge_heads(self.fuse(v, o)))


def make_mixer(spec: MixerSpec) -> nn.Module:
    if spec.d <= 0 or spec.heads <= 0 or spec.d % spec.heads:
        raise ValueError(f"dim {spec.d} is not divisible by heads {spec.heads}")
    if spec.kind == "mha":
        return MhaMixer(spec)
    if spec.kind in ("csan", "csan2d"):
        return CsanMixer(spec)
    if spec.kind == "muse":
        return MuseMixer(spec)
    if spec.kind == "fastdisa":
        return FastDisaMixer(spec)
    raise ValueError(f"unknown token mixer {spec.kind!r}")


def reset_mixer_parameters(mixer: nn.Module) -> None:
    """attn's initialisation of the mixer's own parameters (Linears are left to the caller):
    conv cells Xavier-uniform, the MUSE gate 0, Fast-DiSA's per-head weights uniform with
    Xavier's bound over (in + out) and biases 0."""
    with torch.no_grad():
        if isinstance(mixer, MuseMixer):
            for cell in mixer.conv:
                nn.init.xavier_uniform_(cell.weight)
            mixer.gate.zero_()
        if isinstance(mixer, FastDisaMixer):
            for lin in (mixer.s1, mixer.s2, mixer.gate):
                if lin is None:
                    continue
                outputs, inputs = lin.weight.shape[1:]
                bound = math.sqrt(6.0 / (inputs + outputs))
                lin.weight.uniform_(-bound, bound)
                lin.bias.zero_()
