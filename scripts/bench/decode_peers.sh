#!/usr/bin/env bash
# decode_peers.sh: decode speed against its peers, interleaved rounds in one run, medians.
#
#   scripts/bench/decode_peers.sh [ROUNDS] [RUN_C_BINARY]
#
# Each round runs, one after another: gpt2-124M F32 decode (with the streaming-read
# probe just before and after it, then --paired: 48 rounds of probe run, F32 step and
# BF16 step back to back, whose per-round ratios hold on a loaded machine), the same
# model in BF16, the stories15M shape on 1
# and 2 threads (GOMAXPROCS), and — when RUN_C_BINARY is given — llama2.c's run.c on
# the same .bin with OMP_NUM_THREADS=1 and 2 (build it outside the repository:
# gcc -Ofast -march=native -fopenmp -o run run.c -lm). Prints one line per round and
# the medians of the per-round figures and ratios, with the load average before and
# after. Random weights of the named shapes (nothing is downloaded).
set -euo pipefail
rounds=${1:-5}
runc=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/inferscope" ./cmd/inferscope
bin="$work/inferscope"
mkdir -p "$work/l2c"
"$bin" bench --write-llama2c "$work/l2c/s15.bin" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	"$bin" bench --shape gpt2-124M --prompt-tokens 16 --gen-tokens 48 --probe-bytes 268435456 --paired >"$work/f32.$r.json"
	"$bin" bench --shape gpt2-124M --weights bf16 --prompt-tokens 16 --gen-tokens 48 --probe-bytes 0 >"$work/bf16.$r.json"
	for t in 1 2; do
		GOMAXPROCS=$t "$bin" bench --shape "" --model "$work/l2c/s15.bin" --prompt-tokens 16 --gen-tokens 200 --probe-bytes 0 >"$work/s15.$t.$r.json"
		if [ -n "$runc" ]; then
			(cd "$work/l2c" && OMP_NUM_THREADS=$t "$runc" s15.bin -n 216 -t 0 -i "Once" 2>&1 | grep 'achieved' | awk '{print $3}') >"$work/runc.$t.$r.txt"
		fi
	done
	echo "round $r done, load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$rounds" <<'PY'
import json, os, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def res(name):
    return json.load(open(os.path.join(work, name)))["results"][0]
def paired(name):
    return json.load(open(os.path.join(work, name)))["paired"][0]
rows = []
for r in range(1, rounds + 1):
    f, b, p = res(f"f32.{r}.json"), res(f"bf16.{r}.json"), paired(f"f32.{r}.json")
    row = {
        "paired: gpt2 f32 / bound (median of 48 pairs)": p["decode_vs_bandwidth_bound"]["median"],
        "paired: probe GB/s": p["probe_median_GB_per_s"],
        "paired: decode GB/s": p["decode_median_GB_per_s"],
        "paired: gpt2 bf16 / f32 (median of 48 pairs)": p["bf16_speedup_vs_f32"]["median"],
        "gpt2 f32 tok/s (median step)": f["decode_median_tokens_per_s"],
        "gpt2 f32 bound tok/s (median probe)": f["bandwidth_bound_tokens_per_s"],
        "gpt2 f32 / bound": f["decode_vs_bandwidth_bound"],
        "gpt2 f32 / bound (mean decode vs best probe)": f["decode_vs_best_bandwidth_bound"],
        "gpt2 bf16 tok/s (median step)": b["decode_median_tokens_per_s"],
        "gpt2 bf16 / f32": b["decode_median_tokens_per_s"] / f["decode_median_tokens_per_s"],
    }
    for t in (1, 2):
        s = res(f"s15.{t}.{r}.json")
        row[f"stories15M {t}T tok/s"] = s["decode_tokens_per_s"]
        p = os.path.join(work, f"runc.{t}.{r}.txt")
        if os.path.exists(p) and open(p).read().strip():
            c = float(open(p).read())
            row[f"run.c {t}T tok/s"] = c
            row[f"stories15M {t}T / run.c"] = s["decode_tokens_per_s"] / c
    rows.append(row)
    print(f"round {r}: " + "; ".join(f"{k} {v:.3g}" for k, v in row.items()))
print("medians over", rounds, "rounds:")
for k in rows[0]:
    vals = [row[k] for row in rows if k in row]
    print(f"  {k}: {statistics.median(vals):.3g}  (min {min(vals):.3g}, max {max(vals):.3g})")
PY
