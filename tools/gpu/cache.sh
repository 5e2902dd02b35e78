# tools/gpu.sh cache: measures the bars of issue 16 on a CUDA GPU (the H100: docs/measurements/h100-cache-bars.txt):
#   1. first launch of a kernel with a cold and a warm on-disk compile cache, in one run
#      (`cuda_launch` bench: RESULT first_launch_ms = cold, first_launch_warm_ms = warm);
#   2. first launch in a new process, cold and warm (`first_launch` bench's process pairs; on
#      the GPU machine's OpenCL platform when it has one (KW_DEVICE picks it), else skipped);
#   3. re-running `kw tune` on the same capture with a warm cache compiles nothing
#      (vector_add 2^26 and stencil2d-wide 4096², exhaustive; the `time:` summary lines);
#   4. optionally (--sbs) the side-by-side with Kernel Tuner (../shared/bench/kt-side-by-side),
#      once with a cold and once with a warm compile cache.
#
# tools/gpu.sh cache [--sbs]: results in $OUT (default /tmp/cache-h100), summary in OUT/summary.txt.
# Every step has a timeout so that the whole fits a 10-minute command (--sbs needs its own
# command: about 7 minutes per pass). A dry run elsewhere (e.g. on PoCL) can shrink step 3:
# CACHE_BARS_SPECS="vector_add:1048576 stencil2d-wide:256x256" CACHE_BARS_BUDGET=8.

sub_package() {
  build_kw || return 1
  copy_bin "$root/target/release/kw" "$dir/kw"
  local b exe
  for b in cuda_launch first_launch; do
    exe="$(cargo_exe bench kernel-wisdom "$b")"
    [ -x "$exe" ] || { echo "no bench executable for kernel-wisdom/$b" >&2; return 1; }
    copy_bin "$exe" "$dir/$b"
  done
  if [ -d "$root/../shared/bench/kt-side-by-side" ]; then
    [ -d "$dir/sbs" ] && chmod -R u+w "$dir/sbs"
    rm -rf "$dir/sbs" && cp -r "$root/../shared/bench/kt-side-by-side" "$dir/sbs" \
      && chmod -R u+w "$dir/sbs" && cp "$dir/kw" "$dir/sbs/kw"
  else
    echo "note: ../shared/bench/kt-side-by-side not found: --sbs will not be available"
  fi
}

sub_run() {
  local sbs=0
  case "${1:-}" in --sbs) sbs=1 ;; "") ;; *) echo "gpu.sh cache: unknown argument $1 (only --sbs)" >&2; return 2 ;; esac
  OUT="${OUT:-/tmp/cache-h100}"
  mkdir -p "$OUT"
  summary="$OUT/summary.txt"
  : > "$summary"
  say() { echo "$*" | tee -a "$summary"; }

  say "== $(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
  say "kw: $("$dir/kw" --version 2>&1)"

  # 1. Cold and warm first launch, in one process (new WisdomKernels on the warm cache).
  say "== 1. first launch, cold and warm cache (cuda_launch bench)"
  timeout 240 "$dir/cuda_launch" --bench > "$OUT/cuda_launch.txt" 2>&1
  say "exit status $?"
  grep -E 'SKIPPED|^RESULT (first_launch|open_device)' "$OUT/cuda_launch.txt" | tee -a "$summary"
  grep -A4 'warm on-disk cache' "$OUT/cuda_launch.txt" | tee -a "$summary"

  # 2. First launch in a new process (process pairs on one fresh cache directory).
  say "== 2. first launch in a new process, cold and warm (first_launch bench, OpenCL)"
  timeout 180 "$dir/first_launch" --bench --rounds 3 --pairs 5 > "$OUT/first_launch.txt" 2>&1
  say "exit status $?"
  grep -E 'SKIPPED|device:|cold compile|warm compile|ratio \(warm|^RESULT' "$OUT/first_launch.txt" | tee -a "$summary"

  # 3. Re-tuning a capture with a warm cache compiles nothing.
  say "== 3. kw tune twice on the same capture: the second run must say 0 compiles"
  work="$OUT/retune"
  rm -rf "$work" && mkdir -p "$work"
  export KW_CACHE_DIR="$work/cache"
  unset KW_CACHE
  retune_ok=1
  budget=()
  [ -n "${CACHE_BARS_BUDGET:-}" ] && budget=(--budget "$CACHE_BARS_BUDGET")
  for spec in ${CACHE_BARS_SPECS:-vector_add:67108864 stencil2d-wide:4096x4096}; do
    name="${spec%%:*}"
    ( cd "$work" && timeout 200 "$dir/kw" tune --bundled "$spec" --strategy exhaustive "${budget[@]}" \
        --log "$name-cold.jsonl" --wisdom-dir w > "$name-cold.txt" 2>&1 )
    cap="$(cd "$work" && ls -t captures/*.kwcap 2>/dev/null | head -1)"
    if [ -z "$cap" ]; then say "$spec: no capture written (see $work/$name-cold.txt)"; retune_ok=0; continue; fi
    ( cd "$work" && timeout 200 "$dir/kw" tune "$cap" --strategy exhaustive "${budget[@]}" \
        --log "$name-warm.jsonl" --wisdom-dir w > "$name-warm.txt" 2>&1 )
    cold_line="$(grep -h 'time: compile' "$work/$name-cold.txt")"
    warm_line="$(grep -h 'time: compile' "$work/$name-warm.txt")"
    say "$spec cold: $(grep -h 'evaluations/s' "$work/$name-cold.txt" | sed 's/^ *//')"
    say "$spec cold: $cold_line"
    say "$spec warm: $(grep -h 'evaluations/s' "$work/$name-warm.txt" | sed 's/^ *//')"
    say "$spec warm: $warm_line"
    case "$warm_line" in
      *"; 0 compiles,"*) say "$spec: warm re-tune compiled nothing: OK" ;;
      *) say "$spec: warm re-tune COMPILED (bar missed)"; retune_ok=0 ;;
    esac
  done
  "$dir/kw" cache stats | tee -a "$summary"
  say "retune bar: $([ $retune_ok = 1 ] && echo met || echo NOT met)"

  # 4. Side by side with Kernel Tuner, cold then warm compile cache.
  if [ "$sbs" = 1 ]; then
    if [ -x "$dir/sbs/side_by_side.sh" ] || [ -f "$dir/sbs/side_by_side.sh" ]; then
      for pass in cold warm; do
        say "== 4. side by side with Kernel Tuner ($pass compile cache)"
        [ "$pass" = cold ] && rm -rf "$OUT/sbs-cache"
        KW_CACHE_DIR="$OUT/sbs-cache" OUT="$OUT/sbs-$pass" SBS_DEADLINE_S=${SBS_DEADLINE_S:-280} \
          bash "$dir/sbs/side_by_side.sh" > "$OUT/sbs-$pass.console.txt" 2>&1
        say "exit status $?"
        cat "$OUT/sbs-$pass/summary.txt" 2>/dev/null | tee -a "$summary"
      done
    else
      say "no side-by-side folder in $dir (package with ../shared present)"
    fi
  fi
  say "== done; outputs in $OUT"
}
