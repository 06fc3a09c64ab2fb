#!/usr/bin/env bash
# bandwidth_check.sh: the bench command's read-bandwidth probe against independent tools, interleaved.
#
#   scripts/bench/bandwidth_check.sh [ROUNDS] [BYTES]
#
# Each round runs, one after another, on 2 threads over BYTES (default 256 MiB, far above the
# last-level cache): `inferscope bench --shape ""` (the probe: vector loads, best and median of 7
# runs), the same built with -tags purego (plain Go loop), likwid-bench's load_avx512 and load_avx
# kernels (Debian `likwid`; their figure is the mean over their iterations) and sysbench's
# sequential memory read (Debian `sysbench`), when installed. Prints one line per round, then the
# median and range of each column and the load average before and after.
set -euo pipefail
rounds=${1:-7}
bytes=${2:-268435456}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/inferscope" ./cmd/inferscope
go build -tags purego -o "$work/inferscope-go" ./cmd/inferscope
mb=$((bytes >> 20))
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	{
		"$work/inferscope" bench --shape "" --probe-bytes "$bytes" | python3 -c 'import json,sys; m=json.load(sys.stdin)["machine"]; print("probe-"+m["read_probe"], m["read_bandwidth_GB_per_s"], m["read_bandwidth_median_GB_per_s"])'
		"$work/inferscope-go" bench --shape "" --probe-bytes "$bytes" | python3 -c 'import json,sys; m=json.load(sys.stdin)["machine"]; print("probe-"+m["read_probe"], m["read_bandwidth_GB_per_s"], m["read_bandwidth_median_GB_per_s"])'
		if command -v likwid-bench >/dev/null; then
			for k in load_avx512 load_avx; do
				v=$(likwid-bench -t "$k" -W "N:${mb}MB:2" -i 10 2>/dev/null | awk '/^MByte\/s:/{print $2/1000}')
				echo "likwid-$k $v $v"
			done
		fi
		if command -v sysbench >/dev/null; then
			v=$(sysbench memory --threads=2 --memory-block-size="$((mb / 2))M" --memory-total-size="$((mb * 10))M" \
				--memory-oper=read --memory-access-mode=seq run 2>/dev/null | awk '/MiB\/sec/{gsub(/[(]/,"",$4); print $4*1.048576/1000}')
			echo "sysbench-read $v $v"
		fi
	} >"$work/round.$r"
	echo "round $r: $(tr '\n' ' ' <"$work/round.$r")  load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$rounds" <<'PY'
import os, statistics, sys, collections
work, rounds = sys.argv[1], int(sys.argv[2])
best, med = collections.defaultdict(list), collections.defaultdict(list)
for r in range(1, rounds + 1):
    for line in open(os.path.join(work, f"round.{r}")):
        f = line.split()
        if len(f) == 3 and f[1] and f[1] != "0":
            best[f[0]].append(float(f[1])); med[f[0]].append(float(f[2]))
print(f"GB/s over {rounds} rounds (probe: best | median of its 7 runs; tools: their own mean):")
for k in best:
    b, m = best[k], med[k]
    print(f"  {k:20s} median {statistics.median(b):6.2f} (min {min(b):6.2f}, max {max(b):6.2f})"
          + (f" | median-run {statistics.median(m):6.2f} (min {min(m):6.2f}, max {max(m):6.2f})" if m != b else ""))
PY
