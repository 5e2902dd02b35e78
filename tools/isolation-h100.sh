#!/usr/bin/env bash
# Isolated evaluation on a CUDA GPU (the H100): `kw tune` on a capture whose configurations
# hang, call __trap() or write to an illegal address finishes, records exactly those as failed
# with their reasons, writes wisdom for the best valid one, and its own CUDA context survives
# (kw-cli test `isolation`, its CUDA case; the PoCL cases run too). Then the cost of
# isolation: evaluations per second of `kw tune --bundled` with and without it.
#
#   tools/isolation-h100.sh                  build with cargo (release) here, then run
#   tools/isolation-h100.sh --package DIR    build here; copy kw and the test binary into DIR
#   tools/isolation-h100.sh --bin-dir DIR    run what --package copied (no cargo needed)
#
# Output: $KW_ISOLATION_OUT (default docs/measurements/h100-isolation.txt under the repository,
# or DIR/h100-isolation.txt with --bin-dir). Not run on the development machine (no GPU).
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mode=cargo
dir=""
case "${1:-}" in
  --package) mode=package; dir="${2:?--package needs a directory}" ;;
  --bin-dir) mode=bins; dir="${2:?--bin-dir needs a directory}" ;;
  "") ;;
  *) echo "usage: $0 [--package DIR | --bin-dir DIR]" >&2; exit 2 ;;
esac

# cargo_exe (packaging only: the GPU machine runs the packaged copies without cargo)
[ -f "$root/tools/lib/cargo-exe.sh" ] && . "$root/tools/lib/cargo-exe.sh"

if [ "$mode" = package ] || [ "$mode" = cargo ]; then
  (cd "$root" && cargo build --release -p kw-cli) || exit 1
  tb="$(cargo_exe test kw-cli isolation)"
  [ -x "$tb" ] || { echo "no isolation test binary" >&2; exit 1; }
  kw="$root/target/release/kw"
  if [ "$mode" = package ]; then
    mkdir -p "$dir"
    cp "$kw" "$dir/kw" && cp "$tb" "$dir/isolation" && cp "$0" "$dir/isolation-h100.sh"
    strip --strip-debug "$dir/kw" "$dir/isolation" 2>/dev/null || true
    echo "packaged into $dir"; ls -la "$dir"; exit 0
  fi
  out="${KW_ISOLATION_OUT:-$root/docs/measurements/h100-isolation.txt}"
else
  kw="$dir/kw"; tb="$dir/isolation"
  out="${KW_ISOLATION_OUT:-$dir/h100-isolation.txt}"
fi

work="$(mktemp -d)"
status=0
exec > >(tee "$out") 2>&1
{
  echo "== $(date -u +%FT%TZ) isolated evaluation"
  (nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none")
  echo "== test isolation (PoCL cases and the CUDA case: hang, __trap(), illegal address)"
  KW_BIN="$kw" "$tb" --test-threads=1 --nocapture; rc=$?; [ $rc -ne 0 ] && status=1
  echo "rc=$rc"
  echo "== cost of isolation: kw tune --bundled stencil2d-wide, 60 evaluations, same seed"
  for how in isolated in-process; do
    flag=""; [ "$how" = in-process ] && flag="--no-isolation"
    (cd "$work" && rm -rf wisdom ./*.jsonl &&
      "$kw" tune --bundled stencil2d-wide:2048x2048 --budget 60 --log "$how.jsonl" $flag 2>&1 |
      grep -E "evaluations|device busy" | sed "s/^/$how: /")
  done
}
rm -rf "$work"
echo "written: $out"
exit $status
