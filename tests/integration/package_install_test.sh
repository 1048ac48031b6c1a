#!/usr/bin/env bash
# The Debian package installed into a throwaway root (dpkg --root; never this
# machine's /usr, and no systemd unit is ever started), then removed and purged:
#  1. its fields: name, version, architecture, dependencies (shlibdeps + opensm);
#  2. install: the commands in /usr/bin, the plugin in a folder the dynamic
#     loader searches by itself (OpenSM opens "libosmrailyard.so" by bare name),
#     the hardened unit, conffiles, man pages that render, the OpenSM fragment in
#     /usr/share/doc/railyard; the maintainer scripts made the system user, its
#     state folder (mode 0750) and enabled the unit;
#  3. the maintainer scripts' systemd branch, which the chrootless install
#     skips, run alone with stand-ins for systemctl and friends: a first install
#     starts nothing, an upgrade restarts a running railyardd, a removal stops it;
#  4. remove: commands gone; conffiles, the database and the user kept; the unit
#     masked;
#  5. purge: nothing of the package left in the root but the system user.
#
# Usage (ctest does this): package_install_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

SRC=$(realpath "$2")
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
# shellcheck source=package_lib.sh
source "$SRC/tests/integration/package_lib.sh"
ry_require_tools dpkg dpkg-deb dpkg-query systemd-sysusers systemd-tmpfiles deb-systemd-helper man
ry_tmpdir

DEB=$(ry_pkg_deb "$BIN")
VERSION=$(sed -n 's/^project(railyard VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)

# --- 1. the package's fields ------------------------------------------------------
ry_assert_eq "railyard_${VERSION}-1_${ARCH}.deb" "$(basename "$DEB")" "file name"
ry_assert_eq railyard "$(dpkg-deb -f "$DEB" Package)" "Package"
ry_assert_eq "$VERSION-1" "$(dpkg-deb -f "$DEB" Version)" "Version"
depends=$(dpkg-deb -f "$DEB" Depends)
for dep in "opensm (>= 3.3.23)" "opensm (<< 3.3.24~)" "libc6 (>=" "libstdc++6 (>=" "libyaml-cpp0.7" \
           "libsqlite3-0" "libibumad3" "systemd | systemd-standalone-sysusers"; do
  ry_assert_contains "$depends" "$dep" "Depends"
done
ry_log "Depends: $depends"

# --- 2. install ---------------------------------------------------------------------
R=$RY_TMP/root
ry_pkg_root "$R"
# tree_list: every file of the root, and every folder but the ones systemd owns.
tree_list() { (cd "$R" && { find . ! -type d; find . -type d ! -path './etc/systemd*' ! -path './var/lib/systemd*'; } | sort); }
tree_list >before.list
ry_dpkg "$R" -i "$DEB"
ry_assert_eq "install ok installed" "$(ry_pkg_status "$R")" "status after install"

for b in railyard railyardd railyardctl; do
  [[ -x $R/usr/bin/$b ]] || ry_fail "/usr/bin/$b missing or not executable"
  "$R/usr/bin/$b" --help >/dev/null || ry_fail "$b --help failed"
  [[ -s $R/usr/share/man/man1/$b.1.gz ]] || ry_fail "no man page for $b"
  man -l "$R/usr/share/man/man1/$b.1.gz" 2>/dev/null | grep "$b" >/dev/null || ry_fail "man page of $b does not render"
done
ry_assert_contains "$(zcat "$R/usr/share/man/man1/railyardd.1.gz")" "config check" "railyardd(1) from --help"
[[ -x $R/usr/libexec/railyard/railyard-port-probe ]] || ry_fail "the port probe is missing"

# The plugin: in a folder of the loader's own search path (what dlopen of a
# bare name searches after the cache), exporting OpenSM's one entry point.
LIBDIR=$(ry_pkg_libdir "$R")
loader=$(readelf -l /bin/sh | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
"$loader" --help | grep "^ */$LIBDIR (system search path)" >/dev/null ||
  ry_fail "/$LIBDIR is not in the dynamic loader's system search path"
nm -D --defined-only "$R/$LIBDIR/libosmrailyard.so" | grep -E ' osm_event_plugin(@@[A-Za-z0-9_.]+)?$' >/dev/null ||
  ry_fail "libosmrailyard.so does not export osm_event_plugin"

UNIT=$R/lib/systemd/system/railyardd.service
for line in "User=railyard" "Group=railyard" "ExecStart=/usr/bin/railyardd --config /etc/railyard/railyardd.yaml" \
            "ProtectSystem=strict" "NoNewPrivileges=true" "StateDirectory=railyard" "RuntimeDirectory=railyard" \
            "CapabilityBoundingSet="; do
  grep -qx -- "$line" "$UNIT" || ry_fail "railyardd.service lacks '$line'"
done
# systemd's own checks, on a copy whose commands are the root's (the root has
# no systemd to verify against): the unit loads, and its exposure stays "OK"
# (at most 2.0 of 10; 1.7 when written).
sed "s#/usr/bin/railyardd#$R/usr/bin/railyardd#g" "$UNIT" >railyardd.service
systemd-analyze verify --man=no "$RY_TMP/railyardd.service" >verify.out 2>&1 ||
  { cat verify.out >&2; ry_fail "systemd-analyze verify of the unit"; }
systemd-analyze security --offline=yes --threshold=20 "$RY_TMP/railyardd.service" >security.out 2>&1 ||
  { cat security.out >&2; ry_fail "the unit's exposure is above 2.0"; }
ry_log "unit: $(grep -o 'Overall exposure level.*' security.out)"

conffiles=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Conffiles}' railyard | awk '{print $1}' | sort | paste -sd' ')
ry_assert_eq "/etc/railyard/policy.yaml /etc/railyard/railyard-plugin.yaml /etc/railyard/railyardd.yaml" "$conffiles" "conffiles"
for f in opensm-railyard.conf README.Debian copyright changelog.Debian.gz examples/policy.example.yaml; do
  [[ -s $R/usr/share/doc/railyard/$f ]] || ry_fail "/usr/share/doc/railyard/$f missing"
done
grep -qx 'event_plugin_name osmrailyard' "$R/usr/share/doc/railyard/opensm-railyard.conf" ||
  ry_fail "the OpenSM fragment does not load the plugin"
# The packaged configuration checks, its token files once made (as README.Debian says).
mkdir -p cfg
for t in slurm grafana; do echo "$t-token-0123456789abcdef" >"cfg/$t.token"; done
chmod 600 cfg/*.token
if ! grep -Eq '^  plugin_socket_mode: "0660"$' "$R/etc/railyard/railyardd.yaml" ||
   ! grep -Eq '^  plugin_socket_group: railyard$' "$R/etc/railyard/railyardd.yaml"; then
  ry_fail "the packaged railyardd.yaml does not open the plugin socket to group railyard"
fi
# The root's group railyard is not this machine's: the group this test runs as.
sed -e "s#/etc/railyard/#$RY_TMP/cfg/#g" -e "s/^  plugin_socket_group: railyard$/  plugin_socket_group: $(id -gn)/" \
  "$R/etc/railyard/railyardd.yaml" >cfg/railyardd.yaml
cp "$R/etc/railyard/policy.yaml" cfg/policy.yaml
out=$("$R/usr/bin/railyardd" config check cfg/railyardd.yaml 2>&1) || ry_fail "packaged railyardd.yaml: $out"
ry_assert_contains "$out" "ok (listen 127.0.0.1:8640, 2 tokens" "config check of the packaged railyardd.yaml"

# What the maintainer scripts did.
IFS=: read -r _ _ uid gid _ home shell < <(grep '^railyard:' "$R/etc/passwd") || ry_fail "no railyard user"
ry_assert_eq /var/lib/railyard "$home" "the user's home"
ry_assert_eq /usr/sbin/nologin "$shell" "the user's shell"
grep -q "^railyard:x:$gid:" "$R/etc/group" || ry_fail "no railyard group with gid $gid"
((uid < 1000)) || ry_fail "railyard is not a system user (uid $uid)"
ry_assert_eq "750 $uid $gid" "$(stat -c '%a %u %g' "$R/var/lib/railyard")" "/var/lib/railyard mode and owner"
wants=$R/etc/systemd/system/multi-user.target.wants/railyardd.service
ry_assert_eq /lib/systemd/system/railyardd.service "$(readlink "$wants")" "unit enabled (multi-user.target.wants)"
ry_pass "installed: files, conffiles, man pages, user, state folder, unit enabled"

# --- 3. the systemd branch of the maintainer scripts ----------------------------------
# With DPKG_ROOT set (above) the scripts never talk to systemd. Here they run
# as on a booted system: DPKG_ROOT empty and /run/systemd/system present, in a
# mount namespace of their own (a tmpfs on /run), with every outside command
# they call replaced by a stand-in that only logs: nothing on this machine is
# touched, no unit started.
SCRIPTS=$RY_TMP/scripts
dpkg-deb -e "$DEB" "$SCRIPTS"
mkdir -p stubs
for tool in systemctl deb-systemd-helper deb-systemd-invoke systemd-sysusers systemd-tmpfiles; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/calls.log"\n' "$tool" "$RY_TMP" >"stubs/$tool"
  chmod +x "stubs/$tool"
done
# run_script SCRIPT ARGS...: one maintainer script, as on a booted system.
run_script() {
  : >calls.log
  env -i PATH="$RY_TMP/stubs:/usr/bin:/bin" unshare --mount --propagation private -- sh -c '
    mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system || exit 90
    for t in systemctl deb-systemd-helper deb-systemd-invoke systemd-sysusers systemd-tmpfiles; do
      [ "$(command -v "$t")" = "$0/stubs/$t" ] || exit 91
    done
    exec "$@"' "$RY_TMP" "$@"
}
if unshare --mount --propagation private -- sh -c 'mount -t tmpfs tmpfs /run' 2>/dev/null; then
  run_script "$SCRIPTS/postinst" configure || ry_fail "postinst configure (first install): exit $?"
  grep -q '^systemd-sysusers railyard.conf$' calls.log || ry_fail "postinst did not create the user: $(cat calls.log)"
  grep -q '^deb-systemd-helper enable railyardd.service$' calls.log ||
    ry_fail "postinst did not enable the unit: $(cat calls.log)"
  grep -q '^systemctl --system daemon-reload$' calls.log || ry_fail "postinst did not reload systemd"
  if grep -Eq 'deb-systemd-invoke|systemctl .*(start|restart)' calls.log; then
    ry_fail "a first install starts railyardd: $(cat calls.log)"
  fi
  run_script "$SCRIPTS/postinst" configure "$VERSION-0" || ry_fail "postinst configure (upgrade): exit $?"
  grep -q '^deb-systemd-invoke try-restart railyardd.service$' calls.log ||
    ry_fail "an upgrade does not restart a running railyardd: $(cat calls.log)"
  run_script "$SCRIPTS/prerm" upgrade "$VERSION-2" || ry_fail "prerm upgrade: exit $?"
  [[ ! -s calls.log ]] || ry_fail "prerm upgrade stops railyardd: $(cat calls.log)"
  run_script "$SCRIPTS/prerm" remove || ry_fail "prerm remove: exit $?"
  grep -q '^deb-systemd-invoke stop railyardd.service$' calls.log || ry_fail "prerm remove does not stop railyardd"
  ry_pass "maintainer scripts on a booted system: first install enables and starts nothing, upgrade restarts, remove stops"
else
  ry_log "no mount namespace here: the scripts' systemd branch is not exercised"
fi

# --- 4. remove -------------------------------------------------------------------------
echo "state" >"$R/var/lib/railyard/railyard.db"
ry_dpkg "$R" -r railyard
ry_assert_eq "deinstall ok config-files" "$(ry_pkg_status "$R")" "status after remove"
[[ ! -e $R/usr/bin/railyardd && ! -e $R/$LIBDIR/libosmrailyard.so ]] || ry_fail "remove left the programs"
for f in railyardd.yaml railyard-plugin.yaml policy.yaml; do
  [[ -f $R/etc/railyard/$f ]] || ry_fail "remove deleted the conffile /etc/railyard/$f"
done
[[ -f $R/var/lib/railyard/railyard.db ]] || ry_fail "remove deleted the database"
grep -q '^railyard:' "$R/etc/passwd" || ry_fail "remove deleted the user"
ry_assert_eq /dev/null "$(readlink "$R/etc/systemd/system/railyardd.service")" "the unit masked after remove"
ry_pass "removed: conffiles, database and user kept, unit masked"

# --- 5. purge --------------------------------------------------------------------------
ry_dpkg "$R" -P railyard
ry_assert_eq "" "$(ry_pkg_status "$R")" "status after purge"
# Left: the system user (passwd, group, shadow, gshadow and their lock),
# dpkg's own records, and the folders deb-systemd-helper made for its links
# and state (systemd's own on a real system; empty: tree_list lists files). Anything
# else is a leftover.
tree_list >after.list
leftover=$(comm -13 before.list after.list |
  grep -Ev '^\./(etc/(passwd|group|shadow|gshadow|\.pwd\.lock)|var/lib/dpkg/.*|var/log/dpkg\.log|dpkg\.out)$' || true)
[[ -z $leftover ]] || ry_fail "purge left: $(echo "$leftover" | paste -sd' ')"
grep -q '^railyard:' "$R/etc/passwd" || ry_fail "purge deleted the system user"
ry_pass "purged: nothing left but the system user"
