// How the map pages draw Fast-DiSA (nn/mechanism.h, page_script): each head's
// direction masks its map and badges its name; a strip beside the large map
// shows the fusion gate of each token.
({
  note: (e) => "Fast-DiSA: feature-wise weights averaged over the head's features. Forward heads attend to earlier tokens, backward heads to later ones" +
    (e.diagonal ? " (the token itself included)" : " (the token itself excluded)") + ". A row with no allowed key is all 0. " +
    (e.fusion_gate ? "The fusion gate G is the share of the head's own value kept (U = G⊙v + (1−G)⊙attention), averaged over features." : ""),
  // Encoder heads are strict (the token itself excluded), the causal decoder's include it.
  mask: (e, hi) => {
    const dir = e.directions ? e.directions[hi] : null, strict = dir && !e.diagonal;
    if (!dir) return null;
    return (i, j) => !(dir === "forward" && (strict ? j >= i : j > i)) && !(dir === "backward" && (strict ? j <= i : j < i));
  },
  badge: (e, hi) => {
    const dir = e.directions ? e.directions[hi] : null;
    if (!dir) return "";
    return dir === "forward" ? '<span class="badge fw" title="forward mask: attends to earlier tokens">← fw</span>'
                             : '<span class="badge bw" title="backward mask: attends to later tokens">bw →</span>';
  },
  stripColumns: (e) => (e.fusion_gate ? 8 : 0),
  strips: (e, hi, k) => {
    if (!e.fusion_gate) return "";
    const g = e.fusion_gate[hi], w = 64, s = k.s;
    let b = k.titled("fusion gate G") + '<svg class="map side" data-tip="gate" data-l="' + k.li + '" data-h="' + hi + '" data-s="' + s + '" data-w="' + (w + 36) + '" width="' + (w + 36) + '" height="' + k.F * s + '">';
    for (let i = 0; i < k.F; ++i) {
      b += '<rect x="0" y="' + (i * s + 1) + '" width="' + w + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#eef1f6"></rect>' +
           '<rect x="0" y="' + (i * s + 1) + '" width="' + (w * g[i]).toFixed(1) + '" height="' + Math.max(1, s - 2) + '" rx="2" fill="#2f9e44" opacity="0.75"></rect>';
      if (s >= 10) b += '<text x="' + (w + 4) + '" y="' + (i * s + s / 2) + '" dominant-baseline="central" font-size="' + Math.min(11, s - 1) + '">' + k.fmt(g[i]) + "</text>";
    }
    return b + "</svg></div>";
  },
  stripTip: (e, tip, i, j, k) => '<span class="t">' + k.esc(k.rowsTok[i]) + '</span>: fusion gate<br><span class="v">' + k.fmt(e.fusion_gate[k.hi][i]) + "</span>",
})
