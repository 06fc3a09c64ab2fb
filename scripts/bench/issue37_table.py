#!/usr/bin/env python3
"""issue37_table.py: the issue-37 figures from issue37.sh's outputs, as named JSON fields and as
the README's performance table.

    python3 scripts/bench/issue37_table.py DIR [--readme README.md] [--note TEXT]

DIR holds one folder per round (r1, r2, ...), each with the `inferscope bench` JSON outputs and
llama-batched-bench's and llama-bench's (depth) JSONL that issue37.sh wrote there, and load.txt (the load average before and
after the round). Every figure is the median over the rounds of a ratio taken within one run
(min–max beside it). Prints the JSON summary, then the table; with --readme, replaces the text
between README's `<!-- issue37-table:begin -->` and `<!-- issue37-table:end -->` markers with the
table (and --note, a line said above it: the date, the machine, the load).
"""
import glob
import json
import os
import statistics
import sys


def rounds(d):
    return sorted(glob.glob(os.path.join(d, "r*")), key=lambda p: int(os.path.basename(p)[1:]))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError):
        return []


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def rng(v):
    v = [x for x in v if x is not None]
    if not v:
        return "—"
    if len(v) == 1:
        return f"{v[0]:.3g}"
    return f"{statistics.median(v):.3g} ({min(v):.3g}–{max(v):.3g}, {len(v)} runs)"


def num(x, fmt="{:.3g}"):
    return "—" if x is None else fmt.format(x)


def summarize(d):
    rs = rounds(d)
    per = {}  # figure name -> list of values over rounds
    extra = {}

    def add(name, v):
        per.setdefault(name, []).append(v)

    for r in rs:
        lab = load(os.path.join(r, "lab.json"))
        if lab and lab.get("lab_run"):
            l = lab["lab_run"][0]
            add("lab_vs_bare", l["lab_vs_bare"])
            add("lab_vs_bare_cpu", l["lab_vs_bare_cpu"])
            add("lab_run_ms", l["lab_run_ms"])
            add("lab_bare_ms", l["bare_ms"])
            add("lab_gc_cpu_percent", l["gc_cpu_percent"])
            add("lab_overhead_us_per_token", l.get("overhead_us_per_token"))
            extra["lab_gen_tokens"] = l["gen_tokens"]
        dep = load(os.path.join(r, "depth.json"))
        if dep and dep.get("long_context"):
            l = dep["long_context"][0]
            add("depth_decode_vs_read_floor", l["decode_vs_read_floor"])
            add("depth_attention_vs_kv_read_floor", l["attention_vs_kv_read_floor"])
            if "attention_timed_vs_kv_read_floor" in l:
                add("depth_attention_timed_vs_kv_read_floor", l["attention_timed_vs_kv_read_floor"])
                add("depth_attention_timed_ms", l["attention_timed_ms"])
                add("depth_kv_read_floor_ms", l["kv_read_floor_ms"])
            add("depth_decode_ms", l["decode_ms"])
            add("depth_read_floor_ms", l["read_floor_ms"])
            extra["depth"], extra["depth_model"] = l["depth"], l["model"]
        peerd = [p for p in jsonl(os.path.join(r, "llama-depth.jsonl")) if p.get("n_gen", 0) > 0]
        if peerd:
            add("llama_depth_tokens_per_s", peerd[0]["avg_ts"])
            extra["llama_depth"], extra["llama_depth_kv"] = peerd[0]["n_depth"], peerd[0].get("type_k")
        for kv in ("f16", "f32"):
            dp = load(os.path.join(r, f"depth-real-{kv}.json"))
            if dp and dp.get("long_context"):
                l = dp["long_context"][0]
                add(f"depth_real_{kv}_tokens_per_s", 1000 / l["decode_ms"])
                if peerd:
                    add(f"depth_real_{kv}_vs_llama", 1000 / l["decode_ms"] / peerd[0]["avg_ts"])
        for f in sorted(glob.glob(os.path.join(r, "bw-*.json"))):
            b = load(f)
            if not b or not b.get("paired"):
                continue
            key = os.path.basename(f)[3:-5]  # MODEL-LAYOUT-Nt
            p = b["paired"][0]
            add(f"decode_vs_bound/{key}/f32", p["decode_vs_bandwidth_bound"]["median"])
            if p.get("bf16_vs_bandwidth_bound"):
                add(f"decode_vs_bound/{key}/bf16", p["bf16_vs_bandwidth_bound"]["median"])
            add(f"probe_GBps/{key}", p["probe_median_GB_per_s"])
            add(f"tokens_per_s/{key}/f32", p["f32_median_tokens_per_s"])
            if p.get("bf16_median_tokens_per_s"):
                add(f"tokens_per_s/{key}/bf16", p["bf16_median_tokens_per_s"])
        bat = load(os.path.join(r, "batched.json"))
        peer = jsonl(os.path.join(r, "llama-batched.jsonl"))
        if bat and bat.get("concurrent"):
            c = bat["concurrent"][0]
            add("batched32_real_vs_unbatched", c["batched_vs_unbatched"])
            add("batched32_real_vs_unbatched_cpu", c["batched_vs_unbatched_cpu"])
            add("batched32_real_tokens_per_s", c["aggregate_decode_tokens_per_s_batched"])
            add("unbatched32_real_tokens_per_s", c["aggregate_decode_tokens_per_s_unbatched"])
            tg = [p["speed_tg"] for p in peer if p.get("pl") == c["sessions"]]
            if tg:
                add("llama_batched_bench_tokens_per_s", tg[0])
                add("batched32_real_vs_llama_batched_bench", c["aggregate_decode_tokens_per_s_batched"] / tg[0])
    loads = []
    for r in rs:
        try:
            loads.append(open(os.path.join(r, "load.txt")).read().split())
        except OSError:
            pass
    out = {"rounds": len(rs), "load_averages_1min": [x for l in loads for x in l]}
    out.update(extra)
    for k, v in per.items():
        m = med(v)
        out[k] = None if m is None else round(m, 4)
    return out, per


def table(s, per):
    def r(name):
        return rng(per.get(name, []))

    lines = ["| figure | engine | baseline (same run) | ratio: median (min–max) | goal |",
             "| --- | --- | --- | --- | --- |"]
    n = s.get("lab_gen_tokens", 250)
    lines.append(f"| lab run, {n} tokens, default model, 2 threads: the server's side of a thinned Run "
                 f"(`lab_run.lab_vs_bare`) | {num(s.get('lab_run_ms'), '{:.1f}')} ms "
                 f"({num(s.get('lab_overhead_us_per_token'), '{:.0f}')} µs a token beside the forward passes) "
                 f"| bare prefill + greedy decode: {num(s.get('lab_bare_ms'), '{:.1f}')} ms "
                 f"| {r('lab_vs_bare')} (CPU time: {r('lab_vs_bare_cpu')}) | ≥ 0.85 |")
    lines.append(f"| garbage collector's share of the lab run's CPU (`gc_cpu_percent`) "
                 f"| {num(s.get('lab_gc_cpu_percent'), '{:.2f}')} % | — | {r('lab_gc_cpu_percent')} % | < 2 % |")
    if "depth_decode_vs_read_floor" in s:
        lines.append(f"| decode at depth {s.get('depth')}, {s.get('depth_model')}, 2 threads, against reading the weights "
                     f"and the KV cache once: step time ÷ that floor, 1 = at the floor (`long_context.decode_vs_read_floor`) | {num(s.get('depth_decode_ms'), '{:.1f}')} ms "
                     f"| read floor {num(s.get('depth_read_floor_ms'), '{:.1f}')} ms | {r('depth_decode_vs_read_floor')} "
                     f"| ≤ 1.3× the read floor (the issue's \"KV-read floor per token\", read as the whole step's) |")
    if "depth_attention_timed_vs_kv_read_floor" in s:
        lines.append(f"| attention alone at depth {s.get('depth')}, {s.get('depth_model')}, 2 threads: every layer's queries against the "
                     f"cache, softmax and weighted sums, timed where they run in the step (`long_context.attention_timed_vs_kv_read_floor`) "
                     f"| {num(s.get('depth_attention_timed_ms'), '{:.2f}')} ms | the KV cache's bytes at the probe's bandwidth: "
                     f"{num(s.get('depth_kv_read_floor_ms'), '{:.2f}')} ms | {r('depth_attention_timed_vs_kv_read_floor')} "
                     f"(estimated instead as the step at depth {s.get('depth')} less the step at 16: {r('depth_attention_vs_kv_read_floor')}) "
                     f"| ≤ 1.3× (the issue's \"KV-read floor per token\", read as attention alone) |")
    for kv, what in (("f16", "same cache precision as llama.cpp's"), ("f32", "our default float32 cache: twice the bytes")):
        if f"depth_real_{kv}_vs_llama" in s:
            lines.append(f"| decode at depth {s.get('llama_depth')}, smollm2-135M real-layout directory, F32 weights, 2 threads, "
                         f"{kv.upper()} KV cache ({what}) vs llama.cpp `llama-bench -d {s.get('llama_depth')}` on a GGUF of the same "
                         f"weights ({s.get('llama_depth_kv')} cache) | {num(s.get(f'depth_real_{kv}_tokens_per_s'), '{:.1f}')} tok/s "
                         f"| llama.cpp {num(s.get('llama_depth_tokens_per_s'), '{:.1f}')} tok/s | {r(f'depth_real_{kv}_vs_llama')} | ≥ 1.0× |")
    keys = sorted({k.split("/")[1] for k in per if k.startswith("decode_vs_bound/")})
    for k in keys:
        model, layout, threads = k.rsplit("-", 2)
        for prec in ("f32", "bf16"):
            name = f"decode_vs_bound/{k}/{prec}"
            if name not in per:
                continue
            lines.append(f"| {model} {prec.upper()} decode vs read-bandwidth bound, {layout} layout, "
                         f"{threads[:-1]} thread{'s' if threads != '1t' else ''} (`--paired`) "
                         f"| {num(s.get(f'tokens_per_s/{k}/{prec}'), '{:.1f}')} tok/s "
                         f"| probe {num(s.get('probe_GBps/' + k), '{:.1f}')} GB/s | {r(name)} | ≥ 0.9 |")
    if "batched32_real_vs_unbatched" in s:
        lines.append(f"| 32 sessions, gpt2-124M real-layout directory, F32, 2 threads: batched vs unbatched aggregate decode "
                     f"(`concurrent.batched_vs_unbatched`) | {num(s.get('batched32_real_tokens_per_s'), '{:.0f}')} tok/s "
                     f"| unbatched {num(s.get('unbatched32_real_tokens_per_s'), '{:.0f}')} tok/s "
                     f"| {r('batched32_real_vs_unbatched')} (CPU time: {r('batched32_real_vs_unbatched_cpu')}) | ≥ 6× |")
    if "batched32_real_vs_llama_batched_bench" in s:
        lines.append(f"| the same batched aggregate vs llama.cpp `llama-batched-bench -npl 32` (F32 GGUF of the same weights, "
                     f"S_TG) | {num(s.get('batched32_real_tokens_per_s'), '{:.0f}')} tok/s "
                     f"| llama.cpp {num(s.get('llama_batched_bench_tokens_per_s'), '{:.1f}')} tok/s "
                     f"| {r('batched32_real_vs_llama_batched_bench')} | ≥ 1.2× |")
    return "\n".join(lines)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d, readme, note = args[0], None, ""
    if "--readme" in args:
        readme = args[args.index("--readme") + 1]
    if "--note" in args:
        note = args[args.index("--note") + 1]
    s, per = summarize(d)
    print(json.dumps(s, indent=2))
    t = table(s, per)
    print()
    print(t)
    if readme:
        begin, end = "<!-- issue37-table:begin -->", "<!-- issue37-table:end -->"
        text = open(readme).read()
        i, j = text.find(begin), text.find(end)
        if i < 0 or j < i:
            sys.exit(f"{readme}: no {begin} … {end} markers")
        body = "\n" + (note + "\n\n" if note else "") + t + "\n"
        open(readme, "w").write(text[:i + len(begin)] + body + text[j:])


if __name__ == "__main__":
    main()
