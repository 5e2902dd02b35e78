# Sourced by tools/setup.sh and tools/slurm-check.sh.
# install_slurm: installs slurmctld, slurmd, slurm-client and munge from the Debian packages
# (as root, with apt-get), without starting their services: the packages' scripts would start
# them with the system's configuration, which tools/slurm-check.sh does not use (it starts its
# own daemons). Where no policy-rc.d says so already, one that forbids starting services is put
# in place for the installation and removed after it. Returns non-zero when it cannot install.
install_slurm() {
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  local policy=/usr/sbin/policy-rc.d placed="" rc=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# placed by kernel-wisdom tools/lib/install-slurm.sh for one install\nexit 101\n' >"$policy" &&
      chmod 755 "$policy" && placed=1
  fi
  { apt-get update -qq || true; } &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      slurmctld slurmd slurm-client munge >/dev/null || rc=1
  [ -n "$placed" ] && rm -f "$policy"
  return "$rc"
}

# have_slurm: true when the daemons and the client are on PATH.
have_slurm() {
  command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
    command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1
}
