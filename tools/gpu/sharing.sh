# tools/gpu.sh sharing: what a second process on the GPU does to an application's launches
# (issue 32: online tuning's `kw tune` is such a process). sharing_app.py launches a short
# kernel in a loop and logs its slow launches; sharing_other.py runs tuning-like phases in
# another process, each marked on the same clock; then the application alone, as the baseline.
# Needs Python 3 with CuPy on the GPU machine (no Rust). Output: $OUT/sharing.txt, else
# DIR/sharing.txt. docs/measurements/h100-gpu-sharing.txt is one run.

sub_package() {
  cp "$here/gpu/sharing_app.py" "$here/gpu/sharing_other.py" "$dir/"
}

sub_run() {
  local out="${OUT:-$dir}/sharing.txt" t0
  gpu_line > "$out"
  {
    echo "# $(date -u +%FT%TZ) tools/gpu.sh sharing"
    echo "== the application, and another process doing tuning-like phases"
    t0=$(python3 -c 'import time; print(time.time() + 3)')
    python3 "$dir/sharing_other.py" "$t0" > "$dir/other.txt" 2>&1 &
    python3 "$dir/sharing_app.py" "$t0" 11 2>&1
    wait
    cat "$dir/other.txt"
    echo "== the application alone (baseline)"
    t0=$(python3 -c 'import time; print(time.time() + 3)')
    python3 "$dir/sharing_app.py" "$t0" 6 2>&1
  } >> "$out"
  cat "$out"
}
