#!/usr/bin/env python3
"""Q4_K quantization goldens for engine/quant, made by llama.cpp's own llama-quantize.

    PYTHONPATH=../shared/peers/llama.cpp/gguf-py /usr/bin/python3 scripts/gguf/make_q4k_testdata.py

(from the repository root; needs numpy and ../shared/peers/llama.cpp/bin/llama-quantize).
gguf-py only dequantizes Q4_K, so the reference bytes come from llama-quantize: a tiny llama
GGUF with F32 matrices written by gguf-py, quantized with `llama-quantize --pure ... Q4_K`
(every matrix Q4_K, no importance matrix: ggml's quantize_row_q4_K_ref), read back with
gguf-py's reader. Deterministic (fixed seeds).

engine/quant/testdata/
  q4_k_quant.src.f32    ROWS x COLS float32 values: noise of several shapes and edge cases
  q4_k_quant.blocks     llama-quantize's Q4_K bytes of them
  q4_k_quant.deq.f32    gguf-py's dequantization of those bytes
  q4_k_quant.json       rows, cols, file names, the llama-quantize command
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import gguf
from gguf import GGMLQuantizationType as QT
from gguf import quants

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
QDIR = os.path.join(ROOT, "engine", "quant", "testdata")
QUANTIZE = os.path.join(ROOT, "..", "shared", "peers", "llama.cpp", "bin", "llama-quantize")

ROWS, COLS = 8, 512  # 16 super-blocks of 256


def source():
    r = np.random.default_rng(36)
    x = r.standard_normal((ROWS, COLS)).astype(np.float32)
    x[0, 0:256] = 0.0  # an all-zero super-block: d = dmin = 0
    x[0, 256:288] = 0.5  # a constant sub-block (max == min)
    x[0, 288:320] = -0.25  # a constant negative sub-block
    x[1, :] = r.uniform(0.1, 2.0, COLS).astype(np.float32)  # all positive: min clamps to 0
    x[2, :] = -np.abs(x[2, :])  # all negative
    x[3, :] *= np.float32(1e-6)  # tiny: fp16 scales subnormal
    x[4, :] = (r.standard_t(2, COLS) * 3).astype(np.float32)  # heavy tails: outliers
    x[5, 0:256] = np.linspace(-1, 1, 256, dtype=np.float32)
    x[5, 256:512] = np.float32(1e3) * x[5, 256:512]  # large values
    x[6, :] = np.round(x[6, :] * 4).astype(np.float32) / 4  # values on a grid: ties in rounding
    x[7, :] = r.uniform(-1, 1, COLS).astype(np.float32) * np.float32(0.02)  # weight-like scale
    return x


def main():
    if not os.path.exists(QUANTIZE):
        sys.exit("llama-quantize not found at " + QUANTIZE)
    src = source()
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "f32.gguf")
        q4k = os.path.join(tmp, "q4k.gguf")
        w = gguf.GGUFWriter(f32, "llama")
        w.add_uint32("llama.context_length", 64)
        w.add_uint32("llama.embedding_length", COLS)
        w.add_uint32("llama.block_count", 1)
        w.add_uint32("llama.feed_forward_length", COLS)
        w.add_uint32("llama.attention.head_count", 2)
        w.add_uint32("llama.attention.head_count_kv", 2)
        w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
        w.add_uint32("general.file_type", 0)
        w.add_tensor("blk.0.attn_q.weight", src)
        w.add_tensor("blk.0.attn_norm.weight", np.ones(COLS, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        cmd = [QUANTIZE, "--pure", f32, q4k, "Q4_K", "1"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rd = gguf.GGUFReader(q4k)
        t = next(t for t in rd.tensors if t.name == "blk.0.attn_q.weight")
        assert QT(t.tensor_type) == QT.Q4_K, t.tensor_type
        blocks = np.asarray(t.data).view(np.uint8).reshape(ROWS, -1).copy()
    deq = np.asarray(quants.dequantize(blocks, QT.Q4_K), dtype=np.float32).reshape(ROWS, COLS)
    for name, arr in [("q4_k_quant.src.f32", src), ("q4_k_quant.blocks", blocks), ("q4_k_quant.deq.f32", deq)]:
        with open(os.path.join(QDIR, name), "wb") as f:
            f.write(np.ascontiguousarray(arr).tobytes())
    meta = {"rows": ROWS, "cols": COLS, "type": "Q4_K", "src": "q4_k_quant.src.f32",
            "blocks": "q4_k_quant.blocks", "deq": "q4_k_quant.deq.f32",
            "made_by": "llama-quantize --pure F32.gguf OUT.gguf Q4_K 1 (llama.cpp 81ff7abe)"}
    with open(os.path.join(QDIR, "q4_k_quant.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
