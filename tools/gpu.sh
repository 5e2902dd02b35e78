#!/usr/bin/env bash
# The one runner for GPU machines: builds here, packages what a measurement needs, and runs it
# there (where there is no Rust). Every subcommand works in three modes:
#
#   tools/gpu.sh SUB [ARGS]                 build with cargo (release), package into
#                                           target/gpu/SUB and run it here
#   tools/gpu.sh SUB --package DIR          build here and copy what SUB needs (and this runner)
#                                           into DIR, e.g. .device/SUB, to carry to a GPU machine
#   DIR/gpu.sh SUB --bin-dir DIR [ARGS]     on the GPU machine: run what --package copied
#
# Subcommands (one file each in tools/gpu/; the header of each says what it measures):
#   check      every GPU test and benchmark, a table (docs/measurements/h100-gpu-check.txt)
#   cache      the compile cache's bars: cold/warm first launch, re-tune compiles nothing;
#              --sbs adds the Kernel Tuner side by side (h100-cache-bars.txt)
#   capi       the C/C++ API in a CUDA program built with nvcc (h100-capi.txt)
#   isolation  isolated evaluation of hanging/crashing configurations, and its cost
#              (h100-isolation.txt)
#   tune       the default strategy against exhaustive search on stencil2d-wide; timing spread
#              and bandwidth (h100-tune-check.txt)
#   devices [ROUNDS]
#              `kw tune --devices all` against one device on the same captures (issue 33)
#   heldout KERNEL:SIZE,...
#              selection at sizes nobody tuned: kw's rule, Kernel Launcher's, the best (issue 29)
#   sharing    what another process on the GPU (a tuning) does to an application's launches (issue 32)
#   slurm      `kw slurm`'s array tasks one per GPU, as Slurm starts them, against one process
#   ab OLD NEW [ROUNDS] [NEW2]
#              A/B of two or three `kw` builds on the same captures (h100-worker-start.txt)
# Outputs go to $OUT when set (the device tool's folder that comes back), else a folder the
# subcommand names at the end of its run.
set -uo pipefail

usage() {
  sed -n '2,/^set -uo/p' "$0" | grep -v '^set -uo' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

here="$(cd "$(dirname "$0")" && pwd)"
sub="${1:-}"
[ -n "$sub" ] || usage
shift
[ -f "$here/gpu/$sub.sh" ] || { echo "gpu.sh: no subcommand '$sub'" >&2; usage; }

mode=cargo
dir=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --package) mode=package; dir="${2:?--package needs a directory}"; shift 2 ;;
    --bin-dir) mode=bins; dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
# The repository root (cargo and package modes); in a package, the package itself.
if [ -d "$here/../crates" ]; then root="$(cd "$here/.." && pwd)"; else root="$here"; fi

# cargo_exe test|bench PACKAGE TARGET: builds (release) and prints the executable of one
# test or bench target, read from cargo's JSON messages; prints nothing when it fails.
cargo_exe() {
  local kind="$1" package="$2" target="$3" flag
  case "$kind" in
    test) flag="--test" ;;
    bench) flag="--bench" ;;
    *) echo "cargo_exe: test or bench, not $kind" >&2; return 2 ;;
  esac
  (cd "$root" && if [ "$kind" = test ]; then
      cargo test --release -p "$package" "$flag" "$target" --no-run --message-format=json 2>/dev/null
    else
      cargo bench -p "$package" "$flag" "$target" --no-run --message-format=json 2>/dev/null
    fi) |
    python3 -c '
import sys, json
target = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == target:
        print(m["executable"])
' "$target" | tail -1
}

# copy_bin SRC DEST: copies an executable without debug info (packages travel under size limits).
copy_bin() {
  cp "$1" "$2" && { strip --strip-debug "$2" 2>/dev/null || true; }
}

# build_kw: the release `kw` (cargo and package modes).
build_kw() {
  (cd "$root" && cargo build --release -p kw-cli) || return 1
}

# gpu_line: the GPU's name, driver and memory, or "nvidia-smi: none".
gpu_line() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
    || echo "nvidia-smi: none"
}

# finish_package: copies this runner into the package, so that DIR/gpu.sh runs it there.
finish_package() {
  mkdir -p "$dir/gpu"
  cp "$here/gpu.sh" "$dir/gpu.sh"
  cp "$here/gpu/$sub.sh" "$dir/gpu/$sub.sh"
  echo "packaged into $dir; run there: $dir/gpu.sh $sub --bin-dir $dir"
  ls -la "$dir"
}

# Each subcommand file defines sub_package (fills $dir) and sub_run (runs from $dir).
# shellcheck source=/dev/null
. "$here/gpu/$sub.sh"
if [ "$mode" = cargo ]; then
  dir="$root/target/gpu/$sub"
fi
if [ "$mode" != bins ]; then
  mkdir -p "$dir" && dir="$(cd "$dir" && pwd)"
  sub_package || exit 1
  finish_package
  [ "$mode" = package ] && exit 0
fi
dir="$(cd "$dir" && pwd)"
sub_run "${args[@]+"${args[@]}"}"
