#!/usr/bin/env bash
# The plugin's min-hop matrices (build_lid_matrices, sm_plugin/hop_matrices.h)
# must equal OpenSM's own, which multicast and SA rely on. On a degraded
# 3-level ROFT (switch links removed), OpenSM runs twice with the railyard
# engine: once with `hop_matrices: opensm` (OpenSM builds them), once with the
# default (railyard builds them); with log_flags ROUTING OpenSM dumps them to
# opensm-lid-matrix.dump, and the two dumps must be byte-identical. The LIDs
# are the same in both runs (OpenSM's guid2lid cache in the same folder).
# Each run then goes through two more routing passes, compared the same way:
#  - a leaf uplink goes down (ibsim `Unlink`): the switch graph changed, the
#    plugin computes new distances and rewrites rows it allocated in the
#    first pass (it must allocate none);
#  - a CA link goes down: the switch graph is the same, the plugin reuses its
#    distances and only rewrites the rows OpenSM cleared.
# Both links are restored (`ReLink`) before the next run.
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

# The first leaf: its first port cabled to a switch and its first CA port,
# as the ibsim console names them.
read -r uplink calink < <(awk '/^Switch/ { if (name != "") exit; name = $3; next }
  name != "" && /^\[[0-9]+\]/ { p = $1; gsub(/[^0-9]/, "", p)
    if (up == "" && $2 ~ /^"S-/) up = name "[" p "]"
    if (ca == "" && $2 ~ /^"H-/) ca = name "[" p "]" }
  END { print up, ca }' f.net)
[[ -n "$uplink" && -n "$calink" ]] || ry_fail "no leaf uplink or CA link found in f.net"

# Waits for OpenSM's next lid-matrix dump (written just before SUBNET UP) and
# keeps it as $1.
take_dump() {
  ry_wait_for 60 "opensm-lid-matrix.dump" test -s "$RY_OPENSM_DIR/opensm-lid-matrix.dump"
  sleep 0.5
  cp "$RY_OPENSM_DIR/opensm-lid-matrix.dump" "$1"
  rm -f "$RY_OPENSM_DIR/opensm-lid-matrix.dump"
}
# ry_ibsim_cmd, then the next SUBNET UP and its dump.
event_dump() {
  local ups
  ups=$(ry_log_count 'SUBNET UP')
  ry_ibsim_cmd "$1"
  ry_wait_log 'SUBNET UP' 120 "$RY_OPENSM_LOG" $((ups + 1))
  take_dump "$2"
}

ry_start_ibsim f.net --console
for mode in opensm railyard; do
  printf 'hop_matrices: %s\nlog_level: verbose\n' "$mode" >"plugin-$mode.yaml"
  ry_start_opensm --timeout 120 \
    --conf "event_plugin_name osmrailyard" \
    --conf "event_plugin_options $RY_TMP/plugin-$mode.yaml" \
    --conf "routing_engine railyard" \
    --conf "log_flags 0x43"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used ($mode hop matrices)"
  take_dump "hops-$mode.dump"
  event_dump "Unlink $uplink" "hops-$mode.uplink-down.dump"
  event_dump "Unlink $calink" "hops-$mode.ca-down.dump"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used after the links went down ($mode hop matrices)"
  if [[ $mode == railyard ]]; then
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: hop matrices: 320 switches, [0-9]+ entries" "railyard built the matrices"
    grep -o 'railyard: hop matrices: .*' "$RY_OPENSM_LOG" >hop-passes.txt
    ry_log "$(cat hop-passes.txt)"
    passes=$(wc -l <hop-passes.txt)
    ((passes >= 3)) || ry_fail "railyard built the matrices $passes times, expected at least 3 (start, uplink down, CA link down)"
    # Allocated once: only the first pass adds rows (the LIDs of the
    # switches never change here).
    first_alloc=$(sed -n '1s/.*, \([0-9]*\) allocated, .*/\1/p' hop-passes.txt)
    ((${first_alloc:-0} > 0)) || ry_fail "the first pass allocated no rows: $(head -n 1 hop-passes.txt)"
    ry_assert_eq 0 "$(tail -n +2 hop-passes.txt | grep -vc ', 0 allocated, ' || true)" "passes after the first allocate nothing"
    # Each switch's hops[] array is faulted in for writing once, on the
    # first pass (OpenSM keeps the arrays).
    ry_assert_eq 320 "$(sed -n '1s/.*, \([0-9]*\) arrays prefaulted).*/\1/p' hop-passes.txt)" "the first pass prefaults every switch's array"
    ry_assert_eq 0 "$(tail -n +2 hop-passes.txt | grep -vc ', 0 arrays prefaulted)' || true)" "passes after the first prefault nothing"
    ry_assert_file_contains hop-passes.txt "distances [0-9.]+ ms reused" "a pass with the same switch graph reuses its distances"
  else
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: time hop matrices by OpenSM" "OpenSM built the matrices"
  fi
  ry_stop_opensm
  ry_ibsim_cmd "ReLink $uplink"
  ry_ibsim_cmd "ReLink $calink"
done

for stage in "" .uplink-down .ca-down; do
  rows=$(grep -c '^0x' "hops-opensm$stage.dump" || true)
  ((rows > 0)) || ry_fail "no hop rows in OpenSM's dump$stage"
  if ! cmp -s "hops-opensm$stage.dump" "hops-railyard$stage.dump"; then
    diff "hops-opensm$stage.dump" "hops-railyard$stage.dump" | head -n 20 >&2 || true
    ry_fail "railyard's hop matrices differ from OpenSM's (${stage#.}${stage:-start})"
  fi
done
cmp -s hops-opensm.dump hops-opensm.uplink-down.dump && ry_fail "the uplink going down did not change the hop matrices"
rows=$(grep -c '^0x' hops-opensm.dump)
ry_pass "hop matrices identical to OpenSM's: $rows (switch, LID) rows on a degraded 3-level ROFT, and after a leaf uplink and a CA link went down"
