#!/usr/bin/env bash
# Runs the GPU tests and the GPU benchmarks on a machine with a GPU and prints a short table.
#
#   tools/gpu-check.sh                 build with cargo (release) here, then run
#   tools/gpu-check.sh --package DIR   build here and copy the test/bench binaries (and
#                                      kernels/) into DIR, to run on a GPU machine without Rust
#   tools/gpu-check.sh --bin-dir DIR   run binaries packaged with --package (no cargo needed)
#
# Environment: KW_GPU_LOG_DIR (logs; default target/gpu-check), KW_CUDA_DEVICE (CUDA device
# index for the tests), KW_NVRTC_LIBRARY (NVRTC to load), KW_GPU_SKIP_BENCH=1 (tests only),
# KW_CACHE_DIR (compile cache; default a fresh temporary directory),
# KW_GPU_OPENCL_DEVICE (value given to the OpenCL tests as KW_DEVICE, e.g. "NVIDIA").
# A test binary's tests that find no driver print "SKIPPED: ..." and pass; the table counts them.
set -uo pipefail

mode=cargo
dir=""
case "${1:-}" in
  --package) mode=package; dir="${2:?--package needs a directory}" ;;
  --bin-dir) mode=bins; dir="${2:?--bin-dir needs a directory}" ;;
  "" ) ;;
  *) echo "usage: $0 [--package DIR | --bin-dir DIR]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
# The crates whose tests and benches touch a GPU.
gpu_packages=(kw-cuda kw-opencl kernel-wisdom)

# Lists "kind name path" of the release test and bench executables of the GPU packages.
build_list() {
  local args=()
  for p in "${gpu_packages[@]}"; do
    if [ -d "$root/crates/$p" ]; then args+=(-p "$p"); fi
  done
  (cd "$root" && cargo test --release "${args[@]}" --no-run --message-format=json 2>/dev/null;
   cd "$root" && cargo bench "${args[@]}" --no-run --message-format=json 2>/dev/null) |
    python3 -c '
import sys, json
seen = set()
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    kinds = m["target"]["kind"]
    if "example" in kinds:
        continue
    kind = "bench" if "bench" in kinds else "test"
    if "lib" in kinds or "proc-macro" in kinds:
        kind = "test"
    key = (kind, m["executable"])
    if key in seen:
        continue
    seen.add(key)
    # "path+file:///x/crates/kw-cuda#0.1.0" or "...#name@0.1.0"
    base, _, frag = m["package_id"].partition("#")
    pkg = frag.split("@")[0] if "@" in frag else base.rstrip("/").split("/")[-1]
    print(kind, pkg + "." + m["target"]["name"], m["executable"])
'
}

if [ "$mode" = package ]; then
  mkdir -p "$dir/tests" "$dir/benches"
  (cd "$root" && cargo build --release --tests --benches >/dev/null) || exit 1
  build_list | while read -r kind name path; do
    if [ "$kind" = bench ]; then out="$dir/benches/$name"; else out="$dir/tests/$name"; fi
    # Without debug info: the binaries travel (size limits).
    cp "$path" "$out" && (strip --strip-debug "$out" 2>/dev/null || true)
  done
  [ -d "$root/kernels" ] && rm -rf "$dir/kernels" && cp -r "$root/kernels" "$dir/kernels"
  cp "$0" "$dir/gpu-check.sh"
  echo "packaged into $dir:"; ls -la "$dir/tests" "$dir/benches"
  exit 0
fi

logs="${KW_GPU_LOG_DIR:-$root/target/gpu-check}"
mkdir -p "$logs"
# A fresh compile cache for this run (tests that count compiles make their own): nothing
# depends on what the machine's ~/.cache/kernel-wisdom holds. KW_CACHE_DIR overrides it.
if [ -z "${KW_CACHE_DIR:-}" ]; then
  KW_CACHE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/kw-gpu-check-cache.XXXXXX")"
  export KW_CACHE_DIR
fi
list="$logs/list.txt"
if [ "$mode" = bins ]; then
  : > "$list"
  for f in "$dir"/tests/*; do [ -x "$f" ] && echo "test $(basename "$f") $f" >> "$list"; done
  for f in "$dir"/benches/*; do [ -x "$f" ] && echo "bench $(basename "$f") $f" >> "$list"; done
  # Tests that read kernels/ from disk find them beside the binaries.
  [ -d "$dir/kernels" ] && cd "$dir"
else
  (cd "$root" && cargo build --release --tests --benches) || exit 1
  build_list > "$list"
  cd "$root"
fi

echo "== GPU"
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none") | tee "$logs/gpu.txt"

status=0
table=()
while read -r kind name path; do
  [ "$kind" = test ] || continue
  log="$logs/$name.log"
  env KW_DEVICE="${KW_GPU_OPENCL_DEVICE:-${KW_DEVICE:-}}" "$path" --test-threads=1 --nocapture > "$log" 2>&1
  rc=$?
  # Sum the libtest summaries ("test result: ok. 10 passed; 0 failed; ...").
  passed=$(grep -oE '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -oE '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
  skipped=$(grep -c 'SKIPPED' "$log")
  [ $rc -ne 0 ] && status=1
  table+=("$(printf '%-40s %6s %6s %7s %4s' "$name" "$passed" "$failed" "$skipped" "$rc")")
done < "$list"

if [ "${KW_GPU_SKIP_BENCH:-0}" != 1 ]; then
  while read -r kind name path; do
    [ "$kind" = bench ] || continue
    log="$logs/bench.$name.log"
    echo "== bench $name"
    "$path" --bench 2>&1 | tee "$log"
    [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
  done < "$list"
fi

echo
echo "== tests (logs in $logs)"
printf '%-40s %6s %6s %7s %4s\n' binary passed failed skipped rc
printf '%s\n' "${table[@]}"
if ls "$logs"/bench.*.log >/dev/null 2>&1; then
  echo "== benchmark results"
  grep -h '^RESULT' "$logs"/bench.*.log | sed 's/^RESULT /  /'
fi
exit $status
