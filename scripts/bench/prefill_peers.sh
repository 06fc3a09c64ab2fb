#!/usr/bin/env bash
# prefill_peers.sh: prefilling a 512-token prompt on gpt2-124M (random weights), F32 and BF16, against
# llama.cpp's `llama-bench -p 512` on the same GGUF files, in interleaved rounds (issue 37's prefill
# figures: ours BF16 ≥ 1.0× llama.cpp BF16, ours F32 ≥ 1.3× llama.cpp F32).
#
#   scripts/bench/prefill_peers.sh [ROUNDS] [THREADS]        (default 3 rounds, 2 threads)
#
# Each round, for F32 then BF16:
#   GOMAXPROCS=THREADS inferscope bench --shape '' --model gpt2-W.gguf --prompt-tokens 512 --gen-tokens 1
#       --probe-bytes 0 --decode-only                        (prefill_tokens_per_s)
#   llama-bench -m gpt2-W.gguf -p 512 -n 0 -t THREADS -r 1 -o csv   (avg_ts)
# and at the end the medians and their ratios. The files are made with ../shared/peers/llama.cpp's
# hf_to_gguf.py from a `bench --write-hf` directory (GGUF_DIR=DIR keeps them, as gguf_peers.sh does).
set -euo pipefail
rounds=${1:-3}
threads=${2:-2}
peer=${LLAMA_CPP:-../shared/peers/llama.cpp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gg=${GGUF_DIR:-$work}
mkdir -p "$gg"
go build -o "$work/inferscope" ./cmd/inferscope
for w in f32 bf16; do
	if [ ! -f "$gg/gpt2-$w.gguf" ]; then
		[ -d "$work/hf" ] || "$work/inferscope" bench --write-hf "$work/hf" --shape gpt2-124M >/dev/null
		/usr/bin/python3 "$peer/hf_to_gguf.py" "$work/hf" "$gg/gpt2-$w.gguf" "$w" >/dev/null
	fi
done
echo "$rounds rounds, $threads threads, load before: $(cat /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	for w in f32 bf16; do
		m="$gg/gpt2-$w.gguf"
		ours=$(GOMAXPROCS=$threads "$work/inferscope" bench --shape '' --model "$m" --prompt-tokens 512 --gen-tokens 1 \
			--probe-bytes 0 --decode-only | sed -n 's/.*"prefill_tokens_per_s": *\([0-9.]*\).*/\1/p' | head -1)
		peer_ts=$("$peer/bin/llama-bench" -m "$m" -p 512 -n 0 -t "$threads" -r 1 -o csv 2>/dev/null | tail -1 |
			awk -F, '{gsub(/"/, "", $(NF-1)); print $(NF-1)}')
		echo "$r $w $ours $peer_ts $(cut -d' ' -f1 /proc/loadavg)" >>"$work/rows"
		echo "round $r $w: inferscope $ours tok/s, llama.cpp $peer_ts tok/s"
	done
done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for w in ("f32", "bf16"):
    rs = [r for r in rows if r[1] == w]
    ours = statistics.median(float(r[2]) for r in rs)
    peer = statistics.median(float(r[3]) for r in rs)
    ratios = sorted(float(r[2]) / float(r[3]) for r in rs)
    print(f"{w}: inferscope {ours:.1f} tok/s, llama.cpp {peer:.1f} tok/s, ratio median {statistics.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f}, {len(rs)} rounds), load {' '.join(r[4] for r in rs)}")
PY
