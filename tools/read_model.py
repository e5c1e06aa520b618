#!/usr/bin/env python3
"""Reads an attn model file (.safetensors, F32, and I8 from attn quantize) with json + numpy only.

    python3 tools/read_model.py runs/toy/best.attn     # prints metadata keys and tensors
    from read_model import load; tensors, metadata = load("runs/toy/best.attn")
"""
import json, struct, sys, zlib
import numpy as np


def load(path):
    """Returns ({name: float32 array}, {metadata key: string}). The int8 weights of a
    quantized file come back dequantized (q * scale per row of the last dimension) and
    their "<name>.scale" tensors are dropped, as attn's own loader does."""
    with open(path, "rb") as f:
        (header_size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_size))
        data = f.read()
    metadata = header.pop("__metadata__", {})
    if "crc32" in metadata and zlib.crc32(data) != int(metadata["crc32"], 16):
        raise ValueError(f"{path}: checksum mismatch; the file is damaged")
    tensors, int8 = {}, {}
    for name, t in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        assert t["dtype"] in ("F32", "I8"), f"{name}: dtype {t['dtype']}"
        begin, end = t["data_offsets"]
        if t["dtype"] == "I8":
            int8[name] = np.frombuffer(data[begin:end], dtype="i1").reshape(t["shape"])
        else:
            tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(t["shape"])
    for name, q in int8.items():
        scale = tensors.pop(name + ".scale").reshape(q.shape[:-1] + (1,))
        tensors[name] = q.astype(np.float32) * scale
    return tensors, metadata


if __name__ == "__main__":
    tensors, metadata = load(sys.argv[1])
    print("metadata:", ", ".join(sorted(metadata)))
    for name, array in tensors.items():
        print(f"{name} {list(array.shape)}")
