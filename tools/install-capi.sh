#!/usr/bin/env bash
# Installs kernel-wisdom's C API into a prefix:
#
#   tools/install-capi.sh PREFIX [--from DIR]
#
#   PREFIX/lib/libkernel_wisdom.so.VERSION   (+ links libkernel_wisdom.so.MAJOR, .so)
#   PREFIX/lib/libkernel_wisdom.a
#   PREFIX/include/kernel_wisdom.h           (C99)
#   PREFIX/include/kernel_wisdom.hpp         (C++17, header-only, over the C API)
#   PREFIX/lib/pkgconfig/kernel_wisdom.pc
#   PREFIX/lib/cmake/kernel_wisdom/kernel_wisdomConfig.cmake (+ ConfigVersion)
#       find_package(kernel_wisdom) -> kernel_wisdom::kernel_wisdom (shared),
#                                      kernel_wisdom::kernel_wisdom_static
#
# Builds `cargo build --release -p kw-capi` first, unless --from DIR names a directory that
# already holds Cargo's outputs (libkernel_wisdom_c.so and .a, e.g. target/debug). Cargo
# names them libkernel_wisdom_c because the Rust crate `kernel-wisdom` owns the library
# name kernel_wisdom; they are installed under the C name (the .so's SONAME is already
# libkernel_wisdom.so.MAJOR). Re-running replaces the installed files.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
prefix=""
from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="${2:?--from needs a directory}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "install-capi: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) if [ -n "$prefix" ]; then echo "install-capi: one PREFIX only" >&2; exit 2; fi
       prefix="$1"; shift ;;
  esac
done
if [ -z "$prefix" ]; then usage >&2; exit 2; fi

if [ -z "$from" ]; then
  (cd "$repo" && cargo build --release -p kw-capi)
  from="${CARGO_TARGET_DIR:-$repo/target}/release"
fi
for f in libkernel_wisdom_c.so libkernel_wisdom_c.a; do
  if [ ! -f "$from/$f" ]; then
    echo "install-capi: $from/$f not found (build with: cargo build --release -p kw-capi)" >&2
    exit 1
  fi
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)"
major="${version%%.*}"
rest="${version#*.}"
minor="${rest%%.*}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
lib="$prefix/lib"
mkdir -p "$lib/pkgconfig" "$lib/cmake/kernel_wisdom" "$prefix/include"

# Copy to a temporary name, then rename: a program running from the old library keeps it.
put() { cp "$1" "$2.tmp.$$" && chmod "$3" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"; }
put "$from/libkernel_wisdom_c.so" "$lib/libkernel_wisdom.so.$version" 755
ln -sfn "libkernel_wisdom.so.$version" "$lib/libkernel_wisdom.so.$major"
ln -sfn "libkernel_wisdom.so.$major" "$lib/libkernel_wisdom.so"
put "$from/libkernel_wisdom_c.a" "$lib/libkernel_wisdom.a" 644
put "$repo/crates/kw-capi/include/kernel_wisdom.h" "$prefix/include/kernel_wisdom.h" 644
put "$repo/crates/kw-capi/include/kernel_wisdom.hpp" "$prefix/include/kernel_wisdom.hpp" 644

subst() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
      -e "s|@MINOR@|$minor|g" "$1" > "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}
tpl="$repo/crates/kw-capi/cmake"
subst "$tpl/kernel_wisdom.pc.in" "$lib/pkgconfig/kernel_wisdom.pc"
subst "$tpl/kernel_wisdomConfig.cmake.in" "$lib/cmake/kernel_wisdom/kernel_wisdomConfig.cmake"
subst "$tpl/kernel_wisdomConfigVersion.cmake.in" \
  "$lib/cmake/kernel_wisdom/kernel_wisdomConfigVersion.cmake"

echo "install-capi: kernel_wisdom $version installed in $prefix"
echo "  CMake:      find_package(kernel_wisdom) with -DCMAKE_PREFIX_PATH=$prefix"
echo "  pkg-config: PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs kernel_wisdom"
