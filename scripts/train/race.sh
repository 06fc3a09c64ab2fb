#!/usr/bin/env bash
# race.sh — train several candidate shapes side by side on one GPU for the same wall-clock
# budget and keep the best: the size choice for the default model, made by measurement.
#
#   bash scripts/train/race.sh CORPUS_DIR OUT_DIR MINUTES
#
# Each candidate is train.py --device cuda --keep-best (weights of the lowest validation loss
# among evaluations where "The capital of France is" → " Paris"). Writes OUT_DIR/<name>/ per
# candidate, OUT_DIR/race.json (every candidate's best and its throughput) and prints the ranking.
set -u
corpus=$1 out=$2 minutes=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# name dim layers heads kv_heads hidden dropout lr
cands=(
  "d192-L4-drop0   192 4 6 2 512 0.0 0.003"
  "d192-L4-drop0.1 192 4 6 2 512 0.1 0.003"
  "d256-L4-drop0.1 256 4 8 4 704 0.1 0.002"
  "d256-L6-drop0.1 256 6 8 4 704 0.1 0.002"
  "d256-L6-drop0.2 256 6 8 4 704 0.2 0.002"
  "d320-L4-drop0.1 320 4 8 4 864 0.1 0.002"
)
pids=()
for c in "${cands[@]}"; do
  read -r name d L h kv f drop lr <<<"$c"
  python3 "$here/train.py" --device "${RACE_DEVICE:-cuda}" --keep-best --corpus "$corpus" --out "$out/$name" --minutes "$minutes" \
    --dim "$d" --layers "$L" --heads "$h" --kv-heads "$kv" --hidden "$f" --dropout "$drop" --lr "$lr" \
    --batch 64 --eval-seconds 20 --facts-frac 0.06 >"$out/$name.log" 2>&1 &
  pids+=($!)
done
# Fail fast: every candidate must have evaluated once within 3 minutes.
for i in $(seq 1 36); do
  sleep 5
  n=$(grep -l '"val_loss"' "$out"/*.log 2>/dev/null | wc -l)
  dead=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || dead=$((dead + 1)); done
  if [ "$dead" -gt 0 ]; then echo "a candidate exited early:"; tail -n 20 "$out"/*.log; kill "${pids[@]}" 2>/dev/null; exit 1; fi
  [ "$n" -eq "${#cands[@]}" ] && break
done
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv || true
wait
RACE_MINUTES=$minutes python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for name in sorted(os.listdir(out)):
    p = os.path.join(out, name, "training.json")
    if not os.path.exists(p):
        continue
    t = json.load(open(p))
    run = t.get("run_curve", t["curve"])
    rows.append({"name": name, "params": t["params"], "best_val_loss": t["final_val_loss"],
                 "best_at_minutes": t["train_minutes"], "france_at_best": t["curve"][-1].get("france"),
                 "capitals_at_best": t["curve"][-1].get("capital_accuracy"),
                 "end_val_loss": run[-1]["val_loss"], "tokens_seen": t.get("run_tokens_seen", t["tokens_seen"]),
                 "tokens_per_second": round(t.get("run_tokens_seen", t["tokens_seen"]) / (60 * t.get("run_minutes", t["train_minutes"])))})
rows.sort(key=lambda r: r["best_val_loss"])
json.dump({"minutes": float(os.environ.get("RACE_MINUTES", "0") or 0), "candidates": rows}, open(os.path.join(out, "race.json"), "w"), indent=1)
for r in rows:
    print(json.dumps(r))
PY
