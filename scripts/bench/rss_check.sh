#!/usr/bin/env bash
# rss_check.sh: peak resident memory of `inferscope generate` on a stories15M-shaped llama2.c .bin,
# for the full binary (web app included) and the engine-only build (-tags engineonly), against the
# weight bytes and llama2.c's run.c on the same file, interleaved.
#
#   scripts/bench/rss_check.sh [ROUNDS] [RUN_C_BINARY]
#
# Peak RSS is VmHWM as /usr/bin/time -v reports it ("Maximum resident set size") for the real
# CLI: 200 greedy tokens from "Once" on random stories15M weights (`bench --write-llama2c`), and
# run.c on the same .bin and tokenizer.bin for 216 steps when RUN_C_BINARY is given (build it
# outside the repository: gcc -Ofast -march=native -fopenmp -o run run.c -lm). Prints each round,
# then the medians and ranges, as KiB and as ratios to the weight bytes (4 × parameters).
set -euo pipefail
rounds=${1:-5}
runc=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/inferscope" ./cmd/inferscope
go build -tags engineonly -o "$work/inferscope-engine" ./cmd/inferscope
"$work/inferscope" bench --write-llama2c "$work/s15.bin" >/dev/null
params=$("$work/inferscope" bench --shape stories15M --prompt-tokens 1 --gen-tokens 1 --probe-bytes 0 |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["weights_bytes"])')
hwm() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident/{print $6}'; }
echo "weights: $params bytes; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/rows"
for r in $(seq "$rounds"); do
	e=$(cd "$work" && hwm ./inferscope generate --model s15.bin --tokenizer tokenizer.bin --prompt Once --max-tokens 200 --temperature 0)
	l=$(cd "$work" && hwm ./inferscope-engine generate --model s15.bin --tokenizer tokenizer.bin --prompt Once --max-tokens 200 --temperature 0)
	c=0
	if [ -n "$runc" ]; then
		c=$(cd "$work" && OMP_NUM_THREADS=2 hwm "$runc" s15.bin -n 216 -t 0 -i Once)
	fi
	echo "$e $c $l" >>"$work/rows"
	echo "round $r: inferscope $e KiB, engine-only $l KiB, run.c $c KiB, load $(cut -d' ' -f1 /proc/loadavg)"
done
python3 - "$work/rows" "$params" <<'PY'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
w = int(sys.argv[2])
for i, name in enumerate(["inferscope generate", "run.c", "inferscope generate, engine-only build"]):
    v = [r[i] for r in rows if r[i]]
    if not v:
        continue
    m = statistics.median(v)
    print(f"{name}: peak RSS median {m:.0f} KiB ({min(v)}–{max(v)}), {m*1024/w:.3f}× the weight bytes")
if all(r[1] for r in rows):
    q = [r[0] / r[1] for r in rows]
    print(f"inferscope / run.c: median {statistics.median(q):.3f} ({min(q):.3f}–{max(q):.3f})")
PY
