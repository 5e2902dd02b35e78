#!/usr/bin/env bash
# Installs what kernel-wisdom's tests and demo need on a Debian/Ubuntu machine, idempotently:
# PoCL (OpenCL on the CPU), the OpenCL ICD loader, and what the C API's tests need (cmake,
# pkg-config, a C and a C++ compiler), and a headless browser for the report's test
# (chromium), and Slurm with munge for tools/slurm-check.sh (as root only). Does nothing when
# they are present.
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

# `kw report`'s test opens a report in a headless browser (Debian's chromium). Where it
# cannot be installed (no apt-get, no root, no such package) the test says it is skipped.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo"
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; } &&
    echo "setup: installing chromium (for the report's browser test)" &&
    { $sudo apt-get update -qq || true; } &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
    :
  else
    echo "setup: chromium could not be installed here: the report's browser test will be skipped" >&2
  fi
fi

# tools/slurm-check.sh (run by tools/test.sh) starts a single-node Slurm from Debian's
# packages. Where they cannot be installed (no apt-get, no root) it says it is skipped.
. "$(dirname "$0")/lib/install-slurm.sh"
if ! have_slurm; then
  echo "setup: installing slurmctld slurmd slurm-client munge (for tools/slurm-check.sh)"
  install_slurm ||
    echo "setup: Slurm could not be installed here (it needs root and apt-get): tools/slurm-check.sh will be skipped" >&2
fi

if command -v clinfo >/dev/null 2>&1; then
  clinfo -l 2>/dev/null | sed 's/^/setup: /' || true
fi
