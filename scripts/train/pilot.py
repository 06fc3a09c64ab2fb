#!/usr/bin/python3
"""Throughput pilot: training steps per second for candidate shapes (random data).

    OPENBLAS_NUM_THREADS=2 /usr/bin/python3 scripts/train/pilot.py [models/default/pilot.json]
Prints tokens/s per shape (and writes them to the file given); model_card.py puts them and the
choice they led to in MODEL_CARD.md ("Choices").
"""
import json, sys, os, time
import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import Llama  # noqa: E402

torch.set_num_threads(1)
SHAPES = [
    # name, dim, layers, heads, kv, hidden, batch
    ("d128-L5 b16", 128, 5, 4, 2, 384, 16),
    ("d128-L5 b32", 128, 5, 4, 2, 384, 32),
    ("d128-L6 b16", 128, 6, 4, 2, 384, 16),
    ("d192-L4 b16", 192, 4, 6, 2, 512, 16),
    ("d192-L5 b16", 192, 5, 6, 2, 512, 16),
    ("d256-L4 b16", 256, 4, 8, 4, 704, 16),
]
res = []
for name, d, L, h, kv, f, b in SHAPES:
    cfg = {"hidden_size": d, "intermediate_size": f, "num_hidden_layers": L, "num_attention_heads": h,
           "num_key_value_heads": kv, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
           "rope_theta": 10000.0, "vocab_size": 4096}
    torch.manual_seed(0)
    m = Llama(cfg)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    x = torch.randint(0, 4096, (b, 257))
    for i in range(13):
        if i == 3:
            t0 = time.time()
        loss = F.cross_entropy(m(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad(); loss.backward(); opt.step()
    dt = (time.time() - t0) / 10
    n = sum(p.numel() for p in m.parameters())
    res.append({"shape": name, "params": n, "tokens_per_s": round(b * 256 / dt)})
    print(json.dumps(res[-1]), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"torch_threads": 1, "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", ""), "timed_steps": 10, "shapes": res}, f, indent=1)
