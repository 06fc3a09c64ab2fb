#!/usr/bin/env bash
# Regenerates the Hugging Face tokenizer goldens in engine/testdata/tokenizer
# (see gen_hf.mjs). Run after replacing a tokenizer.json, e.g. the default
# model's:
#
#   bash scripts/tokgolden/regen.sh default     # or: go tool -modfile=tools.mod task tokgoldens -- default
#
# With no argument it regenerates every golden (GPT-2's and the variants
# need ../shared/models/tiny-gpt2). Needs node and npm; the pinned packages
# are installed into scripts/tokgolden/node_modules (git-ignored).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/scripts/tokgolden"
npm install --no-package-lock --no-audit --no-fund --silent
cd "$root"
node scripts/tokgolden/gen_hf.mjs "${1:-all}"
