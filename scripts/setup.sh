#!/usr/bin/env bash
# setup.sh — install what railyard needs to build, test and run its demo, from
# Debian 12's own package registry. Idempotent and quick when everything is
# there: apt-get runs only when dpkg-query says something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build g++ clang libclang-rt-14-dev
  opensm libopensm-dev ibsim-utils infiniband-diags libibumad-dev
  libyaml-cpp-dev libspdlog-dev libboost-dev nlohmann-json3-dev libcli11-dev
  libsqlite3-dev libssl-dev openssl libgtest-dev libgmock-dev libbenchmark-dev
  # z3: the routing tests ask it whether any table can meet a target.
  libz3-dev
  wrk curl sqlite3 jq python3
  chromium chromium-driver python3-selenium
  dpkg-dev help2man lintian man-db systemd
  slurmctld slurm-client
  # promtool (tests lint /api/v1/metrics with it). The package also brings the
  # Prometheus server (~96 MB installed, with small JS libraries); its service is
  # never started by railyard (nor here: policy-rc.d below).
  prometheus
  # High availability (docs/ha.md): etcd is the replicated log and the
  # election of railyardd's members; etcdctl for tests and operators.
  etcd-server etcd-client
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run it as root to install them (bash scripts/setup.sh in a root shell)" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The opensm package would start a system-wide OpenSM daemon; railyard only ever
# runs its own instances against ibsim. Keep service starts off during install
# (only when no policy is in place already, and only for this install).
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
