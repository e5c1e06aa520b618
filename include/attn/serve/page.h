// The page `attn serve` answers at `/`: type a sentence, translate it with
// several loaded models at once and compare their attention maps side by
// side, one panel per model, all showing the same component, layer and head.
// One self-contained HTML document (no network but the same-origin API); the
// maps are drawn by the code the offline page uses (decode/maps_draw.h).
//
// The API it calls:
//   GET  /v1/models  → {"models": [{"name", "file", "arch", "parameters", "config",
//                                   "encoder_mixers", "decoder_mixers"}, …],
//                    "limits": {"max_beam", …}}  (the beam box allows up to max_beam)
//   POST /v1/attend  {"models": ["a", "b"], "sentences": ["…"], "beam": 5}
//                    → {"results": [{"model": "a", "document": <attn attend's document,
//                                    one sentence>}, …]} in the requested order
//   errors: 4xx/5xx with {"error": {"status": 400, "message": "…"}}
//
// What a test or a link can rely on:
//   URL  ?s=SENTENCE[&models=a,b][&beam=N]  fills the form and submits at load;
//        #component=cross&layer=1&head=0[&scale=sqrt]  the shared selection (indices
//                                            into the component's layers and heads;
//                                            the contrast, linear when absent).
//   <body data-state>  "idle" (nothing asked yet), "busy" (waiting for the
//        server), "drawn" (every requested panel drawn), "error" (the message is
//        in #status, which then has class "error").
//   #sentence (text input), #translate (button), #models input[name=model]
//        (one check box per model, value = its name), #beam (number input).
//   #tabs button[data-c] (components), #layer and #head (select), #scale
//        button[data-k] (linear, sqrt).
//   #results section.model-panel[data-model=NAME], one per requested model in
//        the requested order, holding .translation, .score, the large map
//        (.detail svg.map.big, cells rect.d) and the thumbnails (.grid
//        figure.thumb[data-l][data-h] svg.map, cells rect.c).
#pragma once
#include <string>

namespace attn::serve {

// The whole document.
std::string serve_page();

}  // namespace attn::serve
