#!/usr/bin/env python3
"""Test data for engine/quant and engine/gguf, made with llama.cpp's own gguf-py.

    PYTHONPATH=../shared/peers/llama.cpp/gguf-py /usr/bin/python3 scripts/gguf/make_testdata.py

(from the repository root; needs numpy). Everything it writes is deterministic
(fixed seeds), so running it again gives the same bytes.

engine/quant/testdata/
  golden.json           one entry per case: type, rows, cols, file names, and
                        dots[r] = sum_c deq[r][c]*x[c] in float64
  CASE.src.f32          the float32 values quantized (cases made by quantizing)
  CASE.blocks           the bytes gguf.quants.quantize wrote (or random blocks
                        for the K-quants, which gguf-py only dequantizes)
  CASE.deq.f32          gguf.quants.dequantize of the blocks, float32
  x.f32                 the input vector of the dot products
  half.src.f32, half.f16, half.bf16
                        float32 values across the whole range (and the special
                        ones) and numpy's float16 / gguf-py's bfloat16 of each

engine/gguf/testdata/
  tiny.gguf, tiny-align64.gguf   metadata of every value type, tokenizer and
                        llama hyper-parameters, a tensor of each supported type
  tiny.json, tiny-align64.json   what the writer was given: every key with its
                        type and value, every tensor's name, ggml dims, type,
                        offset, size, sha256 of its bytes and of gguf-py's
                        dequantization of them (float32)
  fuzz/FuzzRead/*       seed inputs for the fuzz target (Go corpus format)
"""

import hashlib
import json
import os
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as QT
from gguf import GGUFValueType as VT
from gguf import quants

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
QDIR = os.path.join(ROOT, "engine", "quant", "testdata")
GDIR = os.path.join(ROOT, "engine", "gguf", "testdata")

ROWS, COLS = 4, 512


def rng(seed):
    return np.random.default_rng(seed)


def f16_bytes(vals):
    return np.asarray(vals, dtype=np.float32).astype(np.float16).view(np.uint8)


def edge_source(seed):
    """ROWS x COLS float32 values: normal noise with edge-case blocks mixed in."""
    r = rng(seed)
    x = r.standard_normal((ROWS, COLS)).astype(np.float32)
    x[0, 0:32] = 0.0  # an all-zero block: d = 0
    x[0, 32:64] = np.float32(1e-6) * r.standard_normal(32).astype(np.float32)  # fp16 d subnormal
    # rounding ties: with max 127 (Q8_0: id = 1) the halves round away from zero
    x[0, 64:96] = np.float32(127.0)
    x[0, 64 + np.arange(1, 31)] = (np.arange(1, 31) - 15.5).astype(np.float32)
    x[0, 96:128] = -3.0  # equal magnitudes: Q4_0 takes the first as the max
    x[0, 96 + 5] = 3.0
    x[1, 0:32] = np.linspace(-1, 1, 32, dtype=np.float32)
    x[1, 32:64] = r.uniform(-1e4, 1e4, 32).astype(np.float32)
    x[2, :] *= np.float32(1e-3)
    x[3, 0:32] = -x[3, 0:32]
    return x


def random_kquant_blocks(qt, seed):
    """Random block bytes with finite fp16 scales of both signs, plus d = 0 and a subnormal d."""
    block_size, type_size = gguf.GGML_QUANT_SIZES[qt]
    nblk = ROWS * COLS // block_size
    r = rng(seed)
    b = r.integers(0, 256, size=(nblk, type_size), dtype=np.uint8)
    d = r.uniform(1e-4, 2e-2, nblk).astype(np.float32) * r.choice([-1, 1], nblk).astype(np.float32)
    dmin = r.uniform(1e-4, 2e-2, nblk).astype(np.float32)
    d[1] = 0.0
    d[2] = 3e-6  # subnormal in fp16
    if qt == QT.Q6_K:
        b[:, 208:210] = f16_bytes(d).reshape(nblk, 2)
    else:  # Q4_K, Q5_K: d, dmin first
        b[:, 0:2] = f16_bytes(d).reshape(nblk, 2)
        b[:, 2:4] = f16_bytes(dmin).reshape(nblk, 2)
    return b.reshape(ROWS, -1)


def write(path, arr):
    with open(path, "wb") as f:
        f.write(np.ascontiguousarray(arr).tobytes())


def quant_cases(x):
    """Returns {name: (qtype, blocks[ROWS][rowbytes] uint8, deq[ROWS][COLS] float32, src or None)}."""
    cases = {}
    for name, qt, seed in [("q8_0", QT.Q8_0, 1), ("q4_0", QT.Q4_0, 2), ("bf16", QT.BF16, 3)]:
        src = edge_source(seed)
        blocks = quants.quantize(src, qt)
        cases[name] = (qt, blocks, quants.dequantize(blocks, qt), src)
    src = edge_source(4)
    src[2, :] *= np.float32(1e-2)  # values in fp16's subnormal range
    h = src.astype(np.float16)
    cases["f16"] = (QT.F16, h.view(np.uint8), h.astype(np.float32), src)
    src = edge_source(5)
    cases["f32"] = (QT.F32, src.view(np.uint8), src.copy(), src)
    for name, qt, seed in [("q4_k", QT.Q4_K, 6), ("q5_k", QT.Q5_K, 7), ("q6_k", QT.Q6_K, 8)]:
        blocks = random_kquant_blocks(qt, seed)
        cases[name] = (qt, blocks, quants.dequantize(blocks, qt), None)
    return cases


def half_values():
    """float32 values over the whole range, the special ones included."""
    r = rng(9)
    bits = r.integers(0, 2**32, size=6000, dtype=np.uint64).astype(np.uint32)
    v = bits.view(np.float32)
    # exponents where float16 is interesting: 2^-26 .. 2^17, both signs
    e = r.uniform(-26, 17, 6000)
    w = (np.sign(r.standard_normal(6000)) * np.exp2(e)).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.996, 65520, 65536, 1e-8,
                        2**-24, 2**-25, 2**-25 * 1.0000001, 3 * 2**-26, 2**-14, 2**-14 * (1 - 2**-11),
                        1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8], dtype=np.float32)
    v = np.concatenate([special, -special, v, w]).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = v.astype(np.float16)
    bf = quants.quantize(v.reshape(1, -1), QT.BF16).reshape(-1)
    return v, h.view(np.uint16), bf


def make_quant():
    os.makedirs(QDIR, exist_ok=True)
    x = rng(10).standard_normal(COLS).astype(np.float32)
    write(os.path.join(QDIR, "x.f32"), x)
    golden = {"rows": ROWS, "cols": COLS, "x": "x.f32", "cases": []}
    for name, (qt, blocks, deq, src) in quant_cases(x).items():
        blocks = np.ascontiguousarray(blocks).view(np.uint8).reshape(ROWS, -1)
        deq = np.asarray(deq, dtype=np.float32).reshape(ROWS, COLS)
        write(os.path.join(QDIR, name + ".blocks"), blocks)
        write(os.path.join(QDIR, name + ".deq.f32"), deq)
        c = {"name": name, "type": qt.name, "blocks": name + ".blocks", "deq": name + ".deq.f32",
             "dots": [float(np.dot(deq[r].astype(np.float64), x.astype(np.float64))) for r in range(ROWS)],
             "abs_dots": [float(np.dot(np.abs(deq[r].astype(np.float64)), np.abs(x.astype(np.float64)))) for r in range(ROWS)]}
        if src is not None:
            write(os.path.join(QDIR, name + ".src.f32"), src)
            c["src"] = name + ".src.f32"
        golden["cases"].append(c)
    v, h, bf = half_values()
    write(os.path.join(QDIR, "half.src.f32"), v)
    write(os.path.join(QDIR, "half.f16"), h)
    write(os.path.join(QDIR, "half.bf16"), bf)
    golden["half"] = {"src": "half.src.f32", "f16": "half.f16", "bf16": "half.bf16", "n": int(len(v))}
    with open(os.path.join(QDIR, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


# ---- GGUF files ----

def kv_json(value, vtype, sub=None):
    if vtype == VT.ARRAY:
        if sub == VT.ARRAY:
            return {"type": "ARRAY", "elem": "ARRAY", "value": [kv_json(v, VT.ARRAY, sub_of(v)) for v in value]}
        return {"type": "ARRAY", "elem": sub.name, "value": [scalar_json(v, sub) for v in value]}
    return {"type": vtype.name, "value": scalar_json(value, vtype)}


def sub_of(v):
    return VT.get_type(v[0])


def scalar_json(v, vtype):
    if vtype == VT.FLOAT32:
        return float(np.float32(v))
    if vtype == VT.FLOAT64:
        return float(v)
    if vtype == VT.BOOL:
        return bool(v)
    if vtype == VT.STRING:
        return v
    return int(v)


def make_gguf(path, alignment, seed):
    r = rng(seed)
    w = gguf.GGUFWriter(path, "llama")
    kvs = {}  # key -> (value, vtype, subtype)

    def add(key, value, vtype, sub=None):
        w.add_key_value(key, value, vtype, sub)
        kvs[key] = (value, vtype, sub)

    kvs["general.architecture"] = ("llama", VT.STRING, None)  # the writer adds it
    if alignment != 32:
        w.add_custom_alignment(alignment)
        kvs["general.alignment"] = (alignment, VT.UINT32, None)
    add("general.name", "tiny test model ✓", VT.STRING)
    add("general.file_type", 7, VT.UINT32)
    # every scalar type, at its limits
    add("test.u8", 255, VT.UINT8)
    add("test.i8", -128, VT.INT8)
    add("test.u16", 65535, VT.UINT16)
    add("test.i16", -32768, VT.INT16)
    add("test.u32", 4294967295, VT.UINT32)
    add("test.i32", -2147483648, VT.INT32)
    add("test.f32", float(np.float32(3.1415927)), VT.FLOAT32)
    add("test.u64", 18446744073709551615, VT.UINT64)
    add("test.i64", -9223372036854775808, VT.INT64)
    add("test.f64", 2.718281828459045, VT.FLOAT64)
    add("test.bool", True, VT.BOOL)
    add("test.bool_false", False, VT.BOOL)
    add("test.str", "héllo\nwörld \x00 end", VT.STRING)
    add("test.str_empty", "", VT.STRING)
    # arrays of every element type
    add("test.arr.u8", [0, 1, 255], VT.ARRAY, VT.UINT8)
    add("test.arr.i8", [-128, 0, 127], VT.ARRAY, VT.INT8)
    add("test.arr.u16", [0, 65535], VT.ARRAY, VT.UINT16)
    add("test.arr.i16", [-32768, 32767], VT.ARRAY, VT.INT16)
    add("test.arr.u32", [0, 4294967295, 7], VT.ARRAY, VT.UINT32)
    add("test.arr.i32", [-2147483648, 2147483647], VT.ARRAY, VT.INT32)
    add("test.arr.f32", [float(np.float32(v)) for v in (0.5, -1e-30, 3e38)], VT.ARRAY, VT.FLOAT32)
    add("test.arr.u64", [0, 18446744073709551615], VT.ARRAY, VT.UINT64)
    add("test.arr.i64", [-9223372036854775808, 9223372036854775807], VT.ARRAY, VT.INT64)
    add("test.arr.f64", [1e-300, -2.5, 1e300], VT.ARRAY, VT.FLOAT64)
    add("test.arr.bool", [True, False, True], VT.ARRAY, VT.BOOL)
    add("test.arr.str", ["a", "", "ü ✓", "x" * 300], VT.ARRAY, VT.STRING)
    add("test.arr.nested", [[1, 2, 3], [4]], VT.ARRAY, VT.ARRAY)
    # llama hyper-parameters
    add("llama.context_length", 2048, VT.UINT32)
    add("llama.embedding_length", 64, VT.UINT32)
    add("llama.block_count", 2, VT.UINT32)
    add("llama.feed_forward_length", 172, VT.UINT32)
    add("llama.attention.head_count", 4, VT.UINT32)
    add("llama.attention.head_count_kv", 2, VT.UINT32)
    add("llama.rope.freq_base", 500000.0, VT.FLOAT32)
    add("llama.rope.dimension_count", 16, VT.UINT32)
    add("llama.attention.layer_norm_rms_epsilon", float(np.float32(1e-5)), VT.FLOAT32)
    add("llama.attention.key_length", 16, VT.UINT32)
    add("llama.attention.value_length", 16, VT.UINT32)
    add("llama.vocab_size", 10, VT.UINT32)
    # tokenizer
    tokens = ["<unk>", "<s>", "</s>", "<pad>", "a", "b", "ab", "Ġa", "Ġ", "✓"]
    add("tokenizer.ggml.model", "gpt2", VT.STRING)
    add("tokenizer.ggml.pre", "default", VT.STRING)
    add("tokenizer.ggml.tokens", tokens, VT.ARRAY, VT.STRING)
    add("tokenizer.ggml.scores", [float(np.float32(-i * 0.25)) for i in range(len(tokens))], VT.ARRAY, VT.FLOAT32)
    add("tokenizer.ggml.token_type", [2, 3, 3, 3, 1, 1, 1, 1, 1, 1], VT.ARRAY, VT.INT32)
    add("tokenizer.ggml.merges", ["a b", "Ġ a"], VT.ARRAY, VT.STRING)
    add("tokenizer.ggml.bos_token_id", 1, VT.UINT32)
    add("tokenizer.ggml.eos_token_id", 2, VT.UINT32)
    add("tokenizer.ggml.padding_token_id", 3, VT.UINT32)
    add("tokenizer.ggml.unknown_token_id", 0, VT.UINT32)
    add("tokenizer.ggml.add_bos_token", True, VT.BOOL)
    add("tokenizer.ggml.add_eos_token", False, VT.BOOL)
    add("tokenizer.chat_template",
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}", VT.STRING)

    tensors = []

    def tensor(name, arr, raw_dtype=None, qt=QT.F32, shape=None):
        w.add_tensor(name, arr, raw_shape=shape, raw_dtype=raw_dtype)
        tensors.append((name, qt, arr))

    tensor("token_embd.weight", r.standard_normal((10, 64)).astype(np.float32))
    tensor("output_norm.weight", r.standard_normal(64).astype(np.float32))
    tensor("blk.0.f16.weight", r.standard_normal((3, 64)).astype(np.float16), qt=QT.F16)
    for name, qt, cols in [("bf16", QT.BF16, 64), ("q8_0", QT.Q8_0, 64), ("q4_0", QT.Q4_0, 96)]:
        src = r.standard_normal((2, cols)).astype(np.float32)
        tensor(f"blk.0.{name}.weight", quants.quantize(src, qt), raw_dtype=qt, qt=qt)
    for name, qt in [("q4_k", QT.Q4_K), ("q5_k", QT.Q5_K), ("q6_k", QT.Q6_K)]:
        b = random_kquant_blocks(qt, seed + 100 + int(qt))[:2, : gguf.GGML_QUANT_SIZES[qt][1]]
        tensor(f"blk.1.{name}.weight", np.ascontiguousarray(b), raw_dtype=qt, qt=qt)
    # three dims: [2][3][32] Q8_0
    src = r.standard_normal((2, 3, 32)).astype(np.float32)
    tensor("blk.1.cube.weight", quants.quantize(src, QT.Q8_0), raw_dtype=QT.Q8_0, qt=QT.Q8_0)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    # the tensor infos, read back with gguf-py's reader (offsets, ggml dims)
    rd = gguf.GGUFReader(path)
    tinfo = []
    for t in rd.tensors:
        data = bytes(np.asarray(t.data).view(np.uint8).tobytes())
        deq = quants.dequantize(np.frombuffer(data, dtype=np.uint8).copy(), QT(t.tensor_type))
        tinfo.append({"name": t.name, "dims": [int(d) for d in t.shape], "type": QT(t.tensor_type).name,
                      "offset": int(t.data_offset) - int(rd.data_offset), "nbytes": int(t.n_bytes),
                      "sha256": hashlib.sha256(data).hexdigest(),
                      "deq_sha256": hashlib.sha256(np.asarray(deq, dtype=np.float32).tobytes()).hexdigest()})
    assert [t["name"] for t in tinfo] == [n for n, _, _ in tensors]
    meta = {"version": 3, "alignment": alignment, "data_offset": int(rd.data_offset),
            "keys": [dict(key=k, **kv_json(*v)) for k, v in kvs.items()], "tensors": tinfo}
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump(meta, f, indent=1, ensure_ascii=False)
        f.write("\n")


def fuzz_seeds():
    d = os.path.join(GDIR, "fuzz", "FuzzRead")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(GDIR, "_seed.gguf")
    w = gguf.GGUFWriter(p, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_array("tokenizer.ggml.tokens", ["a", "b"])
    w.add_key_value("x.nested", [[1], [2, 3]], VT.ARRAY, VT.ARRAY)
    w.add_tensor("a", np.arange(4, dtype=np.float32))
    w.add_tensor("b", quants.quantize(np.ones((1, 32), dtype=np.float32), QT.Q8_0), raw_dtype=QT.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(p, "rb") as f:
        small = f.read()
    os.remove(p)
    seeds = {"small": small, "header-only": small[:24], "truncated": small[: len(small) // 2]}
    for name, b in seeds.items():
        with open(os.path.join(d, name), "w") as f:
            f.write("go test fuzz v1\n[]byte(" + go_bytes(b) + ")\n")


def go_bytes(b):
    out = ['"']
    for c in b:
        ch = chr(c)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 32 <= c < 127:
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    out.append('"')
    return "".join(out)


def main():
    if "--check-numpy" in sys.argv:
        print(np.__version__)
        return
    make_quant()
    os.makedirs(GDIR, exist_ok=True)
    make_gguf(os.path.join(GDIR, "tiny.gguf"), 32, 11)
    make_gguf(os.path.join(GDIR, "tiny-align64.gguf"), 64, 12)
    fuzz_seeds()


if __name__ == "__main__":
    main()
