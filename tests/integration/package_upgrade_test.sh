#!/usr/bin/env bash
# Upgrade safety, in a throwaway root (dpkg --root, as package_install_test.sh):
# an older build of the package is installed, the operator edits two conffiles,
# disables the unit and railyardd leaves a database; the newer package is
# installed over it. Then:
#  - a conffile the operator edited and the new package left as it was
#    (railyard-plugin.yaml) keeps the edit, and dpkg has nothing to ask;
#  - a conffile both changed (railyardd.yaml) keeps the operator's version under
#    --force-confold (what unattended upgrades pass) and the package's new one
#    lands beside it as railyardd.yaml.dpkg-dist;
#  - /var/lib/railyard keeps its files byte for byte, its owner and mode; the
#    user keeps its uid; the unit stays disabled.
# The older build is the newer one repacked with a lower version and an older
# railyardd.yaml (one build tree cannot compile two versions within the test's
# time); what dpkg does depends on the versions and the conffiles' checksums,
# which this reproduces. Migrating the database's schema belongs to the
# controller (its own issue) and is not tested here.
#
# Usage (ctest does this): package_upgrade_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

SRC=$(realpath "$2")
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
# shellcheck source=package_lib.sh
source "$SRC/tests/integration/package_lib.sh"
ry_require_tools dpkg dpkg-deb dpkg-query systemd-sysusers systemd-tmpfiles deb-systemd-helper
ry_tmpdir

NEW=$(ry_pkg_deb "$BIN")
NEW_VERSION=$(dpkg-deb -f "$NEW" Version)
OLD_VERSION=${NEW_VERSION%-*}~prev-1
dpkg --compare-versions "$OLD_VERSION" lt "$NEW_VERSION" || ry_fail "$OLD_VERSION is not older than $NEW_VERSION"

# The older build: the same files, a lower version, a railyardd.yaml that
# differs from the new one (as a default changed between releases).
dpkg-deb -R "$NEW" old
sed -i "s/^Version: .*/Version: $OLD_VERSION/" old/DEBIAN/control
sed -i 's/^log_level: info /log_level: warn /' old/etc/railyard/railyardd.yaml
dpkg-deb --fsys-tarfile "$NEW" | tar -xO ./etc/railyard/railyardd.yaml >new-railyardd.yaml
if cmp -s old/etc/railyard/railyardd.yaml new-railyardd.yaml; then ry_fail "the older railyardd.yaml does not differ"; fi
(cd old && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >old/DEBIAN/md5sums
dpkg-deb --root-owner-group -Zgzip -z1 -b old old.deb >/dev/null

R=$RY_TMP/root
ry_pkg_root "$R"
ry_dpkg "$R" -i old.deb
ry_assert_eq "$OLD_VERSION" "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version}' railyard)" "older version installed"

# The operator's edits and railyardd's state.
sed -i 's/^log_level: info/log_level: verbose  # edited by the operator/' "$R/etc/railyard/railyard-plugin.yaml"
sed -i 's/^log_level: .*/log_level: debug  # edited by the operator/' "$R/etc/railyard/railyardd.yaml"
echo "operator-token-0123456789abcdef" >"$R/etc/railyard/slurm.token"
chmod 600 "$R/etc/railyard/slurm.token"
head -c 65536 /dev/urandom >"$R/var/lib/railyard/railyard.db"
printf 'drains: {links: ["S-0000000000000001[3]"]}\n' >"$R/var/lib/railyard/policy.yaml"
(cd "$R/var/lib/railyard" && sha256sum railyard.db policy.yaml) >state.sha256
state_meta=$(stat -c '%a %u %g' "$R/var/lib/railyard")
uid=$(awk -F: '$1 == "railyard" {print $3}' "$R/etc/passwd")
systemctl --root="$R" disable railyardd.service 2>/dev/null  # offline: no running systemd is asked
[[ ! -e $R/etc/systemd/system/multi-user.target.wants/railyardd.service ]] || ry_fail "disable did not take"

ry_dpkg "$R" --force-confold -i "$NEW"
ry_assert_eq "$NEW_VERSION" "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version}' railyard)" "newer version installed"
ry_assert_eq "install ok installed" "$(ry_pkg_status "$R")" "status after the upgrade"

grep -q '^log_level: verbose  # edited by the operator$' "$R/etc/railyard/railyard-plugin.yaml" ||
  ry_fail "the edited railyard-plugin.yaml was replaced"
grep -q '^log_level: debug  # edited by the operator$' "$R/etc/railyard/railyardd.yaml" ||
  ry_fail "the edited railyardd.yaml was replaced"
# dpkg weighed railyardd.yaml only (a question without --force-confold).
grep -q "^Configuration file '/etc/railyard/railyardd.yaml'" "$R/dpkg.out" ||
  ry_fail "dpkg did not see the conflict on railyardd.yaml"
grep -q "^Configuration file '/etc/railyard/railyard-plugin.yaml'" "$R/dpkg.out" &&
  ry_fail "dpkg asked about railyard-plugin.yaml, which the package did not change"
cmp -s "$R/etc/railyard/railyardd.yaml.dpkg-dist" new-railyardd.yaml ||
  ry_fail "the package's new railyardd.yaml is not beside the operator's (.dpkg-dist)"
[[ -f $R/etc/railyard/slurm.token ]] || ry_fail "the operator's token file is gone"
(cd "$R/var/lib/railyard" && sha256sum -c --quiet "$RY_TMP/state.sha256") || ry_fail "/var/lib/railyard changed"
ry_assert_eq "$state_meta" "$(stat -c '%a %u %g' "$R/var/lib/railyard")" "/var/lib/railyard mode and owner"
ry_assert_eq "$uid" "$(awk -F: '$1 == "railyard" {print $3}' "$R/etc/passwd")" "the user's uid"
[[ ! -e $R/etc/systemd/system/multi-user.target.wants/railyardd.service ]] ||
  ry_fail "the upgrade enabled the unit the operator disabled"
ry_pass "upgrade $OLD_VERSION -> $NEW_VERSION: edited conffiles kept (.dpkg-dist beside), /var/lib/railyard intact, unit left disabled"
