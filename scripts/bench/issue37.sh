#!/usr/bin/env bash
# issue37.sh: every issue-37 figure in interleaved rounds, one table (the README's, regenerated).
#
#   scripts/bench/issue37.sh [ROUNDS] [--readme]        (default 3 rounds)
#
# Each round runs, one after another (all on random weights; nothing is downloaded):
#   lab:      GOMAXPROCS=2 inferscope bench --shape '' --model default --gen-tokens 250
#             --probe-bytes 0 --rounds 5          (lab_run: the server's side of a thinned 250-token
#             Run against the bare loop, alternating, and the collector's share of its CPU)
#   depth:    GOMAXPROCS=2 inferscope bench --shape smollm2-135M --depth 2000 --prompt-tokens 16
#             --gen-tokens 16 --rounds 15 --decode-only (decode at depth 2000 vs the read floor)
#   depth vs llama.cpp: GOMAXPROCS=2 inferscope bench --shape '' --model SMOLLM2_DIR --depth 2000
#             --prompt-tokens 16 --gen-tokens 16 --rounds 3 --decode-only --probe-bytes 0, with
#             --kv-cache f16 (llama.cpp's default cache type, which its llama-bench cannot set to f32)
#             and f32 (ours), against llama-bench -m smollm2-f32.gguf -p 0 -n 16 -d 2000 -t 2 -r 3
#             (the same weights: the GGUF made from SMOLLM2_DIR)
#   bound:    for THREADS in 1 2, for gpt2-124M and smollm2-135M, synthetic ([out][in], --shape) and
#             real (the checkpoint's layout: a `bench --write-hf` directory; GPT-2's Conv1D [in][out]):
#             GOMAXPROCS=THREADS inferscope bench ... --prompt-tokens 16 --gen-tokens 32 --paired
#             --decode-only --probe-bytes 268435456   (F32 and BF16 steps each beside a probe run:
#             decode_vs_bandwidth_bound, bf16_vs_bandwidth_bound)
#   batched:  GOMAXPROCS=2 inferscope bench --shape '' --model GPT2_DIR --concurrent 32
#             --prompt-tokens 16 --gen-tokens 16 --probe-bytes 0 --decode-only (F32, real layout)
#   peer:     llama-batched-bench -m gpt2-f32.gguf -c 2048 -npp 16 -ntg 16 -npl 1,32 -t 2 -tb 2
#             --output-format jsonl   (the GGUF made from GPT2_DIR by hf_to_gguf.py: the same
#             weights at the same precision; speed_tg at pl 32 is its aggregate decode rate)
# then scripts/bench/issue37_table.py prints the figures as JSON (named fields, medians over the
# rounds) and the table; --readme writes the table between README.md's issue37-table markers.
# ISSUE37_DIR=DIR keeps the model directories and the GGUF between runs (made once). Prefill vs
# llama-bench pp512 is gguf_peers.sh's / the peers README's, not here. On a loaded machine
# llama.cpp's OpenMP threads spin at barriers and its 2-thread decode collapses (see
# ../shared/peers/llama.cpp/README.md): compare on a quiet machine, or say the load (printed).
set -euo pipefail
rounds=${1:-3}
readme=${2:-}
peer=${LLAMA_CPP:-../shared/peers/llama.cpp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep=${ISSUE37_DIR:-$work/models}
out=${ISSUE37_OUT:-$work/out}
mkdir -p "$keep" "$out"
bin="$work/inferscope"
go build -o "$bin" ./cmd/inferscope
[ -d "$keep/gpt2" ] || "$bin" bench --write-hf "$keep/gpt2" --shape gpt2-124M >/dev/null
[ -d "$keep/smollm2" ] || "$bin" bench --write-hf "$keep/smollm2" --shape smollm2-135M >/dev/null
[ -f "$keep/gpt2-f32.gguf" ] || /usr/bin/python3 "$peer/hf_to_gguf.py" "$keep/gpt2" "$keep/gpt2-f32.gguf" f32 >/dev/null
[ -f "$keep/smollm2-f32.gguf" ] || /usr/bin/python3 "$peer/hf_to_gguf.py" "$keep/smollm2" "$keep/smollm2-f32.gguf" f32 >/dev/null
echo "$rounds rounds, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(default)}, load before: $(cat /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	d="$out/r$r"
	mkdir -p "$d"
	cut -d' ' -f1 /proc/loadavg >"$d/load.txt"
	GOMAXPROCS=2 "$bin" bench --shape '' --model default --gen-tokens 250 --probe-bytes 0 --rounds 5 >"$d/lab.json"
	GOMAXPROCS=2 "$bin" bench --shape smollm2-135M --depth 2000 --prompt-tokens 16 --gen-tokens 16 --rounds 15 \
		--decode-only >"$d/depth.json"
	for kv in f16 f32; do
		GOMAXPROCS=2 "$bin" bench --shape '' --model "$keep/smollm2" --depth 2000 --prompt-tokens 16 --gen-tokens 16 \
			--rounds 3 --decode-only --probe-bytes 0 --kv-cache $kv >"$d/depth-real-$kv.json"
	done
	"$peer/bin/llama-bench" -m "$keep/smollm2-f32.gguf" -p 0 -n 16 -d 2000 -t 2 -r 3 -o jsonl 2>/dev/null \
		>"$d/llama-depth.jsonl"
	for t in 1 2; do
		for m in gpt2-124M:gpt2 smollm2-135M:smollm2; do
			shape=${m%%:*} dir=${m##*:}
			common=(--prompt-tokens 16 --gen-tokens 32 --paired --decode-only --probe-bytes 268435456)
			GOMAXPROCS=$t "$bin" bench --shape "$shape" "${common[@]}" >"$d/bw-$shape-synthetic-${t}t.json"
			GOMAXPROCS=$t "$bin" bench --shape '' --model "$keep/$dir" "${common[@]}" >"$d/bw-$shape-real-${t}t.json"
		done
	done
	GOMAXPROCS=2 "$bin" bench --shape '' --model "$keep/gpt2" --concurrent 32 --prompt-tokens 16 --gen-tokens 16 \
		--probe-bytes 0 --decode-only >"$d/batched.json"
	"$peer/bin/llama-batched-bench" -m "$keep/gpt2-f32.gguf" -c 2048 -npp 16 -ntg 16 -npl 1,32 -t 2 -tb 2 \
		--output-format jsonl 2>/dev/null >"$d/llama-batched.jsonl"
	cut -d' ' -f1 /proc/loadavg >>"$d/load.txt"
	echo "round $r done, load $(tr '\n' ' ' <"$d/load.txt")"
done
loads=$(cat "$out"/r*/load.txt | tr '\n' ' ')
# the benchmarks themselves keep every CPU busy (load ≈ nproc at a round's end): more than one
# runnable job beyond that is another program's
busy=$(echo "$loads" | awk -v n="$(nproc)" '{for (i = 1; i <= NF; i++) if ($i > n + 1) b = 1} END {print b + 0}')
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') (family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), L3 $(lscpu | awk -F: '/L3 cache/ {gsub(/^ +/, "", $2); print $2}'))"
note="Generated by \`scripts/bench/issue37.sh $rounds\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs of $cpu, load average (1 min) before/after each round: $loads"
if [ "$busy" = 1 ]; then
	note="**Measured under load** (other jobs on the machine; wall-clock ratios, llama.cpp's above all, are not a quiet machine's). $note"
fi
if [ "$readme" = "--readme" ]; then
	python3 scripts/bench/issue37_table.py "$out" --readme README.md --note "$note"
else
	python3 scripts/bench/issue37_table.py "$out" --note "$note"
fi
