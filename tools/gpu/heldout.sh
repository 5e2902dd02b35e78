# tools/gpu.sh heldout KERNEL:SIZE[,SIZE...] ...: selection at sizes nobody tuned (issue 29):
# per library kernel and size, the time of kw's selection from the shipped wisdom, of Kernel
# Launcher's rule (the record with the nearest problem size) and of the best `kw tune` finds at
# that size (heldout.py beside this file says how). Output: $OUT/heldout.txt, else
# DIR/heldout.txt. docs/measurements/h100-heldout-selection.txt is one run.

sub_package() {
  build_kw && copy_bin "$root/target/release/kw" "$dir/kw" || return 1
  cp "$here/gpu/heldout.py" "$dir/heldout.py" && cp "$root"/wisdom/kw_*.json "$dir/"
  mkdir -p "$dir/gpu" && cp "$here/gpu/heldout.py" "$dir/gpu/heldout.py"
  # hotspot is tuned through its T1 file (with its source beside it).
  mkdir -p "$dir/library" && cp "$root"/kernels/library/* "$dir/library/"
}

sub_run() {
  local out="${OUT:-$dir}/heldout.txt"
  [ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  (nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none") > "$out"
  echo "# $(date -u +%FT%TZ) heldout.py KW WISDOM OUT $*" >> "$out"
  python3 "$dir/heldout.py" "$dir/kw" "$dir" "$out" "$@"
}
