#!/usr/bin/env bash
# Clean build time of a small application that depends on kernel-wisdom, with only the
# `opencl` backend against the default (`cuda` + `opencl`), in one run (issue 13, point 3).
# Usage: tools/feature-build-time.sh [ROUNDS]   (debug builds, fresh target dirs each time)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/app/src"
cat > "$work/app/src/main.rs" <<'RS'
fn main() -> Result<(), kernel_wisdom::Error> {
    let device = kernel_wisdom::open_default_device()?;
    let kernel = kernel_wisdom::WisdomKernel::new(kernel_wisdom::demo_kernels::opencl::vector_add()?, device)?;
    println!("{}", kernel.default_config());
    Ok(())
}
RS
build() { # $1 = label, $2 = dependency line
  cat > "$work/app/Cargo.toml" <<TOML
[package]
name = "kw-feature-app"
version = "0.1.0"
edition = "2021"
[dependencies]
$2
[workspace]
TOML
  rm -rf "$work/target"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$work/app" && CARGO_TARGET_DIR="$work/target" cargo build --quiet --offline)
  t1=$(date +%s.%N)
  local crates
  crates=$(ls "$work/target/debug/deps"/*.rlib | sed 's|.*/lib||; s|-[0-9a-f]*\.rlib||' | sort -u | wc -l)
  printf '%-8s %6.1f s  %3d crates\n' "$1" "$(echo "$t1 - $t0" | bc)" "$crates"
}
for _ in $(seq "$rounds"); do
  build opencl "kernel-wisdom = { path = \"$root/crates/kernel-wisdom\", default-features = false, features = [\"opencl\"] }"
  build default "kernel-wisdom = { path = \"$root/crates/kernel-wisdom\" }"
done
