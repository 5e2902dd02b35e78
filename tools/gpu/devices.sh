# tools/gpu.sh devices [ROUNDS (default 2)]: `kw tune --devices all` against one device, on the
# same captures, in one run (issue 33, item 5); the package holds kw.
# On one GPU: --devices all must cost nothing against the one-device path (ratio ~1.00).
# On N GPUs of one host: evaluations/s of --devices all against --devices 0 (goal >= 0.9 x N).
#
# Captures (made once, with KW, on the first CUDA device, else OpenCL): stencil2d-wide 4096x4096 (232 configurations) and
# vector_add 2^26 (96). Every run: exhaustive search, --confirm-rounds 0, --no-prior, its own
# state (log) and wisdom directories; one compile cache warmed first by an untimed run of each
# capture, so that no run compiles (what is compared is evaluation, not NVRTC on the CPUs).
# Each round runs, in turn: `one` (no device option: the default device), `devices0` (--devices 0)
# and `all` (--devices all), in two set-ups:
#   single: one capture per command (with N GPUs, `all` shares the capture's search);
#   batch:  both captures in one command (with N GPUs, `all` gives each device a capture).
# Printed per run: evaluations (records in the logs), the command's wall time, and evaluations/s
# by the command's wall time and by the logs (records / the last record's elapsed_s, summed over
# the logs); then per round the ratios all/one and all/devices0.
# KW_BENCH_TUNE_ARGS: more `kw tune` options for the timed runs (not the warming), e.g.
# "--samples 100" for longer, device-bound evaluations, where the workers' start (loading the
# capture) weighs less against the search.
# Work files in /tmp/kw-devices-bench.

sub_package() {
  build_kw && copy_bin "$root/target/release/kw" "$dir/kw"
}

sub_run() (
KW="$dir/kw"; ROUNDS=${1:-2}
W=/tmp/kw-devices-bench; rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
export KW_CACHE_DIR=$W/cache KW_PROGRESS_INTERVAL=60
unset KW_DEVICE KW_DEVICES
"$KW" devices
# KW_BENCH_SPECS: other bundled captures (a dry run on PoCL: `stencil2d-wide:256x256 vector_add:4096`).
for spec in ${KW_BENCH_SPECS:-stencil2d-wide:4096x4096 vector_add:67108864}; do
  # No --device here: with one, --bundled captures on OpenCL; without, on CUDA when there is one.
  "$KW" tune --bundled $spec --budget 1 --confirm-rounds 0 --wisdom-dir $W/w0 \
    --state-dir $W/s0 > $W/capture.log 2>&1 || { cat $W/capture.log; exit 1; }
done
CAPS=$(ls $W/captures/*.kwcap)
echo "captures: $CAPS"
echo "timed runs: kw tune CAPTURES --strategy exhaustive --confirm-rounds 0 --no-prior ${KW_BENCH_TUNE_ARGS:-}"
COMMON="--strategy exhaustive --confirm-rounds 0 --no-prior"
# Warm the compile cache: every configuration of every capture compiled once.
"$KW" tune $CAPS --device 0 $COMMON --wisdom-dir $W/warm-w --state-dir $W/warm-s \
  > $W/warm.log 2>&1 || { tail -20 $W/warm.log; exit 1; }
echo "compile cache warmed: $(grep -h 'time:' $W/warm.log | head -2)"

# records, the sum of the logs' last elapsed_s, and the steady rate: per log (records - 1) /
# (last - first elapsed_s), which leaves out the workers' start and the first evaluation,
# summed over the logs (meaningful for one log; in `batch`, logs of one device follow each other)
log_stats() {
  local n=0 t=0 steady=0
  for f in "$1"/logs/*.jsonl; do
    local r first last
    r=$(grep -c '"key"' "$f")
    first=$(grep -o '"elapsed_s":[0-9.eE+-]*' "$f" | head -1 | cut -d: -f2)
    last=$(grep -o '"elapsed_s":[0-9.eE+-]*' "$f" | tail -1 | cut -d: -f2)
    n=$((n + r)); t=$(awk -v a="$t" -v b="${last:-0}" 'BEGIN { print a + b }')
    steady=$(awk -v s="$steady" -v r="$r" -v a="${first:-0}" -v b="${last:-0}" \
      'BEGIN { if (b > a && r > 1) s += (r - 1) / (b - a); print s }')
  done
  echo "$n $t $steady"
}

# run NAME SETUP ROUND ARGS... : prints one line, leaves evals/s (wall) in $RATE
run() {
  local name=$1 setup=$2 round=$3; shift 3
  local d=$W/run-$setup-$round-$name
  local t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$KW" tune "$@" $COMMON ${KW_BENCH_TUNE_ARGS:-} --wisdom-dir $d/w --state-dir $d > $d.log 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  read -r n t steady < <(log_stats $d)
  local wall
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  RATE=$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.3f", n / w }')
  STEADY=$(awk -v s="$steady" 'BEGIN { printf "%.3f", s }')
  local by_log
  by_log=$(awk -v n="$n" -v t="$t" 'BEGIN { if (t > 0) printf "%.3f", n / t; else print "-" }')
  printf '%-6s round %s %-8s rc=%s evaluations=%s wall=%ss evals/s(wall)=%s evals/s(logs)=%s evals/s(steady)=%s\n' \
    "$setup" "$round" "$name" "$rc" "$n" "$wall" "$RATE" "$by_log" "$STEADY"
  grep -h '  devices:' $d.log | sed 's/^/         /'
  grep -h 'dropped\|error' $d.log | sed 's/^/         /'
}

for r in $(seq "$ROUNDS"); do
  for cap in $CAPS; do
    c=$(basename "$cap" .kwcap)
    run one "single" "$r.$c" "$cap"; one=$RATE; one_s=$STEADY
    run devices0 "single" "$r.$c" "$cap" --devices 0; d0=$RATE; d0_s=$STEADY
    run all "single" "$r.$c" "$cap" --devices all; all=$RATE; all_s=$STEADY
    awk -v a="$all" -v o="$one" -v d="$d0" -v as="$all_s" -v os="$one_s" -v ds="$d0_s" \
      -v c="$c" -v r="$r" 'BEGIN { printf "single round %s %s: by wall all/one = %.3f, all/devices0 = %.3f; steady all/one = %.3f, all/devices0 = %.3f\n", r, c, a / o, a / d, as / os, as / ds }'
  done
  run one batch "$r" $CAPS; one=$RATE
  run devices0 batch "$r" $CAPS --devices 0; d0=$RATE
  run all batch "$r" $CAPS --devices all; all=$RATE
  awk -v a="$all" -v o="$one" -v d="$d0" -v r="$r" \
    'BEGIN { printf "batch  round %s: all/one = %.3f, all/devices0 = %.3f\n", r, a / o, a / d }'
done
)
