# tools/gpu.sh isolation: isolated evaluation on a CUDA GPU (the H100): `kw tune` on a capture
# whose configurations hang, call __trap() or write to an illegal address finishes, records
# exactly those as failed with their reasons, writes wisdom for the best valid one, and its own
# CUDA context survives (kw-cli test `isolation`, its CUDA case; the PoCL cases run too). Then
# the cost of isolation: evaluations per second of `kw tune --bundled` with and without it.
# Output: $KW_ISOLATION_OUT, else $OUT/h100-isolation.txt, else DIR/h100-isolation.txt
# (docs/measurements/h100-isolation.txt is one).

sub_package() {
  build_kw || return 1
  local tb
  tb="$(cargo_exe test kw-cli isolation)"
  [ -x "$tb" ] || { echo "no isolation test binary" >&2; return 1; }
  copy_bin "$root/target/release/kw" "$dir/kw" && copy_bin "$tb" "$dir/isolation"
}

sub_run() {
  local kw="$dir/kw" tb="$dir/isolation" out work status=0 rc how flag
  out="${KW_ISOLATION_OUT:-${OUT:-$dir}/h100-isolation.txt}"
  work="$(mktemp -d)"
  {
    echo "== $(date -u +%FT%TZ) isolated evaluation"
    gpu_line
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
  } > >(tee "$out") 2>&1
  wait $! 2>/dev/null || sleep 1  # let tee finish writing
  rm -rf "$work"
  echo "written: $out"
  return $status
}
