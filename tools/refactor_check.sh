#!/usr/bin/env bash
# Evidence that a refactor changed nothing a user can see: every arch (and the
# decoder-mixer variants) trains 40 updates on data/toy, then the losses and
# gradient norms of every update, a hash of the weights and optimizer state, a translation and the
# attention JSON are written to OUT. Run it with the attn before and after the
# change and compare: `diff -r OUT_BEFORE OUT_AFTER` must print nothing.
#   tools/refactor_check.sh ATTN_BINARY OUT_DIR        (environment: ATTEND_ARGS for attn attend)
set -euo pipefail
cd "$(dirname "$0")/.."
attn=$(realpath "$1") out=$2
mkdir -p "$out"
out=$(realpath "$out")
work=${TMPDIR:-/tmp}/attn-refactor-check  # one fixed path: the maps name their model file
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
head -n 20 data/toy/test.src >"$work/test.src"
variants=("transformer" "muse" "muse-simple" "muse-separate" "convsan" "convsan2d" "fastdisa"
          "disa" "lightconv" "dynamicconv"
          "transformer --decoder-mixer csan" "transformer --decoder-mixer fastdisa" "transformer --decoder-mixer muse")
for v in "${variants[@]}"; do
  read -r arch rest <<<"$v"
  name=$(echo "$v" | tr ' ' '_' | tr -d '-')
  # shellcheck disable=SC2086
  "$attn" train --train data/toy/train --valid data/toy/valid --arch "$arch" $rest --dim 32 --heads 4 --layers 2 \
    --ffn-dim 64 --vocab-size 300 --max-tokens 600 --max-updates 40 --log-every 1 --seed 3 --threads 2 \
    --save-dir "$work/$name" --quiet --muse-kernels 3,7 --csan-window 3 2>/dev/null
  python3 - "$work/$name/log.jsonl" >"$out/$name.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("split") in ("train", "valid"):
        print(r["split"], r["update"], repr(r.get("loss")), repr(r.get("grad_norm")), repr(r.get("bleu")))
PY
  python3 - "$work/$name/last.attn" >"$out/$name.weights" <<'PY'
import hashlib, struct, sys
blob = open(sys.argv[1], "rb").read()
header = struct.unpack("<Q", blob[:8])[0]
print(hashlib.sha256(blob[8 + header:]).hexdigest())  # every tensor (weights and optimizer moments); not the header
PY
  "$attn" translate -m "$work/$name/last.attn" -i "$work/test.src" -o "$out/$name.hyp" --threads 2 2>/dev/null
  # shellcheck disable=SC2086  # ATTEND_ARGS: extra flags, e.g. "--beam 1" against a build whose attend searched greedily
  "$attn" attend -m "$work/$name/last.attn" -i "$work/test.src" -o "$out/$name.maps.json" --threads 2 ${ATTEND_ARGS:-} 2>/dev/null
  # The model file's header, but for the training's wall time and the checksum over it.
  python3 - "$work/$name/last.attn" >"$out/$name.header" <<'PY'
import json, struct, sys
blob = open(sys.argv[1], "rb").read()
meta = json.loads(blob[8:8 + struct.unpack("<Q", blob[:8])[0]])["__metadata__"]
meta.pop("header_crc32")
state = json.loads(meta.pop("train_state"))
state.pop("elapsed_s")
print(json.dumps({"metadata": meta, "train_state": state}, indent=1, sort_keys=True))
PY
done
echo "refactor_check: $(ls "$out" | wc -l) files in $out"
