# tools/gpu.sh capi: the C/C++ API on a CUDA GPU (issue 15): a CUDA runtime program built with nvcc
# (crates/kw-capi/tests/cuda/vector_add_cuda.cu: cudaMalloc, its own cudaStream_t, launches
# through kernel_wisdom.hpp) goes through capture -> kw tune -> selection, its results are
# compared bitwise with a plain <<<>>> launch of the same kernel, and the per-launch host
# cost is measured against a plain cuLaunchKernel of that kernel in the same run. Then the
# library's routines through kw::Library on cudaMalloc memory (crates/kw-capi/tests/c/library.cpp
# built with -DKW_TEST_CUDA): every routine checked against known values, wrong lengths errors.
#
# Outputs go to $OUT when set, else DIR/out: build.log, run-*.log,
# tune.log, bench.txt, overhead.txt (kernel-wisdom's own host work per launch, null device)
# and summary.txt. Environment: KW_NVCC_ARCH (default sm_90),
# KW_CAPI_N (vector length, default 1048576), KW_CAPI_BENCH_N (default 65536),
# KW_CAPI_ROUNDS (bench rounds, default 2000), KW_CAPI_TUNE (kw tune options, default
# "--budget 40"). Exit status non-zero when a step fails; summary.txt says which.

sub_package() {
  local into="$dir"
  mkdir -p "$into/bin" "$into/src"
  (cd "$root" && cargo build --release -p kw-capi -p kw-cli) || return 1
  "$root/tools/install-capi.sh" "$into/prefix" --from "$root/target/release" || return 1
  rm -f "$into/prefix/lib/libkernel_wisdom.a"   # not needed here; keeps the package small
  strip --strip-debug "$into/prefix/lib/libkernel_wisdom.so."* 2>/dev/null || true
  copy_bin "$root/target/release/kw" "$into/bin/kw"
  local overhead
  overhead="$(cargo_exe bench kw-capi launch_overhead)"
  [ -x "$overhead" ] || { echo "no launch_overhead bench executable" >&2; return 1; }
  copy_bin "$overhead" "$into/bin/launch_overhead"
  cp "$root/crates/kw-capi/tests/cuda/vector_add_cuda.cu" "$into/src/"
  cp "$root/crates/kw-capi/tests/c/library.cpp" "$into/src/"
  rm -rf "$into/kernels" && cp -r "$root/kernels" "$into/kernels"
}

sub_run() {
out="${OUT:-$dir/out}"
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
status=0
say() { echo "$*" | tee -a "$summary"; }
fail() { say "FAILED: $*"; status=1; }

say "== GPU"
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: none") | tee -a "$summary"
if ! command -v nvcc >/dev/null 2>&1; then
  fail "no nvcc on PATH (the CUDA toolkit is needed to build the program)"
  return 1
fi
nvcc --version | tail -1 | tee -a "$summary"

prefix="$dir/prefix"
exe="$out/vector_add_cuda"
arch="${KW_NVCC_ARCH:-sm_90}"
say "== build (nvcc -std=c++17 -O2 -arch=$arch, kernel_wisdom.hpp, -lkernel_wisdom)"
if ! nvcc -std=c++17 -O2 -arch="$arch" -Xcompiler -Wall,-Wextra \
    -I"$prefix/include" -I"$dir/kernels" "$dir/src/vector_add_cuda.cu" -o "$exe" \
    -L"$prefix/lib" -lkernel_wisdom -lcuda -Xlinker -rpath -Xlinker "$prefix/lib" \
    > "$out/build.log" 2>&1; then
  cat "$out/build.log"
  fail "nvcc build (see build.log)"
  return 1
fi

kernel="$dir/kernels/vector_add.cu"
n="${KW_CAPI_N:-1048576}"
work="$out/work"
rm -rf "$work" && mkdir -p "$work"
run_case() {  # run_case NAME [VAR=VALUE ...] -> out/run-NAME.log; prints the REPORT line
  local name="$1"; shift
  (cd "$work" && env -u KW_CAPTURE -u KW_CAPTURE_DIR -u KW_WISDOM_PATH -u KW_LOG "$@" \
    "$exe" "$kernel" "$n") > "$out/run-$name.log" 2>&1
  local rc=$?
  grep '^REPORT' "$out/run-$name.log" | tee -a "$summary"
  [ $rc -eq 0 ] || fail "run $name exited $rc (see run-$name.log)"
  grep -q 'wrong=0 identical=1' "$out/run-$name.log" || fail "run $name: results differ from <<<>>> or the CPU"
}

say "== 1. plain run (default configuration; bitwise identical to <<<>>>)"
run_case plain
say "== 2. capture (KW_CAPTURE=vector_add; written at exit, no flush call)"
run_case capture KW_CAPTURE=vector_add KW_CAPTURE_DIR="$work/caps"
cap="$(ls "$work"/caps/*.kwcap 2>/dev/null | head -1)"
[ -n "$cap" ] && say "capture: $(basename "$cap")" || fail "no capture written"
say "== 3. kw tune ${KW_CAPI_TUNE:---budget 40}"
if [ -n "$cap" ]; then
  # shellcheck disable=SC2086
  "$dir/bin/kw" tune "$cap" ${KW_CAPI_TUNE:---budget 40} --wisdom-dir "$work/tuned" > "$out/tune.log" 2>&1 \
    || fail "kw tune (see tune.log)"
  tail -5 "$out/tune.log" | tee -a "$summary"
fi
say "== 4. selection (KW_WISDOM_PATH, KW_LOG=debug)"
run_case select KW_WISDOM_PATH="$work/tuned" KW_LOG=debug
grep -E 'using record #[0-9]+ of' "$out/run-select.log" | tee -a "$summary" \
  || fail "the tuned record was not selected (see run-select.log)"
if [ -f "$work/tuned/vector_add.json" ]; then
  python3 - "$work/tuned/vector_add.json" "$out/run-select.log" <<'PY' | tee -a "$summary"
import json, sys
best = json.load(open(sys.argv[1]))["records"][0]["config"]
report = [l for l in open(sys.argv[2]) if l.startswith("REPORT")][0]
chosen = report.split("config=")[1].split()[0]
ok = all(f"{k}={v}" in chosen for k, v in best.items())
print(("selected the tuned record: " if ok else "DIFFERENT from the tuned record: ") + chosen)
sys.exit(0 if ok else 1)
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "selection is not the tuned record"
fi

say "== 5. per-launch host cost against cuLaunchKernel (same kernel, same stream, one run)"
(cd "$work" && env -u KW_CAPTURE -u KW_WISDOM_PATH -u KW_LOG \
  "$exe" "$kernel" "${KW_CAPI_BENCH_N:-65536}" --bench "${KW_CAPI_ROUNDS:-2000}") > "$out/bench.txt" 2>&1 \
  || fail "bench (see bench.txt)"
grep '^BENCH' "$out/bench.txt" | tee -a "$summary"

say "== 6. kernel-wisdom's own host work per launch, on a device that launches nothing (this CPU)"
if [ -x "$dir/bin/launch_overhead" ]; then
  "$dir/bin/launch_overhead" > "$out/overhead.txt" 2>&1 || fail "launch_overhead (see overhead.txt)"
  grep '^RESULT' "$out/overhead.txt" | tee -a "$summary"
else
  say "(not packaged)"
fi

say "== 7. the library's routines through kw::Library on cudaMalloc memory (library.cpp)"
lib_exe="$out/library_cuda"
if nvcc -std=c++17 -O2 -DKW_TEST_CUDA -Xcompiler -Wall,-Wextra -I"$prefix/include" \
    "$dir/src/library.cpp" -o "$lib_exe" -L"$prefix/lib" -lkernel_wisdom -lcuda \
    -Xlinker -rpath -Xlinker "$prefix/lib" > "$out/build-library.log" 2>&1; then
  (cd "$work" && env -u KW_CAPTURE -u KW_WISDOM_PATH -u KW_LOG "$lib_exe") > "$out/library.log" 2>&1
  tail -1 "$out/library.log" | tee -a "$summary"
  grep -q '^0 failure(s)' "$out/library.log" || fail "library routines (see library.log)"
else
  cat "$out/build-library.log"
  fail "nvcc build of library.cpp (see build-library.log)"
fi

say "== command: gpu.sh capi --bin-dir $dir (outputs in $out)"
[ $status -eq 0 ] && say "ALL OK" || say "SOME STEPS FAILED"
return $status
}
