#!/usr/bin/env bash
# The main job (README "Quick start"). Until the end-to-end demo (capture -> tune -> wisdom ->
# select) exists, it builds the `kw` tool and shows a tuning space from the shared data.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cargo build --release --quiet -p kw-cli
spaces=../shared/data/tuning-spaces
echo "PLACEHOLDER: the end-to-end demo (capture -> tune -> wisdom -> select) is not built yet."
if [ -d "$spaces" ]; then
  echo "kw space stats $spaces/synthetic_chain_T1.json"
  target/release/kw space stats "$spaces/synthetic_chain_T1.json"
else
  echo "kw space stats on a tiny built-in example:"
  tmp=$(mktemp -d)
  printf '["32 <= bx * by <= 256"]' > "$tmp/r.json"
  printf '{"ConfigurationSpace": {"TuningParameters": [{"Name": "bx", "Values": "[16, 32, 64, 128, 256]"}, {"Name": "by", "Values": "[1, 2, 4, 8]"}]}}' > "$tmp/spec.json"
  target/release/kw space stats "$tmp/spec.json" --restrictions-json "$tmp/r.json"
fi
