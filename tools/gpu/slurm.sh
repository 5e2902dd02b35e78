# tools/gpu.sh slurm: `kw slurm`'s array tasks on one node with several GPUs, started as Slurm starts them but
# without Slurm: one task per GPU at the same time (SLURM_ARRAY_TASK_ID = i,
# CUDA_VISIBLE_DEVICES = i), then `kw slurm merge`; against one `kw tune` process over the same
# captures on GPU 0. Both use the same options and a fresh compile cache each. The objective
# is fixed (as in tools/slurm-check.sh), so both must pick the same winners; the wall times are
# the two runs' own. Without nvidia-smi (no CUDA GPU: PoCL) the tasks share the one device.
#   OUT=DIR          where the transcript goes (default: the temporary directory)

sub_package() {
  build_kw && copy_bin "$root/target/release/kw" "$dir/kw"
}

sub_run() (
KW="$dir/kw"
T=$(mktemp -d "${TMPDIR:-/tmp}/kw-slurm-gpus.XXXXXX"); cd "$T"
O=${OUT:-$T}; mkdir -p "$O"
exec > >(tee "$O/slurm-gpus.txt") 2>&1
echo "slurm-gpus: working in $T"
gpus=1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  nvidia-smi -L
  gpus=$(nvidia-smi -L | grep -c '^GPU')
fi
[ "$gpus" -ge 1 ] || gpus=1
"$KW" devices
export KW_USER_WISDOM_DIR=$T/uw KW_STATE_DIR=$T/st KW_WISDOM_PATH=""
echo "=== captures"
sizes="1048576 4194304 16777216 67108864"
[ "$gpus" -gt 1 ] || sizes="1024 4096 16384 65536" # PoCL: sizes a CPU tunes in seconds
for n in $sizes; do
  KW_CACHE_DIR=$T/cache0 "$KW" tune --bundled "vector_add:$n" --budget 1 --confirm-rounds 0 \
    --no-prior --wisdom-dir "$T/scratch" >/dev/null 2>&1 || { echo "capturing vector_add:$n failed"; exit 1; }
done
"$KW" capture ls captures
tasks=$gpus; [ "$tasks" -gt 4 ] && tasks=4
[ "$gpus" -gt 1 ] || tasks=2 # one device: two tasks share it (the pipeline, not a speed-up)
objective='(block_size_x*elems_per_thread*16 - problem_size.x)*(block_size_x*elems_per_thread*16 - problem_size.x) + elems_per_thread + 3*strided + 5*unroll'
opts=(--no-prior --confirm-rounds 0 --objective "$objective" --objective-name fixed)
"$KW" slurm captures --out "$T/shared" --tasks "$tasks" --strategy exhaustive -- "${opts[@]}" || exit 1
sampler=""
if [ "$gpus" -gt 1 ]; then
  ( while :; do nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader >>"$T/apps.csv" 2>/dev/null; sleep 0.5; done ) &
  sampler=$!
fi
echo "=== $tasks task(s) at once, one GPU each"
s=$(date +%s.%N)
pids=()
for ((i = 0; i < tasks; i++)); do
  KW_CACHE_DIR=$T/cacheA CUDA_VISIBLE_DEVICES=$i SLURM_ARRAY_TASK_ID=$i \
    "$KW" slurm task "$T/shared" >"$T/task$i.log" 2>&1 &
  pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
e=$(date +%s.%N)
[ -n "$sampler" ] && kill "$sampler"
echo "tasks failed: $fails; wall $(awk "BEGIN { print $e - $s }") s"
grep -h "kw slurm task\|^kernel\|device busy" "$T"/task*.log
if [ -f "$T/apps.csv" ]; then
  echo "GPUs seen running kw processes (nvidia-smi samples per GPU uuid):"
  cut -d, -f2 "$T/apps.csv" | sort | uniq -c
  nvidia-smi --query-gpu=index,uuid --format=csv,noheader
fi
"$KW" slurm merge "$T/shared"; echo "merge exit $?"
echo "=== one process, GPU 0"
s=$(date +%s.%N)
KW_CACHE_DIR=$T/cacheB CUDA_VISIBLE_DEVICES=0 "$KW" tune captures/*.kwcap --strategy exhaustive \
  --wisdom-dir "$T/one" "${opts[@]}" >"$T/one.log" 2>&1
r=$?
e=$(date +%s.%N)
echo "exit $r; wall $(awk "BEGIN { print $e - $s }") s"
grep -h "^kernel\|device busy" "$T/one.log"
w() { "$KW" wisdom show "$1/vector_add.json" | sed -nE 's/^#[0-9]+ +([^ ]+) .* ms  (.*)$/\1 \2/p' | sort; }
echo "merged:"; w "$T/shared/wisdom"
echo "one process:"; w "$T/one"
if [ "$(w "$T/shared/wisdom")" = "$(w "$T/one")" ]; then echo "slurm-gpus: SAME WINNERS"; else echo "slurm-gpus: WINNERS DIFFER"; exit 1; fi
)
