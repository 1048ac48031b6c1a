#!/usr/bin/env bash
# Run from the installed layout: the package installed into a throwaway root
# (dpkg --root, as package_install_test.sh), then the real ibsim + OpenSM +
# railyardd with what the package installed and nothing from the build tree:
#  - OpenSM's configuration adds only the lines of the packaged fragment
#    (/usr/share/doc/railyard/opensm-railyard.conf);
#  - OpenSM finds libosmrailyard.so by itself, without LD_LIBRARY_PATH: it runs
#    in a mount namespace of its own where the root's library folder is laid
#    over the machine's (an overlay of /usr/lib/<multiarch>, seen by OpenSM
#    alone), and the plugin it mapped is checked to be the packaged file; the
#    same for /usr/libexec, where the plugin finds the packaged port probe at
#    the path compiled into it;
#  - railyardd is the packaged binary with the packaged railyardd.yaml and
#    railyard-plugin.yaml, their /etc/railyard, /var/lib/railyard and
#    /run/railyard rewritten into the root; two other changes, both because
#    the root's user and group are not this machine's: the socket's group is
#    the group this test runs as, and token files are made as README.Debian says.
# Checks: railyard routed the fabric (not a fallback), 100% of the CA pairs
# reachable without credit loops (read back with ibroute, checked with the
# packaged `railyard verify`), railyardd received the fabric over the packaged
# socket path and wrote the policy file the plugin then loaded, and the
# packaged railyardctl reads it.
#
# Usage (ctest does this): package_opensm_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

SRC=$(realpath "$2")
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
# shellcheck source=package_lib.sh
source "$SRC/tests/integration/package_lib.sh"
ry_require_tools ibsim opensm ibnetdiscover ibroute dpkg curl jq
unset LD_LIBRARY_PATH
ry_tmpdir

DEB=$(ry_pkg_deb "$BIN")
R=$RY_TMP/root
ry_pkg_root "$R"
ry_dpkg "$R" -i "$DEB"
LIBDIR=$(ry_pkg_libdir "$R")
RAILYARD=$R/usr/bin/railyard

# --- the packaged configuration, rewritten into the root -------------------------
mkdir -p "$R/run/railyard"
for f in railyardd.yaml railyard-plugin.yaml; do
  sed -i -e "s#/etc/railyard/#$R/etc/railyard/#g" -e "s#/var/lib/railyard/#$R/var/lib/railyard/#g" \
    -e "s#/run/railyard/#$R/run/railyard/#g" "$R/etc/railyard/$f"
done
sed -i "s/^\( *plugin_socket_group:\) railyard$/\1 $(id -gn)/" "$R/etc/railyard/railyardd.yaml"
grep -q "plugin_socket_group: $(id -gn)$" "$R/etc/railyard/railyardd.yaml" ||
  ry_fail "the packaged railyardd.yaml has no plugin_socket_group railyard line to rewrite"
(
  umask 077
  echo "slurm-token-0123456789abcdef" >"$R/etc/railyard/slurm.token"
  echo "grafana-token-0123456789abcdef" >"$R/etc/railyard/grafana.token"
)
SOCK=$(sed -n 's/^ *plugin_socket: //p' "$R/etc/railyard/railyardd.yaml")
ry_assert_eq "$R/run/railyard/plugin.sock" "$SOCK" "plugin socket path"
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"

# The fragment's lines (comments dropped), /etc/railyard rewritten.
mapfile -t fragment < <(grep -Ev '^[[:space:]]*(#|$)' "$R/usr/share/doc/railyard/opensm-railyard.conf" |
  sed "s#/etc/railyard/#$R/etc/railyard/#g")
((${#fragment[@]} == 3)) || ry_fail "expected 3 lines in the OpenSM fragment, got: ${fragment[*]}"
conf_args=()
for line in "${fragment[@]}"; do conf_args+=(--conf "$line"); done

# OpenSM in a mount namespace where /$LIBDIR and /usr/libexec show the root's
# files over the machine's: `opensm` first in PATH is this wrapper (exec all
# the way, so lib.sh's PID is OpenSM's).
mkdir -p wrap
overlays="mount -t overlay overlay -o lowerdir=$R/$LIBDIR:/$LIBDIR /$LIBDIR &&
  mount -t overlay overlay -o lowerdir=$R/usr/libexec:/usr/libexec /usr/libexec"
if unshare --mount --propagation private -- sh -c "$overlays" 2>overlay.err; then
  cat >wrap/opensm <<EOF
#!/bin/sh
exec unshare --mount --propagation private -- sh -c '$overlays && exec $(command -v opensm) "\$@"' opensm "\$@"
EOF
  chmod +x wrap/opensm
  export PATH=$RY_TMP/wrap:$PATH
  HOW="by itself (no LD_LIBRARY_PATH)"
else
  # Without mount namespaces (an unprivileged container) the loader cannot see
  # the root's folder by itself; say so, and check the rest.
  ry_log "no overlay mount here ($(cat overlay.err)): the plugin is found through LD_LIBRARY_PATH"
  export LD_LIBRARY_PATH=$R/$LIBDIR
  HOW="through LD_LIBRARY_PATH (no mount namespace)"
fi

# --- run ----------------------------------------------------------------------------
"$RAILYARD" topo gen --servers 8 --rails 4 --radix 8 -o f.net 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
ry_start_railyardd "$R/usr/bin" "$R/etc/railyard/railyardd.yaml"
ry_start_ibsim f.net
ry_start_opensm --timeout 120 "${conf_args[@]}"
ry_wait_log "railyard: pass 1: time " 60

# The plugin OpenSM mapped is the packaged file, at the loader's own path.
maps=$(grep -m1 'libosmrailyard\.so' "/proc/$RY_OPENSM_PID/maps" | awk '{print $NF}')
[[ -n $maps ]] || ry_fail "OpenSM has no libosmrailyard.so mapped"
cmp -s "/proc/$RY_OPENSM_PID/root$maps" "$R/$LIBDIR/libosmrailyard.so" ||
  ry_fail "OpenSM mapped $maps, not the packaged plugin"
if [[ -z ${LD_LIBRARY_PATH:-} ]]; then
  ry_assert_eq "/$LIBDIR/libosmrailyard.so" "$maps" "the plugin's path in OpenSM"
  tr '\0' '\n' <"/proc/$RY_OPENSM_PID/environ" | grep '^LD_LIBRARY_PATH=' >/dev/null && ry_fail "OpenSM has LD_LIBRARY_PATH"
  ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: fast path on; link failures \\(trap 128\\): probed with /usr/libexec/railyard/railyard-port-probe" \
    "the plugin found the packaged port probe at its compiled-in path"
fi

ry_assert_eq railyard "$(ry_opensm_engine)" "engine that configured the switches"
ry_assert_eq 0 "$(ry_log_count "cannot build fwd tables|refused, OpenSM falls back")" "refusals"
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: unreachable CA pairs 0," "no unreachable pairs"
ry_snapshot routed
ry_verify_ok "$RAILYARD" routed

# railyardd got the fabric over the packaged socket path, and wrote the policy
# file the plugin reads.
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok
ry_assert_eq 32 "$(ry_api GET /api/v1/fabric "" slurm-token-0123456789abcdef | sed '$d' | jq .cas)" "CAs railyardd sees"
[[ -f $R/var/lib/railyard/policy.yaml && -f $R/var/lib/railyard/railyard.db ]] ||
  ry_fail "railyardd wrote no policy or database under /var/lib/railyard"
ry_assert_file_contains "$RY_OPENSM_LOG" "policy loaded from $R/var/lib/railyard/policy.yaml" "the plugin read railyardd's policy"
status=$("$R/usr/bin/railyardctl" --url "$RY_URL" --token-file "$R/etc/railyard/slurm.token" status 2>&1) ||
  ry_fail "railyardctl status: $status"
ry_log "railyardctl status: $(echo "$status" | head -n 3 | paste -sd' ')"
ry_pass "installed layout: OpenSM loaded the packaged plugin $HOW and routed with railyard; railyardd (packaged config) has the fabric"
