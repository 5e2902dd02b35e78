# tools/gpu.sh ab OLD_KW NEW_KW [ROUNDS (default 2)] [NEW2_KW]: A/B of two (or three) kw builds
# on one machine: exhaustive `kw tune` of stencil2d-wide 4096² and vector_add 2^26 (captured
# once, with NEW), the builds taking turns round by round, each run with a fresh compile cache;
# prints each run's `time:` line. Work files in /tmp/ab. The package holds this build's kw as
# DIR/kw, to name as NEW (or OLD). docs/measurements/h100-worker-start.txt is one run.

sub_package() {
  build_kw && copy_bin "$root/target/release/kw" "$dir/kw"
}

sub_run() (
  OLD=${1:?usage: gpu.sh ab OLD_KW NEW_KW [ROUNDS] [NEW2_KW]}; NEW=${2:?new kw}; ROUNDS=${3:-2}
  NEW2=${4:-}
  W=/tmp/ab; rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
  for spec in stencil2d-wide:4096x4096 vector_add:67108864; do
    "$NEW" tune --bundled "$spec" --budget 1 --wisdom-dir "$W/w0" > "$W/cap-$spec.log" 2>&1
  done
  ls "$W/captures"
  for r in $(seq "$ROUNDS"); do
    for cap in "$W"/captures/*.kwcap; do
      for v in old new ${NEW2:+new2}; do
        bin=$OLD; [ "$v" = new ] && bin=$NEW; [ "$v" = new2 ] && bin=$NEW2
        c="$W/cache-$r-$v-$(basename "$cap")"; rm -rf "$c"
        KW_CACHE_DIR=$c "$bin" tune "$cap" --strategy exhaustive --wisdom-dir "$W/w-$r-$v" > "$W/t.log" 2>&1
        echo "$r $v $(basename "$cap"): $(grep 'time:' "$W/t.log")"
      done
    done
  done
)
