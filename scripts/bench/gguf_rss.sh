#!/usr/bin/env bash
# gguf_rss.sh: peak resident memory of the engine-only build's GGUF decode, per file type, against
# the file size; optionally against the same build of another revision, interleaved.
#
#   GGUF_DIR=DIR scripts/bench/gguf_rss.sh [ROUNDS] [REV]        (default 5 rounds)
#
# DIR holds gpt2-{q8_0,q4_k,q4_k_s,q4_k_m}.gguf as scripts/bench/gguf_peers.sh makes them
# (GGUF_DIR=DIR scripts/bench/gguf_peers.sh 1 2 makes and keeps them). Each round, for each file:
# GOMAXPROCS=2 inferscope-engine bench --shape '' --model FILE --prompt-tokens 1 --gen-tokens 64
# --probe-bytes 0 --decode-only (gguf_peers.sh's memory run); peak RSS is the run's
# machine.peak_rss_bytes (VmHWM). With REV (a git revision) the engine-only build of REV runs
# right after, on the same file. Prints every run, then medians: MiB, ÷ file, MiB over the file.
set -euo pipefail
rounds=${1:-5}
rev=${2:-}
gg=${GGUF_DIR:?set GGUF_DIR to a directory holding the gpt2-*.gguf files (gguf_peers.sh makes them)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -tags engineonly -o "$work/new" ./cmd/inferscope
if [ -n "$rev" ]; then
	mkdir "$work/src"
	git archive "$rev" | tar -x -C "$work/src"
	(cd "$work/src" && go build -tags engineonly -o "$work/old" ./cmd/inferscope)
fi
python3 - "$work" "$gg" "$rounds" "$rev" <<'PY'
import json, os, statistics, subprocess, sys
work, gg, rounds, rev = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
env = dict(os.environ, GOMAXPROCS="2")
builds = ["new"] + (["old"] if rev else [])
rows = {}
print(f"load before: {open('/proc/loadavg').read().strip()}")
for r in range(1, rounds + 1):
    for t in ["q8_0", "q4_k", "q4_k_s", "q4_k_m"]:
        f = os.path.join(gg, f"gpt2-{t}.gguf")
        size = os.path.getsize(f)
        for b in builds:
            out = subprocess.run([os.path.join(work, b), "bench", "--shape", "", "--model", f, "--prompt-tokens", "1",
                                  "--gen-tokens", "64", "--probe-bytes", "0", "--decode-only"],
                                 env=env, check=True, capture_output=True, text=True).stdout
            rss = json.loads(out)["machine"]["peak_rss_bytes"]
            rows.setdefault((t, b), []).append((rss, size))
            print(f"round {r} {t:7s} {b}: peak RSS {rss/2**20:.1f} MiB = {rss/size:.3f}× file, {(rss-size)/2**20:.1f} MiB over", flush=True)
print(f"load after: {open('/proc/loadavg').read().strip()}")
label = {"new": "this tree", "old": rev}
print("| weights | build | peak RSS MiB | ÷ file | MiB over the file |")
print("| --- | --- | --- | --- | --- |")
for (t, b), v in rows.items():
    m = statistics.median(x[0] for x in v)
    size = v[0][1]
    print(f"| {t.upper()} | {label[b]} | {m/2**20:.1f} | {m/size:.3f} | {(m-size)/2**20:.1f} |")
PY
