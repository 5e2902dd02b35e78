# tools/gpu.sh check: runs the GPU tests and the GPU benchmarks and prints a short table.
# Sourced by tools/gpu.sh (which sets mode, dir, root and the helpers).
#
# Environment: KW_GPU_LOG_DIR (logs; default $OUT/gpu-check, else DIR/logs), KW_CUDA_DEVICE
# (CUDA device index for the tests), KW_NVRTC_LIBRARY (NVRTC to load), KW_GPU_SKIP_BENCH=1 (tests
# only), KW_CACHE_DIR (compile cache; default a fresh temporary directory),
# KW_GPU_OPENCL_DEVICE (value given to the OpenCL tests as KW_DEVICE, e.g. "NVIDIA").
# A test binary's tests that find no driver print "SKIPPED: ..." and pass; the table counts them.

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

sub_package() {
  mkdir -p "$dir/tests" "$dir/benches"
  (cd "$root" && cargo build --release --tests --benches >/dev/null) || return 1
  build_list | while read -r kind name path; do
    if [ "$kind" = bench ]; then copy_bin "$path" "$dir/benches/$name"; else copy_bin "$path" "$dir/tests/$name"; fi
  done
  [ -d "$root/kernels" ] && rm -rf "$dir/kernels" && cp -r "$root/kernels" "$dir/kernels"
  return 0
}

sub_run() {
  local logs="${KW_GPU_LOG_DIR:-${OUT:+$OUT/gpu-check}}"
  logs="${logs:-$dir/logs}"
  mkdir -p "$logs"
  # A fresh compile cache for this run (tests that count compiles make their own): nothing
  # depends on what the machine's ~/.cache/kernel-wisdom holds. KW_CACHE_DIR overrides it.
  if [ -z "${KW_CACHE_DIR:-}" ]; then
    KW_CACHE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/kw-gpu-check-cache.XXXXXX")"
    export KW_CACHE_DIR
  fi
  local list="$logs/list.txt" f
  : > "$list"
  for f in "$dir"/tests/*; do [ -x "$f" ] && echo "test $(basename "$f") $f" >> "$list"; done
  for f in "$dir"/benches/*; do [ -x "$f" ] && echo "bench $(basename "$f") $f" >> "$list"; done
  # Tests that read kernels/ from disk find them beside the binaries.
  cd "$dir" || return 1

  echo "== GPU"
  gpu_line | tee "$logs/gpu.txt"

  local status=0 table=() kind name path log rc passed failed skipped
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
  return $status
}
