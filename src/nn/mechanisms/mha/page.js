// How the map pages draw multi-head attention (nn/mechanism.h, page_script):
// a note only; the decoder's causal mask is the pages' own.
({
  note: (e, comp) => comp === "cross" ? "Cross-attention: each target position attends to the encoder's output over the source tokens." :
    comp === "decoder" ? "Causal self-attention: position i sees positions ≤ i. Rows are the predicted tokens; columns the tokens read (<s> first)." :
    "Multi-head attention: softmax(QKᵀ/√d_h) over the sentence's tokens.",
})
