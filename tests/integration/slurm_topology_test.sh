#!/usr/bin/env bash
# railyard's Slurm outputs against the real slurmctld (Debian's 22.05):
#  1. topology.conf from `railyardctl slurm` on a 3-level rail-optimized fabric
#     (32 servers x 2 rails, radix 8: 8 blocks in 2 pods) is loaded by
#     slurmctld (TopologyPlugin=topology/tree), and `scontrol show topology`
#     matches the fabric: the expectation is computed here, in Python, from
#     the topology file alone (blocks = hosts sharing their rail leaves, pods
#     = blocks whose leaves share spines rail by rail, the fabric on top);
#     every host exactly once at level 0, each switch the union of its
#     children;
#  2. generation follows health: a drained CA link puts its host on the
#     "# RailyardExclude=" line, the file is rewritten only when its content
#     changes ("unchanged" otherwise), scontrol reconfigure takes it;
#  3. drain sync (slurm.drain_sync): the host with a drained rail is DRAIN in
#     Slurm with "railyard: rail 0 drained", undrained when the drain goes; a
#     node drained by someone else keeps its drain and reason whatever its
#     rails do.
# slurmctld runs in the temp dir on free loopback ports with AuthType=auth/none
# (no munge daemon needed), stopped by its PID.
#
#   bash slurm_topology_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
BIN=$(realpath "$3")
CTL=$BIN/railyardctl
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools jq python3 slurmctld scontrol
[[ -x "$CTL" && -x "$BIN/railyardd" ]] || ry_fail "railyardctl and railyardd are needed in $BIN"

ry_tmpdir
SLURMCTLD_PID=""
stop_slurmctld() { _ry_stop_pid "$SLURMCTLD_PID" 10 slurmctld; SLURMCTLD_PID=""; }
# railyardd first (its drain sync talks to slurmctld), then slurmctld.
# set +e: under errexit "(exit $rc)" would end the trap before _ry_cleanup.
trap 'rc=$?; set +e; ry_stop_railyardd; stop_slurmctld; if [[ $rc -ne 0 && -f slurmctld.log ]]; then tail -n 20 slurmctld.log >&2; fi; (exit $rc); _ry_cleanup' EXIT
T0=$SECONDS

"$RAILYARD" topo gen --servers 32 --rails 2 --levels 3 --radix 8 -o roft.net >/dev/null 2>&1
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
mkdir -p slurm/state slurm/spool
export SLURM_CONF=$RY_TMP/slurm/slurm.conf
# The hosts as the topology file names them ("node001 mlx5_0" -> node001).
mapfile -t HOSTS < <(sed -n 's/^Ca.*# "\([^ ]*\) mlx5_[0-9]*".*/\1/p' roft.net | sort -u)
ry_assert_eq 32 "${#HOSTS[@]}" "hosts in the topology file"
cat >"$SLURM_CONF" <<CONF
ClusterName=railyardtest
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/none
CredType=cred/none
SlurmUser=$(id -un)
StateSaveLocation=$RY_TMP/slurm/state
SlurmdSpoolDir=$RY_TMP/slurm/spool
SlurmctldPidFile=$RY_TMP/slurm/slurmctld.pid
SlurmctldLogFile=$RY_TMP/slurmctld.log
TopologyPlugin=topology/tree
SchedulerType=sched/builtin
SelectType=select/linear
NodeName=$(IFS=,; echo "${HOSTS[*]}") NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES
CONF

OPERATOR=operator-token-0123456789
cat >railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens:
  - {name: ops, role: operator, token: "$OPERATOR"}
database: state.db
fabric: {source: offline, topology_file: roft.net}
policy: {output_file: policy.out.yaml}
slurm: {drain_sync: true, slurm_conf: slurm/slurm.conf, interval_s: 1}
CONF
printf '%s\n' "$OPERATOR" >operator.token
chmod 600 operator.token
export RAILYARD_TOKEN_FILE=$RY_TMP/operator.token

# ---- 1. topology.conf, loaded by slurmctld ---------------------------------
ry_start_railyardd "$BIN" railyardd.yaml
export RAILYARD_URL=$RY_URL
ry_assert_eq "slurm/topology.conf written" "$("$CTL" slurm -o slurm/topology.conf)" "first write"
ry_assert_eq "slurm/topology.conf unchanged" "$("$CTL" slurm -o slurm/topology.conf)" \
  "the same content is not rewritten"
ry_assert_file_contains slurm/topology.conf '^# RailyardExclude=$' "no host excluded while healthy"

slurmctld -D -f "$SLURM_CONF" >slurmctld.out 2>&1 &
SLURMCTLD_PID=$!
slurmctld_up() { scontrol ping >/dev/null 2>&1; }
ry_wait_for 30 "slurmctld to answer" slurmctld_up
ry_log "slurmctld up after $((SECONDS - T0)) s"

# check_topology: scontrol show topology against the fabric in roft.net.
check_topology() {
  scontrol show topology >topology.shown
  python3 - roft.net topology.shown <<'PY'
import re, subprocess, sys
net, shown = sys.argv[1], sys.argv[2]
# The fabric: records, their descriptions, their cables.
kind, desc, links, cur = {}, {}, {}, None
for line in open(net):
    m = re.match(r'^(Switch|Ca|Hca)\s+\d+\s+"([^"]+)".*#\s*"([^"]*)"', line)
    if m:
        cur = m.group(2); kind[cur] = 'S' if m.group(1) == 'Switch' else 'C'; desc[cur] = m.group(3)
        links.setdefault(cur, set()); continue
    m = re.match(r'^\[\d+\]\s+"([^"]+)"', line)
    if m and cur:
        links[cur].add(m.group(1)); links.setdefault(m.group(1), set()).add(cur)
sw = [n for n in kind if kind[n] == 'S']
# Levels: 0 for switches cabled to a CA, then BFS over switch-switch cables.
level = {s: 0 for s in sw if any(kind.get(x) == 'C' for x in links[s])}
frontier = list(level)
while frontier:
    nxt = []
    for s in frontier:
        for x in links[s]:
            if kind.get(x) == 'S' and x not in level:
                level[x] = level[s] + 1; nxt.append(x)
    frontier = nxt
# Each host's leaf per rail.
rail_leaf = {}
for ca in [n for n in kind if kind[n] == 'C']:
    host, rail = re.match(r'^(\S+) mlx5_(\d+)$', desc[ca]).groups()
    leaf = [x for x in links[ca] if kind.get(x) == 'S'][0]
    rail_leaf.setdefault(host, []).append((int(rail), leaf))
blocks = {}
for host, rl in rail_leaf.items():
    blocks.setdefault(tuple(l for _, l in sorted(rl)), set()).add(host)
tiers = [sorted(frozenset(h) for h in blocks.values())]
# Tier k: blocks whose leaves, rail by rail, are joined by switches of level <= k.
for k in range(1, max(level.values()) + 1):
    if len(tiers[-1]) == 1: break
    parent = {s: s for s in sw}
    def find(x):
        while parent[x] != x: x = parent[x]
        return x
    for s in sw:
        for x in links[s]:
            if kind.get(x) == 'S' and level[s] <= k and level[x] <= k:
                parent[find(s)] = find(x)
    groups = {}
    for key, hosts in blocks.items():
        groups.setdefault(tuple(find(l) for l in key), set()).update(hosts)
    tiers.append(sorted(frozenset(h) for h in groups.values()))
# What Slurm loaded.
def expand(hl):
    if hl in ('', '(null)'): return []
    return subprocess.run(['scontrol', 'show', 'hostnames', hl], check=True, capture_output=True, text=True).stdout.split()
switches = {}
for line in open(shown):
    f = dict(re.findall(r'(\w+)=(\S*)', line))
    if 'SwitchName' in f:
        switches[f['SwitchName']] = (int(f['Level']), set(expand(f.get('Nodes', ''))), expand(f.get('Switches', '')))
fail = []
levels = sorted({lv for lv, _, _ in switches.values()})
if levels != list(range(len(tiers))):
    fail.append(f'levels {levels}, the fabric has {len(tiers)} tiers')
for t, want in enumerate(tiers):
    got = sorted(frozenset(n) for lv, n, _ in switches.values() if lv == t)
    if got != want:
        fail.append(f'level {t}: {len(got)} switches {[sorted(g)[:3] for g in got]}, want {[sorted(w)[:3] for w in want]}')
seen = {}
for name, (lv, nodes, children) in switches.items():
    if lv == 0:
        for n in nodes: seen[n] = seen.get(n, 0) + 1
    else:
        union = set()
        for c in children:
            if c not in switches or switches[c][0] != lv - 1: fail.append(f'{name}: child {c} not at level {lv - 1}')
            else: union |= switches[c][1]
        if union != nodes: fail.append(f'{name}: its nodes are not its children\'s')
if set(seen) != set(rail_leaf) or any(v != 1 for v in seen.values()):
    fail.append('not every host exactly once at level 0: ' + str({h: seen.get(h, 0) for h in rail_leaf if seen.get(h, 0) != 1}))
print(f'{len(rail_leaf)} hosts; ' + ', '.join(f'level {t}: {len(w)} switches' for t, w in enumerate(tiers)))
if fail:
    print('\n'.join(fail), file=sys.stderr); sys.exit(1)
PY
}
summary=$(check_topology) || { cat topology.shown >&2; ry_fail "scontrol show topology does not match the fabric"; }
ry_assert_eq "32 hosts; level 0: 8 switches, level 1: 2 switches, level 2: 1 switches" "$summary" "the fabric's shape"
ry_pass "slurmctld loaded railyard's topology.conf: $summary"

# ---- 2. health: a drained rail, the exclusion line, rewrite on change -------
# Someone else drains node010 first; its rail breaks too (monitoring reports
# its rail-1 cable down): railyard must leave that node alone.
scontrol update NodeName=node010 State=DRAIN Reason="maintenance: fan"
"$CTL" link-event "leaf g002 r1" 2 down --id mon-1 --reason "symbol errors" --force >/dev/null
"$CTL" drain link "leaf g000 r0" 1 --reason "RMA node001 rail 0" --force >drain.out
DRAIN_ID=$("$CTL" --json drains | jq -r '.drains[0].id')
ry_assert_eq "slurm/topology.conf written" "$("$CTL" slurm -o slurm/topology.conf)" "rewritten after the drain"
ry_assert_file_contains slurm/topology.conf '^# RailyardExclude=node001,node010$' "the broken hosts listed"
ry_assert_file_contains slurm/topology.conf '^#   node001: rail 0 drained$' "why node001"
ry_assert_file_contains slurm/topology.conf '^#   node010: rail 1 down$' "why node010"
ry_assert_eq "slurm/topology.conf unchanged" "$("$CTL" slurm -o slurm/topology.conf)" "no change, no write"
scontrol reconfigure
summary=$(check_topology) || ry_fail "after scontrol reconfigure the topology no longer matches"
ry_pass "health marks node001 and node010 (exclusion line), rewrite only on change, scontrol reconfigure"

# ---- 3. drain sync ------------------------------------------------------------
node_field() { scontrol show node -o "$1" | grep -o " $2=.*" | sed "s/^ $2=//; s/ [A-Z][A-Za-z]*=.*//"; }
reason_of() { scontrol show node -o "$1" | sed -n 's/.* Reason=\(.*\) \[[^]]*\]$/\1/p'; }
drained() { [[ "$(node_field "$1" State)" == *DRAIN* ]]; }
ry_wait_for 15 "node001 drained by railyard" drained node001
ry_assert_eq "railyard: rail 0 drained" "$(reason_of node001)" "node001's reason"
sleep 2  # two more sync passes: nothing may change node010
ry_assert_eq "maintenance: fan" "$(reason_of node010)" "node010 keeps its reason"
drained node010 || ry_fail "node010 lost its drain"
"$CTL" undrain "$DRAIN_ID" >/dev/null
not_drained() { ! drained "$1"; }
ry_wait_for 15 "node001 undrained by railyard" not_drained node001
"$CTL" link-event "leaf g002 r1" 2 up --id mon-2 >/dev/null
sleep 2
ry_assert_eq "maintenance: fan" "$(reason_of node010)" "node010 still someone else's"
drained node010 || ry_fail "railyard resumed a node it did not drain"
grep -q "slurm drain sync: drain node001 (railyard: rail 0 drained)" "$RY_RAILYARDD_LOG" &&
  grep -q "info slurm drain sync: undrain node001$" "$RY_RAILYARDD_LOG" ||
  ry_fail "railyardd logs the drain and the undrain"
ry_pass "drain sync: node001 drained and undrained; node010 (maintenance) untouched"
ry_log "done in $((SECONDS - T0)) s"
