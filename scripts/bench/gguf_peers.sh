#!/usr/bin/env bash
# gguf_peers.sh: quantized GGUF decode against llama.cpp on the same files, its peak memory,
# and batched decode, interleaved rounds in one run, medians.
#
#   scripts/bench/gguf_peers.sh [ROUNDS] [THREADS]        (defaults 3 and 2)
#
# GGUF files of gpt2-124M with random weights (nothing is downloaded): `bench --write-hf`, then
# ../shared/peers/llama.cpp's hf_to_gguf.py (F32) and llama-quantize: Q8_0, Q4_K (--pure: every
# matrix Q4_K, the embedding/head included), Q4_K_S (mostly Q4_K, some Q5_K, head Q6_K) and
# Q4_K_M (Q4_K and Q6_K about half each by bytes). GGUF_DIR=DIR keeps them there between runs
# (made once); otherwise a temporary directory is used and removed.
#
# Each round, for each file, one after another:
#   ours:      GOMAXPROCS=THREADS inferscope bench --shape '' --model FILE --prompt-tokens 1
#              --gen-tokens 64 --probe-bytes 0 --decode-only
#              (decode_tokens_per_s: wall clock; decode_cpu_tokens_per_s: per CPU-second of
#              the process, all threads, over the 64 timed steps)
#   llama.cpp: llama-bench -m FILE -p 0 -n 64 -t THREADS -r 3 -o json (avg_ts: wall clock),
#              and the same with -n 8: the two runs' CPU-time difference (getrusage of the child)
#              over the 3·56 extra tokens gives its CPU-time rate
#   memory:    the engine-only build's bench of the same decode: peak RSS (VmHWM) ÷ file size
#              (llama-bench's peak RSS of its -n 64 run beside it, from wait4)
# and once per round on Q8_0: --concurrent 32 (32 sessions, batched through the server's
# scheduler against 32 unbatched, aggregate tokens/s; --prompt-tokens 16 --gen-tokens 32).
# Prints every round and the medians, with the load average before and after each round. On a
# loaded machine compare the CPU-time ratios; on a quiet one the wall-clock ones. With 2 threads
# on a loaded machine llama.cpp's OpenMP threads spin at every barrier while the other one is
# descheduled, and its decode collapses (1.7 tok/s seen at load 15–20 instead of ~50):
# OMP_WAIT_POLICY=passive (inherited by llama-bench) avoids that but costs it about half its speed
# on free cores (../shared/peers/llama.cpp/README.md); say which was used.
set -euo pipefail
rounds=${1:-3}
threads=${2:-2}
peer=${LLAMA_CPP:-../shared/peers/llama.cpp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gg=${GGUF_DIR:-$work}
mkdir -p "$gg"
go build -o "$work/inferscope" ./cmd/inferscope
go build -tags engineonly -o "$work/inferscope-engine" ./cmd/inferscope
if [ ! -f "$gg/gpt2-q4_k_m.gguf" ]; then
	"$work/inferscope" bench --write-hf "$work/hf" --shape gpt2-124M >/dev/null
	/usr/bin/python3 "$peer/hf_to_gguf.py" "$work/hf" "$gg/gpt2-f32.gguf" f32 >/dev/null
	q() { "$peer/bin/llama-quantize" "$@" >/dev/null 2>&1; }
	q "$gg/gpt2-f32.gguf" "$gg/gpt2-q8_0.gguf" Q8_0 2
	q --pure "$gg/gpt2-f32.gguf" "$gg/gpt2-q4_k.gguf" Q4_K 2
	q "$gg/gpt2-f32.gguf" "$gg/gpt2-q4_k_s.gguf" Q4_K_S 2
	q "$gg/gpt2-f32.gguf" "$gg/gpt2-q4_k_m.gguf" Q4_K_M 2
	rm -rf "$work/hf"
fi
python3 - "$work" "$gg" "$peer" "$rounds" "$threads" <<'PY'
import json, os, statistics, subprocess, sys
work, gg, peer, rounds, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
types = ["q8_0", "q4_k", "q4_k_s", "q4_k_m"]
env = dict(os.environ, GOMAXPROCS=threads)

def load():
    return open("/proc/loadavg").read().split()[0]

def ours(binary, f, extra=()):
    out = subprocess.run([binary, "bench", "--shape", "", "--model", f, "--prompt-tokens", "1", "--gen-tokens", "64",
                          "--probe-bytes", "0", "--decode-only", *extra], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)

def llama(f, n):
    """llama-bench's avg_ts, its CPU seconds and its peak RSS in bytes."""
    p = subprocess.Popen([os.path.join(peer, "bin", "llama-bench"), "-m", f, "-p", "0", "-n", str(n), "-t", threads, "-r", "3", "-o", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"llama-bench failed on {f} (status {status})")
    return json.loads(out)[0]["avg_ts"], ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024

rows = {t: [] for t in types}
batched = []
print(f"{threads} threads, {rounds} rounds, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(default)')}; "
      f"load before: {open('/proc/loadavg').read().strip()}", flush=True)
for r in range(1, rounds + 1):
    l0 = load()
    for t in types:
        f = os.path.join(gg, f"gpt2-{t}.gguf")
        o = ours(os.path.join(work, "inferscope"), f)["results"][0]
        lw, c64, lrss = llama(f, 64)
        _, c8, _ = llama(f, 8)
        lc = 3 * 56 / (c64 - c8) if c64 > c8 else float("nan")
        rss = ours(os.path.join(work, "inferscope-engine"), f)["machine"]["peak_rss_bytes"]
        row = dict(ours_wall=o["decode_tokens_per_s"], ours_cpu=o["decode_cpu_tokens_per_s"], llama_wall=lw, llama_cpu=lc,
                   rss=rss, llama_rss=lrss, size=os.path.getsize(f))
        rows[t].append(row)
        print(f"round {r} {t:7s} ours {row['ours_wall']:6.1f} tok/s ({row['ours_cpu']:6.1f} per CPU-s)  llama.cpp {lw:6.1f} ({lc:6.1f})"
              f"  wall {row['ours_wall']/lw:.2f}× cpu {row['ours_cpu']/lc:.2f}×  peak RSS {rss/2**20:.1f} MiB = {rss/row['size']:.3f}× file"
              f" (llama-bench {lrss/row['size']:.2f}×)", flush=True)
    c = ours(os.path.join(work, "inferscope"), os.path.join(gg, "gpt2-q8_0.gguf"),
             ["--concurrent", "32", "--prompt-tokens", "16", "--gen-tokens", "32"])["concurrent"][0]
    batched.append(c)
    print(f"round {r} q8_0 32 sessions: batched {c['aggregate_decode_tokens_per_s_batched']:.1f} tok/s, unbatched "
          f"{c['aggregate_decode_tokens_per_s_unbatched']:.1f}: {c['batched_vs_unbatched']:.2f}× (per CPU-s {c['decode_tokens_per_cpu_s_batched']:.1f}"
          f" and {c['decode_tokens_per_cpu_s_unbatched']:.1f}: {c['batched_vs_unbatched_cpu']:.2f}×); load {l0} → {load()}", flush=True)
print(f"load after: {open('/proc/loadavg').read().strip()}")
med = statistics.median
print(f"medians over {rounds} rounds, {threads} threads (ratios: median of the rounds' ratios):")
print("| weights | file | inferscope tok/s (per CPU-s) | llama.cpp tok/s (per CPU-s) | ratio wall | ratio CPU | peak RSS ÷ file (llama-bench's) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for t in types:
    v = rows[t]
    m = lambda k: med([x[k] for x in v])
    print(f"| {t.upper()} | {v[0]['size']/1e6:.0f} MB | {m('ours_wall'):.1f} ({m('ours_cpu'):.1f}) | {m('llama_wall'):.1f} ({m('llama_cpu'):.1f}) "
          f"| {med([x['ours_wall']/x['llama_wall'] for x in v]):.2f} | {med([x['ours_cpu']/x['llama_cpu'] for x in v]):.2f} "
          f"| {med([x['rss']/x['size'] for x in v]):.3f} ({med([x['llama_rss']/x['size'] for x in v]):.2f}) |")
print(f"Q8_0, 32 sessions batched vs unbatched: {med([c['batched_vs_unbatched'] for c in batched]):.2f}× wall clock, "
      f"{med([c['batched_vs_unbatched_cpu'] for c in batched]):.2f}× CPU time "
      f"(batched {med([c['aggregate_decode_tokens_per_s_batched'] for c in batched]):.1f} tok/s, unbatched "
      f"{med([c['aggregate_decode_tokens_per_s_unbatched'] for c in batched]):.1f})")
PY
