// How the map pages draw LightConv and DynamicConv (nn/mechanism.h,
// page_script): the map is the band of each token's convolution taps (row i:
// tap κ at column i+κ−left, renormalised over the taps inside the sentence),
// the window outlined; beside it a strip with the head's raw taps.
({
  note: (e) => "Depth-wise convolution: row i holds token i's " + e.kernel + " softmax-normalised taps over its window [i−" + e.left + ", i+" + e.right +
    "] (outlined), one kernel per head (LightConv: the same for every token; DynamicConv: predicted from the token). Taps that fall outside the sentence read zeros; the map renormalises the others to sum to 1, the strip shows the taps as used.",
  mask: (e) => ("left" in e ? (i, j) => !(j < i - e.left || j > i + e.right) : null),
  // The window's outline over rows 0..F−1 of a map at (x0, y0).
  outline: (e, F, T, s, x0, y0, k) => ("left" in e ? k.bandOutline(e.left, e.right, F, T, s, x0, y0) : ""),
  layerSummary: (e) => (e.kernel ? '<div title="this layer\'s kernel size (it grows with depth)">k = ' + e.kernel + "</div>" : ""),
  stripColumns: (e, f) => (e.taps ? e.kernel * f + 2 : 0),
  strips: (e, hi, k) => (e.taps ? k.strip("conv taps<br>k=" + e.kernel, e.kernel, e.taps[hi], "taps") : ""),
  stripTip: (e, tip, i, j, k) => {
    if (tip !== "taps" || j >= e.kernel) return "";
    const src = i + j - e.left;
    return "tap " + j + ' of <span class="t">' + k.esc(k.rowsTok[i]) + "</span> reads " + (src >= 0 && src < k.colsTok.length ? '<span class="t">' + k.esc(k.colsTok[src]) + "</span>" : "outside the sentence (0)") +
           '<br><span class="v">' + k.fmt(e.taps[k.hi][i][j]) + "</span>";
  },
})
