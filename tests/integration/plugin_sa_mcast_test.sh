#!/usr/bin/env bash
# OpenSM still serves PathRecords and multicast when railyard's plugin fills
# its min-hop matrices (sm_plugin/hop_matrices.h). Multicast is where OpenSM
# reads them: the spanning tree of a group is built port by port from
# hops[lid][port] (osm_switch_recommend_mcast_path) and rooted by hops[lid][0].
# PathRecords walk the LFTs (osm_sa_path_record.c), routed here by railyard.
#
# On a degraded 3-level ROFT (64 CAs, 40 switches, 3 switch links removed)
# OpenSM runs with the railyard engine twice, each time on a fresh ibsim (no
# multicast state left on the switches) with the same LIDs (guid2lid cache):
# `hop_matrices: opensm` (OpenSM builds the matrices) and the default
# (railyard builds them). Each run, with the real saquery / ibroute:
#  - PathRecords (`saquery -p --src-to-dst`) between 12 CA pairs on different
#    leaves, pods and rails: exactly one record each, whose SLID/DLID are the
#    asked LIDs and whose DGID/SGID carry the CAs' port GUIDs;
#  - six CAs on different leaves join the IPoIB broadcast group of the default
#    partition (ff12:401b:ffff::ffff:ffff, which OpenSM creates at start) with a
#    real SubnAdmSet(MCMemberRecord) from tests/tools/mcast_join.cpp (the
#    diags only read multicast state);
#  - `saquery -g` lists the group with the MLID the joins returned; trusted
#    MCMemberRecord queries (`saquery MCMR --mgid --gid`) find the six as full
#    members and a CA that did not join as none;
#  - the switches' MFTs (`ibroute -M` of every switch) hold the group as one
#    tree: every member's port on its leaf, no other CA port, both ends of
#    every switch-to-switch hop, all members connected, no cycle;
#  - a leaf uplink of a member goes down (ibsim console): after OpenSM's next
#    SUBNET UP the MFTs are again such a tree, over the fabric as it is now
#    (ibnetdiscover);
#  - one member leaves (SubnAdmDelete): its port leaves its leaf's MFT, the SA
#    no longer lists it (another member stays), the tree still is one.
# Finally the PathRecords and every MFT snapshot must be identical between
# the two runs: multicast saw the same hop matrices.
#
# Usage (ctest does this): plugin_sa_mcast_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm saquery ibroute ibnetdiscover python3
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
JOIN=$BIN/tests/mcast_join
[[ -x "$JOIN" ]] || ry_fail "mcast_join not built: $JOIN (target mcast_join, needs libibumad-dev)"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$RAILYARD" topo gen --servers 8 --rails 8 --levels 3 --radix 8 --remove-switch-links 3 --seed 3 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
MGID=ff12:401b:ffff::ffff:ffff

# The fabric as discovered: "ca <lid> <port guid> <leaf guid> <leaf port>",
# "sw <lid> <guid> <description>", "link <guid> <port> <guid> <port>" (switch
# to switch, each cable once).
cat >topo.py <<'PY'
import re, sys
sw_lid, out, node, kind = {}, [], None, None
for line in open(sys.argv[1]):
    m = re.match(r'^(Switch|Ca)\s+\d+\s+"([SH])-([0-9a-f]+)".*?#\s*"([^"]*)"(.*)$', line)
    if m:
        kind, node = m.group(1), m.group(3)
        if kind == 'Switch':
            lid = re.search(r'port 0 lid (\d+)', m.group(5)).group(1)
            sw_lid[node] = lid
            out.append(f'sw {lid} {node} {m.group(4).replace(" ", "_")}')
        continue
    m = re.match(r'^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"([SH])-([0-9a-f]+)"\[(\d+)\]', line)
    if not m or node is None:
        continue
    port, own_guid, rkind, rnode, rport = m.groups()
    if kind == 'Ca' and rkind == 'S':
        lid = re.search(r'# lid (\d+)', line).group(1)
        out.append(f'ca {lid} {own_guid} {rnode} {rport}')
    elif kind == 'Switch' and rkind == 'S' and (node, int(port)) < (rnode, int(rport)):
        out.append(f'link {node} {port} {rnode} {rport}')
print('\n'.join(out))
PY

# MFTs of every switch for one MLID from `ibroute -M` outputs, checked
# against the topology: prints "ok <switches in the tree> <hops>" or the
# first problem and exits 1.
cat >mft.py <<'PY'
import re, sys
def mft_ports(lines, mlid):
    """{switch LID: set of ports} of one MLID in `ibroute -M` output: an 'x'
    under a port's number in the 'Ports:' header means the port forwards."""
    out, lid, cols = {}, None, {}
    for line in lines:
        m = re.match(r'^Multicast mlids .* of switch Lid (\d+) guid', line)
        if m:
            lid, cols = m.group(1), {}
            out[lid] = set()
            continue
        if line.lstrip().startswith('Ports:') and lid:
            # Port i is the i-th column (the header prints ports >= 10 by their last digit).
            cols = {m.start(): i for i, m in enumerate(re.finditer(r'\d', line))}
            continue
        m = re.match(r'^0x([0-9a-fA-F]+)\s', line)
        if m and lid and int(m.group(1), 16) == mlid:
            out[lid] = {p for c, p in cols.items() if line[c:c + 1] == 'x'}
    return out
if __name__ == '__main__':
    # mft.py MLID [PORT] < ibroute -M of one switch: 1 or 0 (does PORT
    # forward MLID), or without PORT the ports that do.
    got = set().union(*mft_ports(sys.stdin, int(sys.argv[1], 16)).values())
    print((1 if int(sys.argv[2]) in got else 0) if len(sys.argv) > 2 else ' '.join(map(str, sorted(got))))
PY
cat >tree.py <<'PY'
import re, sys
from mft import mft_ports
topo, mfts, mlid, members = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), set(sys.argv[4].split(','))
sws, cas, links, lid_of = {}, {}, [], {}
for line in open(topo):
    f = line.split()
    if f[0] == 'sw': sws[f[2]] = f[3]; lid_of[f[1]] = f[2]
    elif f[0] == 'ca': cas[(f[3], int(f[4]))] = f[2]
    elif f[0] == 'link': links.append((f[1], int(f[2]), f[3], int(f[4])))
ports = {lid_of[lid]: p for lid, p in mft_ports(open(mfts), mlid).items()}
def fail(msg): print(msg); sys.exit(1)
missing = set(sws) - set(ports)
if missing: fail(f'no ibroute -M output for {len(missing)} switches, e.g. {sws[sorted(missing)[0]]}')
for (leaf, p), guid in cas.items():
    if (p in ports[leaf]) != (guid in members):
        fail(f'{sws[leaf]} port {p} (CA {guid}): in MFT {p in ports[leaf]}, member {guid in members}')
edges, used = [], set()
for a, pa, b, pb in links:
    if (pa in ports[a]) != (pb in ports[b]):
        fail(f'half a hop: {sws[a]}[{pa}] {pa in ports[a]} <-> {sws[b]}[{pb}] {pb in ports[b]}')
    if pa in ports[a]: edges.append((a, b)); used |= {(a, pa), (b, pb)}
used |= {(leaf, p) for (leaf, p), guid in cas.items() if guid in members}
for s, ps in ports.items():
    for p in ps:
        if (s, p) not in used: fail(f'{sws[s]} port {p} forwards the group but leads to no member or tree hop')
tree = {s for s in sws if ports[s] - {0}}
parent = {s: s for s in tree}
def root(s):
    while parent[s] != s: s = parent[s]
    return s
for a, b in edges:
    ra, rb = root(a), root(b)
    if ra == rb: fail(f'cycle through {sws[a]} - {sws[b]}')
    parent[ra] = rb
if len({root(s) for s in tree}) != 1: fail(f'the tree falls apart: {len({root(s) for s in tree})} pieces')
print(f'ok {len(tree)} switches, {len(edges)} hops')
PY

# ibroute -M of every switch of the topology file, in LID order (four at a
# time: each is a process of its own that mostly waits for the simulator).
mft_snapshot() {
  local lid lids pids=() rc=0
  lids=$(awk '$1 == "sw" { print $2 }' "$1" | sort -n)
  rm -rf mft.parts && mkdir mft.parts
  for lid in $lids; do
    ((${#pids[@]} < 4)) || { wait "${pids[0]}" || rc=1; pids=("${pids[@]:1}"); }
    ry_diag ibroute -M "$lid" >"mft.parts/$lid" 2>/dev/null &
    pids+=($!)
  done
  for lid in "${pids[@]}"; do wait "$lid" || rc=1; done
  ((rc == 0)) || ry_fail "ibroute -M failed for a switch of $1"
  : >"$2"
  for lid in $lids; do grep -v '^ibwarn' "mft.parts/$lid" >>"$2" || true; done
}
# Waits until a switch's MFT has (want=1) or lacks (want=0) a port for the group.
wait_mft_port() {
  local lid=$1 port=$2 want=$3 deadline=$((SECONDS + 30)) has
  while :; do
    has=$(ry_diag ibroute -M "$lid" 2>/dev/null | python3 mft.py "$MLID" "$port")
    [[ "${has:-0}" == "$want" ]] && return 0
    ((SECONDS < deadline)) || ry_fail "switch LID $lid port $port: MFT of $MLID still ${has:-0}, want $want"
    sleep 0.3
  done
}
# members_in "GUID..." -> "<number of GUIDs> <number that are full members>"
# of the group, one trusted (SM_Key 1) MCMemberRecord query per port: ibsim
# passes only the first MAD of a multi-MAD (RMPP) SA answer, so `saquery -m`
# would list at most three members.
members_in() {
  local guid gid n=0 in=0
  for guid in $1; do
    gid=$(python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address((0xfe80 << 112) | int(sys.argv[1], 16)))' "$guid")
    n=$((n + 1))
    if ry_diag saquery --smkey 1 MCMR --mgid "$MGID" --gid "$gid" 2>/dev/null | grep -Eq 'JoinState\.+0x1$'; then
      in=$((in + 1))
    fi
  done
  echo "$n $in"
}
check_tree() {  # TOPO MFTS MEMBERS(comma) WHAT
  local r
  r=$(python3 tree.py "$1" "$2" "$MLID" "$3") || ry_fail "multicast tree $4: $r"
  ry_log "multicast tree $4: $r"
}

first=1
for mode in opensm railyard; do
  printf 'hop_matrices: %s\nlog_level: verbose\n' "$mode" >"plugin-$mode.yaml"
  rm -f ibsim.console
  ry_start_ibsim f.net --console
  ry_start_opensm --timeout 120 \
    --conf "event_plugin_name osmrailyard" \
    --conf "event_plugin_options $RY_TMP/plugin-$mode.yaml" \
    --conf "routing_engine railyard"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used ($mode hop matrices)"
  if [[ $mode == railyard ]]; then
    # OpenSM's default log flags (no OSM_LOG_ROUTING): no dump will read the
    # rows, so railyard works out the distances only and builds the trees.
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: hop matrices: 40 switches, distances only in" "railyard built the distances"
    ry_assert_file_contains "$RY_OPENSM_LOG" "rows not written: no routing dump, multicast trees by railyard" "railyard wrote no rows"
  else
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: time hop matrices by OpenSM" "OpenSM built the matrices"
  fi

  if ((first)); then
    ry_diag ibnetdiscover >disc.topo 2>/dev/null || ry_fail "ibnetdiscover failed"
    python3 topo.py disc.topo >topo.txt
    ((($(grep -c '^ca ' topo.txt)) == 64)) || ry_fail "expected 64 CAs in the discovered fabric, got $(grep -c '^ca ' topo.txt)"
    # Members: the first CA of six different leaves (in LID order of the leaves).
    awk '$1 == "ca" && !seen[$4]++ { print }' topo.txt | sort -k2,2n | awk 'NR % 2 == 1' | head -n 6 >members.txt
    (($(wc -l <members.txt) == 6)) || ry_fail "fewer than six leaves with CAs"
    # PathRecord pairs: the first CA of the first leaf to and from the first
    # CA of six other leaves (three pods, four rails with the removed links).
    awk '$1 == "ca" && !seen[$4]++ { print $2, $3 }' topo.txt | sort -n | awk 'NR == 1 || NR % 2 == 0' | head -n 7 >leaf_first.txt
    first=0
  fi

  # PathRecords.
  : >"pr-$mode.txt"
  n=0
  read -r src_lid src_guid < <(head -n 1 leaf_first.txt)
  while read -r dst_lid dst_guid; do
    [[ $dst_lid == "$src_lid" ]] && continue
    for pair in "$src_lid $src_guid $dst_lid $dst_guid" "$dst_lid $dst_guid $src_lid $src_guid"; do
      read -r a ag b bg <<<"$pair"
      rec=$(ry_diag saquery -p --src-to-dst "$a:$b" 2>/dev/null | grep -v '^ibwarn') || ry_fail "saquery -p $a:$b failed"
      [[ $(grep -c 'PathRecord dump' <<<"$rec") == 1 ]] || ry_fail "PathRecord $a -> $b: expected one record, got: $rec"
      ry_assert_eq "$a $b" "$(awk -F. '/^[ \t]*slid/ { s = $NF } /^[ \t]*dlid/ { d = $NF } END { print s, d }' <<<"$rec")" \
        "PathRecord $a -> $b: SLID, DLID"
      # GIDs print as IPv6 (fe80::e41d:2d03:400:1): compare the interface IDs.
      for side in sgid:"$ag" dgid:"$bg"; do
        gid=$(awk -F. -v k="${side%%:*}" '$1 ~ "^[ \t]*" k { print $NF }' <<<"$rec")
        iid=$(python3 -c 'import ipaddress, sys; print("%016x" % (int(ipaddress.IPv6Address(sys.argv[1])) & (2**64 - 1)))' "$gid")
        ry_assert_eq "${side#*:}" "$iid" "PathRecord $a -> $b: ${side%%:*}"
      done
      echo "$rec" >>"pr-$mode.txt"
      n=$((n + 1))
    done
  done <leaf_first.txt
  ((n == 12)) || ry_fail "$n PathRecords checked, expected 12"

  # The IPoIB broadcast group: joins, the group, its members.
  ry_diag "$JOIN" --mgid "$MGID" $(awk '{ printf "0x%s ", $3 }' members.txt) >"join-$mode.txt" 2>join.err ||
    { cat join.err >&2; ry_fail "mcast_join failed"; }
  MLID=$(awk '{ print $3 }' "join-$mode.txt" | sort -u)
  [[ $(wc -l <"join-$mode.txt") == 6 && $MLID == 0x* && $(wc -w <<<"$MLID") == 1 ]] ||
    ry_fail "six joins with one MLID expected, got: $(cat "join-$mode.txt")"
  groups=$(ry_diag saquery -g 2>/dev/null | grep -v '^ibwarn')
  ry_assert_eq "$MLID" "$(awk -F. -v g="$MGID" '/MGID/ { mine = ($NF == g) } mine && /Mlid/ { print tolower($NF) }' <<<"$groups")" \
    "saquery -g: MLID of $MGID"
  ry_assert_eq "6 6" "$(members_in "$(awk '{ print $3 }' members.txt)")" "saquery MCMR: the six joined"
  ry_assert_eq "1 0" "$(members_in "$(awk '$1 == "ca" { print $3 }' topo.txt | grep -vxFf <(awk '{ print $3 }' members.txt) | head -n 1)")" \
    "saquery MCMR: a CA that did not join"

  # The tree on the switches, once OpenSM has programmed the members' leaves.
  while read -r _ _ _ leaf port; do
    wait_mft_port "$(awk -v g="$leaf" '$1 == "sw" && $3 == g { print $2 }' topo.txt)" "$port" 1
  done <members.txt
  mft_snapshot topo.txt "mft-$mode.joined.txt"
  check_tree topo.txt "mft-$mode.joined.txt" "$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $3 }' members.txt)" "after the joins ($mode)"
  if [[ $mode == railyard ]]; then
    ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: multicast MLID $(printf '0x%X' "$MLID"): 6 member ports, tree of" \
      "railyard built the group's tree"
  else
    ! grep -q "railyard: multicast MLID" "$RY_OPENSM_LOG" || ry_fail "railyard built a tree with hop_matrices: opensm"
  fi

  # A leaf uplink of a member goes down: OpenSM reroutes unicast (with new hop
  # matrices) and rebuilds the group's tree. Not on the switch the diags run
  # from (ibsim attaches its clients to one node): its spine would lose the
  # only up/down route back to the diags' LID, so `ibroute` could not reach
  # that spine any more.
  here=$(ry_diag ibstat 2>/dev/null | awk '/Node GUID/ { sub(/^0x/, "", $3); print $3; exit }')
  [[ -n "$here" ]] || ry_fail "ibstat: no node GUID for the diags' port"
  leaf=$(awk -v h="$here" '$4 != h { print $4; exit }' members.txt)
  # The uplink the tree uses, so that it has to change.
  tree_ports=" $(ry_diag ibroute -M "$(awk -v g="$leaf" '$1 == "sw" && $3 == g { print $2 }' topo.txt)" 2>/dev/null | python3 mft.py "$MLID") "
  uplink=$(awk -v g="$leaf" '$1 == "link" && ($2 == g || $4 == g) { print ($2 == g) ? $3 : $5 }' topo.txt |
    while read -r p; do [[ $tree_ports == *" $p "* ]] && { echo "$p"; break; }; done)
  [[ -n "$uplink" ]] || ry_fail "the tree uses no uplink of S-$leaf (ports$tree_ports)"
  ups=$(ry_log_count 'SUBNET UP')
  ry_ibsim_cmd "Unlink \"S-$leaf\"[$uplink]"
  ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
  ry_diag ibnetdiscover >"disc-$mode.down.topo" 2>/dev/null || ry_fail "ibnetdiscover failed"
  python3 topo.py "disc-$mode.down.topo" >"topo-$mode.down.txt"
  mft_snapshot "topo-$mode.down.txt" "mft-$mode.down.txt"
  check_tree "topo-$mode.down.txt" "mft-$mode.down.txt" "$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $3 }' members.txt)" \
    "after S-$leaf[$uplink] went down ($mode)"
  cmp -s "mft-$mode.joined.txt" "mft-$mode.down.txt" && ry_fail "the tree did not change when S-$leaf[$uplink], a hop of it, went down"
  if [[ $mode == railyard ]]; then
    (($(ry_log_count 'railyard: hop matrices: ') >= 2)) || ry_fail "railyard did not rebuild the matrices after the link went down"
  fi

  # The last member leaves.
  read -r _ _ guid leaf port < <(tail -n 1 members.txt)
  ry_diag "$JOIN" --leave --mgid "$MGID" "0x$guid" >/dev/null 2>join.err || { cat join.err >&2; ry_fail "leave failed"; }
  wait_mft_port "$(awk -v g="$leaf" '$1 == "sw" && $3 == g { print $2 }' topo.txt)" "$port" 0
  ry_assert_eq "1 1" "$(members_in "$(head -n 1 members.txt | awk '{ print $3 }')")" "saquery MCMR: a member that stayed"
  ry_assert_eq "1 0" "$(members_in "$guid")" "saquery MCMR: the member that left"
  mft_snapshot "topo-$mode.down.txt" "mft-$mode.left.txt"
  check_tree "topo-$mode.down.txt" "mft-$mode.left.txt" "$(head -n 5 members.txt | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $3 }')" \
    "after a member left ($mode)"
  ry_stop_ibsim
done

for f in pr mft-%s.joined mft-%s.down mft-%s.left; do
  # shellcheck disable=SC2059
  a=$(printf "$f" opensm) b=$(printf "$f" railyard)
  [[ $f == pr ]] && { a=pr-opensm; b=pr-railyard; }
  if ! cmp -s "$a.txt" "$b.txt"; then
    diff "$a.txt" "$b.txt" | head -n 20 >&2 || true
    ry_fail "$b.txt differs from $a.txt (hop matrices by railyard vs by OpenSM)"
  fi
done
ry_pass "PathRecords ($(grep -c 'PathRecord dump' pr-railyard.txt)) and the multicast group's MFTs (joined, after a link went down, after a leave) on every switch identical with railyard's and OpenSM's hop matrices; the trees are trees"
