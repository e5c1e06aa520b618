// How the map pages draw MUSE (nn/mechanism.h, page_script): the map is the
// attention branch; the kernel gate π under the layer's label, and beside the
// large map one strip per convolution cell with the head's taps.
({
  note: (e) => "MUSE: the map is the global attention branch. Beside it, each dynamic-convolution cell's taps for this head: tap κ of token t reads token t+κ−offset (" +
    (e.offsets ? e.offsets.join(", ") : "") + "); the cells are mixed by the gate π.",
  layerSummary: (e, d) => {
    if (!e.gate || !e.kernels) return "";
    let h = '<div class="gatebars" title="kernel gate π = softmax(α): how the convolution cells are mixed">';
    e.kernels.forEach((k, i) => {
      h += "<span>k=" + k + '</span><span class="bar"><i style="width:' + (100 * e.gate[i]).toFixed(1) + '%"></i></span><span class="v">' + d.fmt(e.gate[i]) + "</span>";
    });
    return h + "</div>";
  },
  stripColumns: (e, f) => (e.taps ? e.kernels.reduce((a, k) => a + k * f + 2, 0) : 0),
  strips: (e, hi, k) => (e.taps && e.kernels
    ? e.kernels.map((kernel, ki) => k.strip("conv taps<br>k=" + kernel + (e.gate ? " · π " + k.fmt(e.gate[ki]) : ""), kernel, e.taps[ki][hi], "taps:" + ki)).join("") : ""),
  stripTip: (e, tip, i, j, k) => {
    if (!tip.startsWith("taps:")) return "";
    const ki = +tip.slice(5), kernel = e.kernels[ki];
    if (j >= kernel) return "";
    const src = i + j - e.offsets[ki];
    return "tap " + j + " of k=" + kernel + ' for <span class="t">' + k.esc(k.rowsTok[i]) + "</span> reads " + (src >= 0 && src < k.colsTok.length ? '<span class="t">' + k.esc(k.colsTok[src]) + "</span>" : "outside the sentence (0)") +
           '<br><span class="v">' + k.fmt(e.taps[ki][k.hi][i][j]) + "</span>";
  },
})
