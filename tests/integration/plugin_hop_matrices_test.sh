#!/usr/bin/env bash
# The plugin's min-hop matrices (build_lid_matrices, sm_plugin/hop_matrices.h)
# must equal OpenSM's own, which multicast and SA rely on. On a degraded
# 3-level ROFT (switch links removed), OpenSM runs twice with the railyard
# engine: once with `hop_matrices: opensm` (OpenSM builds them), once with the
# default (railyard builds them); with log_flags ROUTING OpenSM dumps them to
# opensm-lid-matrix.dump, and the two dumps must be byte-identical. The LIDs
# are the same in both runs (OpenSM's guid2lid cache in the same folder).
#
# Usage (ctest does this): plugin_hop_matrices_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

gen=(topo gen --servers 128 --rails 8 --levels 3 --radix 16 --remove-switch-links 5 --seed 5)
"$RAILYARD" "${gen[@]}" -o f.net 2>gen.err || { cat gen.err >&2; ry_fail "topo gen failed"; }

ry_start_ibsim f.net
for mode in opensm railyard; do
  printf 'hop_matrices: %s\nlog_level: verbose\n' "$mode" >"plugin-$mode.yaml"
  ry_start_opensm --timeout 120 \
    --conf "event_plugin_name osmrailyard" \
    --conf "event_plugin_options $RY_TMP/plugin-$mode.yaml" \
    --conf "routing_engine railyard" \
    --conf "log_flags 0x43"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used ($mode hop matrices)"
  # The dump is written just before SUBNET UP; wait until it is complete.
  ry_wait_for 30 "opensm-lid-matrix.dump" test -s "$RY_OPENSM_DIR/opensm-lid-matrix.dump"
  sleep 0.5
  cp "$RY_OPENSM_DIR/opensm-lid-matrix.dump" "hops-$mode.dump"
  rm -f "$RY_OPENSM_DIR/opensm-lid-matrix.dump"
  if [[ $mode == railyard ]]; then
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: hop matrices: 320 switches, [0-9]+ entries" "railyard built the matrices"
    ry_log "$(grep -o 'railyard: hop matrices: .*' "$RY_OPENSM_LOG" | tail -n 1)"
  else
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: time hop matrices by OpenSM" "OpenSM built the matrices"
  fi
  ry_stop_opensm
done

rows=$(grep -c '^0x' hops-opensm.dump)
((rows > 0)) || ry_fail "no hop rows in OpenSM's dump"
if ! cmp -s hops-opensm.dump hops-railyard.dump; then
  diff hops-opensm.dump hops-railyard.dump | head -n 20 >&2
  ry_fail "railyard's hop matrices differ from OpenSM's"
fi
ry_pass "hop matrices identical to OpenSM's: $rows (switch, LID) rows on a degraded 3-level ROFT"
