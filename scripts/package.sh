#!/usr/bin/env bash
# package.sh [BUILD_DIR] — the Debian package railyard_<version>_<arch>.deb from a
# configured build tree (default build/release), checked with lintian.
#   bash scripts/build.sh release && bash scripts/package.sh
# Builds only what the package holds and is missing (target package_payload:
# the commands, the plugin, the port probe, man pages), then `cpack -G DEB`
# (scripts/packaging/CMakeLists.txt). The .deb lands in BUILD_DIR/package/; its path is
# the last line printed. Exits non-zero if lintian reports an error or a warning
# (scripts/packaging/deb/lintian-overrides holds the few that are intended, with why).
# The tree must be configured with -DCMAKE_INSTALL_PREFIX=/usr: the plugin's
# default port probe path is compiled in from it (scripts/build.sh release does).
# Environment: RAILYARD_JOBS (build jobs, default: the number of CPUs),
#   RAILYARD_LINTIAN=0 skips lintian.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(realpath "${1:-$root/build/release}")
[[ -f $dir/CMakeCache.txt ]] || { echo "package: $dir is not a configured build tree" >&2; exit 1; }
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$dir/CMakeCache.txt")
if [[ $prefix != /usr ]]; then
  echo "package: $dir is configured for $prefix; a package installs into /usr." >&2
  echo "package: reconfigure it: cmake -S $root -B $dir -DCMAKE_INSTALL_PREFIX=/usr" >&2
  exit 1
fi
for tool in cpack dpkg-deb dpkg-shlibdeps help2man; do
  command -v "$tool" >/dev/null || { echo "package: $tool not found (run scripts/setup.sh)" >&2; exit 1; }
done

cmake --build "$dir" -j "${RAILYARD_JOBS:-$(nproc)}" --target package_payload
rm -f "$dir"/package/railyard_*.deb
if ! (cd "$dir" && cpack -G DEB --config CPackConfig.cmake) >"$dir/package.log" 2>&1; then
  cat "$dir/package.log" >&2
  exit 1
fi
debs=("$dir"/package/railyard_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || { echo "package: expected one .deb in $dir/package" >&2; exit 1; }
deb=${debs[0]}
echo "package: $(dpkg-deb -f "$deb" Package Version Architecture | paste -sd' ') ($(du -k "$deb" | cut -f1) KiB)"
echo "package: Depends: $(dpkg-deb -f "$deb" Depends)"

if [[ ${RAILYARD_LINTIAN:-1} != 0 ]]; then
  command -v lintian >/dev/null || { echo "package: lintian not found (run scripts/setup.sh)" >&2; exit 1; }
  # --fail-on error,warning: an overridden tag is not reported; any other
  # warning is a regression to fix or to explain in lintian-overrides.
  # (lintian --display-info --show-overrides DEB shows the rest.)
  if ! lintian --fail-on error,warning "$deb"; then
    echo "package: lintian reports errors or warnings (above)" >&2
    exit 1
  fi
  echo "package: lintian: no errors, no warnings"
fi
echo "$deb"
