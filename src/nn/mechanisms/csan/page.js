// How the map pages draw ConvSAN (nn/mechanism.h, page_script): the window
// [i − left, i + right] masks and outlines each map; in 2D a strip beside the
// large map shows the weight each neighbouring head received.
({
  note: (e) => "ConvSAN: each query attends only to keys in its window [i−" + e.left + ", i+" + e.right + "] (outlined)" +
    (e.head_window > 1 ? "; in 2D one softmax runs over the window of " + e.head_window + " neighbouring heads (" +
    (e.head_policy === "wrap" ? "keys wrap around the heads and values clamp to 0…H−1, as in the authors' code" : "heads outside 0…H−1 are dropped") + "), the map shows each key's weight summed over those heads and the strip the weight each neighbouring head received." : "."),
  mask: (e) => ("left" in e ? (i, j) => !(j < i - e.left || j > i + e.right) : null),
  // The window's outline over rows 0..F−1 of a map at (x0, y0).
  outline: (e, F, T, s, x0, y0, k) => ("left" in e ? k.bandOutline(e.left, e.right, F, T, s, x0, y0) : ""),
  stripColumns: (e, f) => (e.head_weights && e.head_window > 1 ? e.head_window * f + 2 : 0),
  strips: (e, hi, k) => (e.head_weights && e.head_window > 1
    ? k.strip("head area<br>h−" + (e.head_window - 1) / 2 + "…h+" + (e.head_window - 1) / 2, e.head_window, e.head_weights[hi], "area") : ""),
  stripTip: (e, tip, i, j, k) => {
    if (j >= e.head_window) return "";
    const kh = k.head + j - (e.head_window - 1) / 2, v = e.head_weights[k.hi][i][j];
    return '<span class="t">' + k.esc(k.rowsTok[i]) + "</span>: weight on head " + kh + '<br><span class="v">' + (v === null ? "dropped (no such head)" : k.fmt(v)) + "</span>";
  },
})
