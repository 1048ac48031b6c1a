// Policy loader: YAML text <-> Policy, validated once, at load, from one schema.
//
// Layout (config/policy.example.yaml is a commented example). Every key is
// optional; an absent key, an empty file or an explicit null keeps the default
// of policy.h.
//
//   rails:
//     patterns: [<regex>, ...]      # ECMAScript; group 1 host, group 2 rail
//     infer_from_structure: <bool>  # true | false
//   drains:
//     links:    [<port ref>, ...]   # a link, named by either end
//     ports:    [<port ref>, ...]
//     switches: [<node ref>, ...]
//   roots: [<node ref>, ...]        # up*/down* roots; empty = automatic
//   adaptive_routing: {max_groups_per_switch: <int >= 1>}
//   sharp: {trees_per_switch: <int >= 1>}
//
//   <node ref>  a string: "0x<node or port GUID>", a record name ("S-...") or a
//               node description. Not resolved here: policies know no fabric
//               (routing/node_lookup.h resolves them).
//   <port ref>  "NODE[PORT]" (split at the last '[') or {node: NODE, port: PORT};
//               PORT is 1..254.
//
// What is rejected, each with "<source>:<line>: <reason>" (policies/yaml_doc.h:
// text that is not UTF-8 or holds control characters, YAML syntax errors, more
// than one document, duplicate keys at any depth, unknown keys (named with
// their path and the expected keys), wrong types (a list where a mapping
// belongs, a quoted number, "yes" for a bool)), and here: ports outside
// 1..254, malformed GUIDs, empty node names, regexes that do not compile, have
// fewer than 2 capture groups, are longer than 1024 characters or nest groups
// deeper than 32 (std::regex compiles recursively), and limits of 0. The first
// error found is reported. Nothing throws out of these functions.
//
// Round trip: for every Policy p that parse accepts, parse(render(p)) == p.
#pragma once

#include <string>
#include <string_view>

#include "policies/policy.h"
#include "routing/result.h"  // header-only Result/Error, shared by every layer

namespace railyard::policies {

// Pure: no file I/O. `source_name` only labels error messages.
Result<Policy> parse_policy_yaml(std::string_view text, std::string_view source_name);

// Writes `policy` in the layout above with yaml-cpp's emitter, port refs in
// the "NODE[PORT]" form, every key present so the file documents the values
// in force.
std::string render_policy_yaml(const Policy& policy);

}  // namespace railyard::policies
