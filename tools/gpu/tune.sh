# tools/gpu.sh tune: issue-7 measurements on a GPU node: does the default strategy find, in a
# quarter of the evaluations, a configuration within 5% of the exhaustive search's best, on a
# stencil space of a few hundred configurations? Plus timing spread and bandwidth of a
# memory-bound kernel. Outputs in $OUT/tune-check (else DIR/tune-check); KW_CHECK_SIZE sets the
# stencil's size (default 4096x4096). docs/measurements/h100-tune-check.txt is one run.

sub_package() {
  build_kw && copy_bin "$root/target/release/kw" "$dir/kw"
}

sub_run() (
  set -e
  local kw="$dir/kw" out size capture total quarter seed
  out="${OUT:-$dir}/tune-check"
  size=${KW_CHECK_SIZE:-4096x4096}
  mkdir -p "$out"
  cd "$out"
  echo "== exhaustive search over stencil2d-wide:$size"
  "$kw" tune --bundled "stencil2d-wide:$size" --strategy exhaustive --wisdom-dir w-exhaustive \
    --log exhaustive.jsonl --report-timing 2>&1 | tee exhaustive.txt
  capture=$(ls captures/stencil2d-wide_*.kwcap | head -1)
  total=$(grep -c '"key"' exhaustive.jsonl || true)
  quarter=$(( total / 4 ))
  echo "== default strategy, budget $quarter (a quarter of $total), 3 seeds, same capture"
  for seed in 0 1 2; do
    "$kw" tune "$capture" --budget "$quarter" --seed "$seed" --wisdom-dir "w-hybrid-$seed" \
      --log "hybrid-$seed.jsonl" 2>&1 | tee "hybrid-$seed.txt"
  done
  echo "== vector_add on 2^26 floats: spread of one configuration measured twice, bandwidth vs copy"
  "$kw" tune --bundled vector_add:67108864 --budget 24 --report-timing --wisdom-dir w-vadd \
    --log vadd.jsonl 2>&1 | tee vadd.txt
  echo
  echo "== summary"
  grep -h "best configuration" exhaustive.txt | sed 's/^/exhaustive: /'
  for seed in 0 1 2; do grep -h "best configuration" "hybrid-$seed.txt" | sed "s/^/hybrid seed $seed: /"; done
  grep -h -E "device busy|repeat|bandwidth|kernel / copy" exhaustive.txt vadd.txt
)
