# shellcheck shell=bash
# package_lib.sh — the Debian package in a throwaway root, for the package tests
# (package_install_test.sh, package_upgrade_test.sh, package_opensm_test.sh).
# Source it after lib.sh.
#
#   deb=$(ry_pkg_deb "$BIN")          # BIN/package/railyard_*.deb, rebuilt if stale
#   ry_pkg_root "$RY_TMP/root"        # an empty dpkg root (its own database)
#   ry_dpkg "$RY_TMP/root" -i "$deb"  # dpkg on that root
#
# Never the machine's own /usr, /etc or /var: dpkg works on the root's own
# database (--root), and the maintainer scripts run outside a chroot with
# DPKG_ROOT set (--force-script-chrootless; the root has no shell of its own):
# scripts/packaging/deb/post* write below DPKG_ROOT only (systemd-sysusers --root,
# systemd-tmpfiles --root, deb-systemd-helper) and never call systemctl then.
# --force-depends: the root holds no opensm, libc6, ... (the machine's serve).

# ry_pkg_deb BIN: the path of the package built from BIN (scripts/package.sh,
# which scripts/test.sh runs before the integration tests); built again here,
# without lintian, when it is missing or older than what it holds.
ry_pkg_deb() {
  local bin=$1 src debs f stale=0
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  debs=("$bin"/package/railyard_*.deb)
  if [[ ! -f ${debs[0]} ]]; then
    stale=1
  else
    for f in "$bin/railyard" "$bin/railyardd" "$bin/railyardctl" "$bin/sm_plugin/libosmrailyard.so"; do
      [[ $f -nt ${debs[0]} ]] && stale=1
    done
    [[ -n $(find "$src/scripts/packaging" "$src/config" -newer "${debs[0]}" -type f 2>/dev/null | head -n 1) ]] && stale=1
  fi
  if ((stale)); then
    RAILYARD_LINTIAN=0 bash "$src/scripts/package.sh" "$bin" >"${RY_TMP:-/tmp}/package.out" 2>&1 ||
      { cat "${RY_TMP:-/tmp}/package.out" >&2; ry_fail "scripts/package.sh $bin failed"; }
    debs=("$bin"/package/railyard_*.deb)
  fi
  [[ -f ${debs[0]} ]] || ry_fail "no package in $bin/package"
  echo "${debs[0]}"
}

# ry_pkg_root DIR: an empty root with a dpkg database and the folders dpkg
# expects.
ry_pkg_root() {
  local r=$1
  mkdir -p "$r"/var/lib/dpkg/{info,updates,triggers,alternatives} "$r"/var/log "$r"/etc
  : >"$r/var/lib/dpkg/status"
  : >"$r/var/lib/dpkg/available"
}

# ry_dpkg ROOT ARGS...: dpkg on ROOT (see the top of this file); output to
# ROOT/dpkg.out, shown when it fails.
ry_dpkg() {
  local r=$1 rc=0
  shift
  dpkg --root="$r" --force-script-chrootless --force-depends "$@" </dev/null >"$r/dpkg.out" 2>&1 || rc=$?
  if ((rc != 0)); then
    cat "$r/dpkg.out" >&2
    ry_fail "dpkg --root=$r $* exited $rc"
  fi
}

# ry_pkg_status ROOT: railyard's dpkg status in ROOT ("install ok installed",
# "deinstall ok config-files", or "" when dpkg no longer knows it).
ry_pkg_status() {
  dpkg-query --admindir="$1/var/lib/dpkg" -W -f='${Status}' railyard 2>/dev/null || true
}

# ry_pkg_libdir ROOT: the folder, relative to ROOT, that holds the plugin.
ry_pkg_libdir() {
  local found
  found=$(cd "$1" && find usr/lib -name libosmrailyard.so -print -quit)
  [[ -n $found ]] || ry_fail "no libosmrailyard.so under $1/usr/lib"
  dirname "$found"
}
