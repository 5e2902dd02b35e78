#!/usr/bin/env bash
# A/B of two (or three) kw builds on one machine: exhaustive `kw tune` of stencil2d-wide 4096²
# and vector_add 2^26 (captured once, with NEW), the builds taking turns round by round, each
# run with a fresh compile cache; prints each run's `time:` line.
#   tools/tune-ab.sh OLD_KW NEW_KW [ROUNDS (default 2)] [NEW2_KW]
# Work files in /tmp/ab. Written for the GPU machine (docs/measurements/h100-worker-start.txt).
set -uo pipefail
OLD=${1:?old kw}; NEW=${2:?new kw}; ROUNDS=${3:-2}
W=/tmp/ab; rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
for spec in stencil2d-wide:4096x4096 vector_add:67108864; do
  $NEW tune --bundled $spec --budget 1 --wisdom-dir $W/w0 > $W/cap-$spec.log 2>&1
done
ls $W/captures
NEW2=${4:-}
for r in $(seq $ROUNDS); do
  for cap in $W/captures/*.kwcap; do
    for v in old new ${NEW2:+new2}; do
      bin=$OLD; [ $v = new ] && bin=$NEW; [ $v = new2 ] && bin=$NEW2
      c=$W/cache-$r-$v-$(basename $cap); rm -rf $c
      KW_CACHE_DIR=$c $bin tune $cap --strategy exhaustive --wisdom-dir $W/w-$r-$v > $W/t.log 2>&1
      echo "$r $v $(basename $cap): $(grep 'time:' $W/t.log)"
    done
  done
done
