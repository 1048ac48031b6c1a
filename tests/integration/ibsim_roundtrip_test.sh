#!/usr/bin/env bash
# Round trip through the real tools: a generated 2-level ROFT is loaded into
# ibsim, brought up by the real OpenSM, discovered by the real ibnetdiscover,
# and railyard's reader of ibnetdiscover's output must give back the same
# fabric: switches, CAs, links by GUID and port, and every CA's host and rail.
# Negative check: against a plan with one link removed, `topo diff` reports
# exactly that link.
#
# Usage (ctest does this): ibsim_roundtrip_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

SERVERS=${RT_SERVERS:-32}
RAILS=${RT_RAILS:-8}
RADIX=${RT_RADIX:-32}  # 2 groups of 16 servers: 16 leaves, 16 spines, 256 CAs

ry_require_tools ibsim opensm ibnetdiscover
ry_tmpdir

gen=(topo gen --kind roft --servers "$SERVERS" --rails "$RAILS" --levels 2 --radix "$RADIX" --seed 11)
"$RAILYARD" "${gen[@]}" -o plan.net 2>gen.err || { cat gen.err >&2; ry_fail "topo gen failed"; }

ry_start_ibsim plan.net
ry_start_opensm --timeout 180
ry_diag ibnetdiscover >discovered.net 2>ibnetdiscover.err || { cat ibnetdiscover.err >&2; ry_fail "ibnetdiscover failed"; }

# Our reader takes ibnetdiscover's output; the summary must show the whole fabric.
"$RAILYARD" topo show discovered.net >show.txt || { cat show.txt >&2; ry_fail "topo show of discovered.net failed"; }
cas=$((SERVERS * RAILS))
summary=$(head -n 1 show.txt)
ry_assert_contains "$summary" "in 2 levels, $cas CAs on $SERVERS hosts, $RAILS rails" "discovered fabric summary"
ry_assert_contains "$(cat show.txt)" "missing or odd links: none" "healthy discovered fabric"

# Same fabric: nodes, links (GUID, port), hosts and rails.
rc=0
"$RAILYARD" topo diff plan.net discovered.net >diff.txt || rc=$?
if [[ $rc -ne 0 ]]; then
  head -n 40 diff.txt >&2
  ry_fail "plan and discovered fabric differ (topo diff exit $rc)"
fi
ry_assert_contains "$(cat diff.txt)" "same fabric" "topo diff of plan vs discovered"
ry_pass "discovered fabric equals the generated one ($(cat diff.txt))"

# Negative: the plan minus one seeded switch-switch link. ibnetdiscover's view
# still has it, so the diff must report exactly that link, only in A.
"$RAILYARD" "${gen[@]}" --remove-switch-links 1 -o minus1.net 2>minus1.err
removed=$(sed -n 's/^removed: //p' minus1.err)
ry_assert_eq 1 "$(grep -c . <<<"$removed")" "links removed by the generator"
rc=0
"$RAILYARD" topo diff discovered.net minus1.net >neg.txt || rc=$?
ry_assert_eq 1 "$rc" "topo diff exit code with one link missing"
# The last line is the count; every other line is a difference.
ry_assert_eq "1 difference between discovered.net (A) and minus1.net (B)" "$(tail -n 1 neg.txt)" "difference count"
line=$(head -n 1 neg.txt)
[[ "$line" == "- link "*" only in A" ]] || ry_fail "expected a link only in A, got: $line"

# Compare the two ends as a set: generator prints  desc[p] <-> desc[p],
# the diff prints  "desc"[p] <-> "desc"[p]  (GUIDs)  ...
ends_of_removed=$(sed 's/ <-> /\n/' <<<"$removed" | sort)
ends_of_diff=$(sed -E 's/^- link (.*)  \(.*$/\1/; s/ <-> /\n/; s/"//g' <<<"$line" | sort)
ry_assert_eq "$ends_of_removed" "$ends_of_diff" "the removed link reported by topo diff"

# The reverse direction reports it as only in B.
rc=0
"$RAILYARD" topo diff minus1.net discovered.net >neg_rev.txt || rc=$?
ry_assert_eq 1 "$rc" "reverse topo diff exit code"
[[ "$(head -n 1 neg_rev.txt)" == "+ link "*" only in B" ]] || ry_fail "reverse diff: $(head -n 1 neg_rev.txt)"

ry_pass "ibsim round trip: $cas CAs, one removed link found"
