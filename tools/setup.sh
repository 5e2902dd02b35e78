#!/usr/bin/env bash
# Installs what kernel-wisdom's tests and demo need on a Debian/Ubuntu machine, idempotently:
# PoCL (OpenCL on the CPU), the OpenCL ICD loader, and what the C API's tests need (cmake,
# pkg-config, a C and a C++ compiler). Does nothing when they are present.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev clinfo; do
  have_pkg "$pkg" || need+=("$pkg")
done
# The C API tests (crates/kw-capi) build C and C++ programs through the installed CMake
# package and pkg-config file. Compilers count when present on PATH, however installed.
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v c++ >/dev/null 2>&1 || need+=(g++)
have_pkg opencl-c-headers || need+=(opencl-c-headers)

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${need[*]} and no apt-get here: install PoCL and an OpenCL ICD loader by hand" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "setup: need root (or sudo) to install ${need[*]}" >&2; exit 1
    fi
  fi
  echo "setup: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if command -v clinfo >/dev/null 2>&1; then
  clinfo -l 2>/dev/null | sed 's/^/setup: /' || true
fi
