"""torch_gpt2.py: the PyTorch peer for `inferscope bench`: GPT-2 124M-shaped prefill and decode speed.

A plain GPT-2 forward pass (LayerNorm, Conv1D-style addmm, causal attention,
tanh GELU, tied LM head for the last position only) with random weights of the
gpt2-124M shape, in float32. Run it on the same cores as the engine, e.g.

    OPENBLAS_NUM_THREADS=2 python3 scripts/bench/torch_gpt2.py --threads 1 --prompt 128

(torch.set_num_threads(1) with OpenBLAS's own 2 threads was the fastest setup
on the 2-core benchmark machine). Prints one JSON object.
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d, L, H, V, S, hid = 768, 12, 12, 50257, 1024, 3072
    hd = d // H
    r = lambda *s: torch.randn(*s) * 0.02
    wte, wpe = r(V, d), r(S, d)
    layers = [dict(ln1w=torch.ones(d), ln1b=torch.zeros(d), attw=r(d, 3 * d), attb=torch.zeros(3 * d),
                   projw=r(d, d), projb=torch.zeros(d), ln2w=torch.ones(d), ln2b=torch.zeros(d),
                   fcw=r(d, hid), fcb=torch.zeros(hid), fc2w=r(hid, d), fc2b=torch.zeros(d)) for _ in range(L)]
    lnfw, lnfb = torch.ones(d), torch.zeros(d)

    def forward(ids, pos0, cache):
        T = ids.shape[0]
        x = wte[ids] + wpe[pos0:pos0 + T]
        for l, w in enumerate(layers):
            h = F.layer_norm(x, (d,), w["ln1w"], w["ln1b"], 1e-5)
            qkv = torch.addmm(w["attb"], h, w["attw"])
            q, k, v = qkv.split(d, dim=1)
            q = q.view(T, H, hd).transpose(0, 1)
            k = k.view(T, H, hd).transpose(0, 1)
            v = v.view(T, H, hd).transpose(0, 1)
            if cache is not None:
                if l in cache:
                    k = torch.cat([cache[l][0], k], dim=1)
                    v = torch.cat([cache[l][1], v], dim=1)
                cache[l] = (k, v)
            n = k.shape[1]
            att = (q @ k.transpose(1, 2)) / math.sqrt(hd)
            mask = torch.ones(T, n, dtype=torch.bool).tril(diagonal=n - T)
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            y = (att @ v).transpose(0, 1).reshape(T, d)
            x = x + torch.addmm(w["projb"], y, w["projw"])
            h = F.layer_norm(x, (d,), w["ln2w"], w["ln2b"], 1e-5)
            m = F.gelu(torch.addmm(w["fcb"], h, w["fcw"]), approximate="tanh")
            x = x + torch.addmm(w["fc2b"], m, w["fc2w"])
        x = F.layer_norm(x[-1:], (d,), lnfw, lnfb, 1e-5)
        return x @ wte.t()

    ids = torch.randint(0, V, (a.prompt,))
    with torch.no_grad():
        forward(ids, 0, None)  # warm-up
        best = float("inf")
        for _ in range(a.reps):
            t0 = time.perf_counter()
            forward(ids, 0, None)
            best = min(best, time.perf_counter() - t0)
        cache = {}
        logits = forward(ids, 0, cache)
        tok = int(logits.argmax())
        t0 = time.perf_counter()
        for i in range(a.gen):
            logits = forward(torch.tensor([tok]), a.prompt + i, cache)
            tok = int(logits.argmax())
        dec = a.gen / (time.perf_counter() - t0)
    print(json.dumps({"peer": "pytorch " + torch.__version__, "threads": a.threads, "prompt_tokens": a.prompt,
                      "prefill_tokens_per_s": round(a.prompt / best, 1), "prefill_best_s": round(best, 4),
                      "decode_tokens_per_s": round(dec, 1)}))


if __name__ == "__main__":
    main()
