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
# machine.peak_rss_bytes (VmHWM); the same again with --kv-cache f16 (llama.cpp's default cache
# type); and llama.cpp's llama-bench -p 0 -n 64 -t 2 -r 1 on the file (peak RSS from
# /usr/bin/time -v), the peer's memory for the same decode. A run whose file was read into a private
# copy (no read lease: gguf_weights_in_place false) is labelled so. With REV (a git revision) the
# engine-only build of REV runs right after, on the same file. Prints every run, then medians:
# MiB, ÷ file, MiB over the file.
set -euo pipefail
peer=${LLAMA_CPP:-../shared/peers/llama.cpp}
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
python3 - "$work" "$gg" "$rounds" "$rev" "$peer" <<'PY'
import json, os, re, statistics, subprocess, sys
work, gg, rounds, rev, peer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
env = dict(os.environ, GOMAXPROCS="2")
builds = ["new", "new-f16"] + (["old"] if rev else []) + (["llama.cpp"] if os.path.exists(os.path.join(peer, "bin/llama-bench")) else [])
rows = {}
print(f"load before: {open('/proc/loadavg').read().strip()}")
for r in range(1, rounds + 1):
    for t in ["q8_0", "q4_k", "q4_k_s", "q4_k_m"]:
        f = os.path.join(gg, f"gpt2-{t}.gguf")
        size = os.path.getsize(f)
        for b in builds:
            if b == "llama.cpp":
                err = subprocess.run(["/usr/bin/time", "-v", os.path.join(peer, "bin/llama-bench"), "-m", f, "-p", "0", "-n", "64",
                                      "-t", "2", "-r", "1"], env=env, check=True, capture_output=True, text=True).stderr
                rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) * 1024
            else:
                kv = ["--kv-cache", "f16"] if b == "new-f16" else []
                out = subprocess.run([os.path.join(work, b.removesuffix("-f16")), "bench", "--shape", "", "--model", f, "--prompt-tokens", "1",
                                      "--gen-tokens", "64", "--probe-bytes", "0", "--decode-only"] + kv,
                                     env=env, check=True, capture_output=True, text=True).stdout
                mach = json.loads(out)["machine"]
                rss = mach["peak_rss_bytes"]
                if not mach.get("gguf_weights_in_place", False):
                    b += " (private copy)"
            rows.setdefault((t, b), []).append((rss, size))
            print(f"round {r} {t:7s} {b}: peak RSS {rss/2**20:.1f} MiB = {rss/size:.3f}× file, {(rss-size)/2**20:.1f} MiB over", flush=True)
print(f"load after: {open('/proc/loadavg').read().strip()}")
label = {"new": "this tree", "new-f16": "this tree, --kv-cache f16", "old": rev, "llama.cpp": "llama.cpp llama-bench (f16 cache)"}
label.update({k + " (private copy)": v + ", file copied (no read lease)" for k, v in list(label.items())})
print("| weights | build | peak RSS MiB | ÷ file | MiB over the file |")
print("| --- | --- | --- | --- | --- |")
for (t, b), v in rows.items():
    m = statistics.median(x[0] for x in v)
    size = v[0][1]
    print(f"| {t.upper()} | {label[b]} | {m/2**20:.1f} | {m/size:.3f} | {(m-size)/2**20:.1f} |")
PY
