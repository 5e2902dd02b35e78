#!/usr/bin/env bash
# The main job (README "Quick start"): the whole cycle on this machine's GPU (CUDA, else an
# OpenCL GPU) or, without one, on PoCL:
#   1. an application launches the bundled kernels at a few problem sizes with capture on;
#   2. `kw tune` replays the captures, verified, with a time bound per kernel, and writes wisdom;
#   3. the application runs again and selects the tuned configurations.
# Everything is written under target/demo/ (removed at the start). KW_DEMO_TIME sets the tuning
# time per capture (default 15s).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${KW_BIN_DIR:-}" ]; then
  # Prebuilt binaries (a GPU node without a Rust toolchain): $KW_BIN_DIR/kw and /demo.
  kw=$KW_BIN_DIR/kw
  app=$KW_BIN_DIR/demo
else
  tools/setup.sh
  echo "== building (release)"
  cargo build --release --quiet -p kw-cli
  cargo build --release --quiet -p kernel-wisdom --example demo
  kw=target/release/kw
  app=target/release/examples/demo
fi
out=${KW_DEMO_OUT:-target/demo}
rm -rf "$out"
mkdir -p "$out/captures" "$out/wisdom"
export KW_WISDOM_PATH="$out/wisdom"
# The demo keeps to its own directory: no per-user wisdom or state of the machine takes part.
export KW_USER_WISDOM_DIR="$out/wisdom" KW_STATE_DIR="$out/state"

echo
echo "== 1. the application, capture on (KW_CAPTURE='*'), no wisdom yet: default configurations"
KW_CAPTURE='*' KW_CAPTURE_DIR="$out/captures" "$app"
echo
"$kw" capture ls "$out/captures"

echo
echo "== 2. tuning every capture for ${KW_DEMO_TIME:-15s} (verified against the captured output)"
for capture in "$out"/captures/*.kwcap; do
  "$kw" tune "$capture" --time "${KW_DEMO_TIME:-15s}" --wisdom-dir "$out/wisdom" \
    --log "$out/$(basename "$capture" .kwcap).tune.jsonl"
  echo
done
"$kw" wisdom ls "$out/wisdom"

echo
echo "== 3. the application again: it selects the tuned configuration per kernel and size"
"$app"

echo
echo "== why: kw wisdom explain (a size that was not tuned picks the nearest record)"
device=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['records'][0]['device']['name'])" "$out/wisdom/vector_add.json")
arch=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['records'][0]['device']['architecture'])" "$out/wisdom/vector_add.json")
"$kw" wisdom explain vector_add --dir "$out/wisdom" --device "$device" --arch "$arch" --problem-size 3000000
