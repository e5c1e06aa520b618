// How the map pages draw DiSA (nn/mechanism.h, page_script): as Fast-DiSA —
// its extras are the same, so its hooks (direction masks, head badges, the
// fusion gate strip) are reused — with a note of its own. Fast-DiSA comes
// before DiSA in the registry, so its hooks are defined when this runs.
(({ label, ...hooks }) => Object.assign(hooks, {
  note: (e) => "DiSA (DiSAN): feature-wise weights softmax_j(5·tanh((W1 v_i + W2 v_j + b)/5)), averaged over the head's features. Forward heads attend to earlier tokens, backward heads to later ones" +
    (e.diagonal ? " (the token itself included)" : " (the token itself excluded)") + ". A row with no allowed key is all 0. " +
    "The fusion gate G is the share of the head's own value kept (U = G⊙v + (1−G)⊙attention), averaged over features.",
}))(ATTN_MECHANISMS.fastdisa)
