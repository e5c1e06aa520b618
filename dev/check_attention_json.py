#!/usr/bin/env python3
"""Checks files written by `attn attend` against docs/attention.schema.json
with the jsonschema package (Debian: python3-jsonschema), plus what a schema
cannot say: every weights array is [heads][from tokens][to tokens] and every
row sums to 1 (or is all 0). A second, independent reading of the format
beside the C++ tests; not part of `make test`.

    dev/check_attention_json.py maps.json [maps.jsonl ...]

A file ending in .jsonl is read as JSON Lines (one document per line).
Exits 1 on the first problem, 2 when jsonschema is missing.
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_attention_json: needs jsonschema; install it with: sudo apt-get install python3-jsonschema")

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "attention.schema.json")


def tokens(sentence, axis):
    return sentence[{"source": "source_tokens", "target": "target_tokens", "target_input": "target_input_tokens"}[axis]]


def check_document(doc, where, validator):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise ValueError(f"{where}: /{'/'.join(map(str, e.absolute_path))}: {e.message}")
    unit = 10.0 ** -doc["precision"]
    for s in doc["sentences"]:
        for name, comp in s["components"].items():
            rows, cols = len(tokens(s, comp["from"])), len(tokens(s, comp["to"]))
            for layer in comp["layers"]:
                at = f"{where}: sentence {s['index']}, {name} layer {layer['layer']}"
                if len(layer["weights"]) != len(comp["heads"]):
                    raise ValueError(f"{at}: {len(layer['weights'])} heads of weights, {len(comp['heads'])} named")
                for k, head in enumerate(layer["weights"]):
                    if len(head) != rows or any(len(r) != cols for r in head):
                        raise ValueError(f"{at}, head {comp['heads'][k]}: not {rows} x {cols}")
                    for i, row in enumerate(head):
                        total = sum(row)
                        if total != 0 and abs(total - 1) > unit:
                            why = (" (Fast-DiSA: a feature's normaliser underflowed; see docs/attention-json.md)"
                                   if layer["mechanism"] == "fastdisa" else "")
                            raise ValueError(f"{at}, head {comp['heads'][k]}, row {i}: sums to {total}{why}")


def main(paths):
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            if path.endswith(".jsonl"):
                docs = [(json.loads(line), f"{path}:{n + 1}") for n, line in enumerate(f) if line.strip()]
            else:
                docs = [(json.load(f), path)]
        sentences = 0
        for doc, where in docs:
            check_document(doc, where, validator)
            sentences += len(doc["sentences"])
        print(f"{path}: valid ({sentences} sentences)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        main(sys.argv[1:])
    except ValueError as e:
        print(f"check_attention_json: {e}", file=sys.stderr)
        sys.exit(1)
