#include "cli/common.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/io.h"
#include "policies/policy_loader.h"
#include "routing/lid_assignment.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/topology_reader.h"

namespace railyard::cli {

void fail(const std::string& message, int code) {
  std::cerr << "railyard: " << message << "\n";
  throw CLI::RuntimeError(code);
}

routing::Fabric load_fabric(const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text) fail(text.error().message);
  Result<routing::Fabric> fabric = routing::read_topology(*text, path == "-" ? "<stdin>" : path);
  if (!fabric) fail(fabric.error().message);
  return std::move(fabric).value();
}

policies::Policy load_policy(const std::string& path) {
  if (path.empty()) return {};
  Result<std::string> text = read_file(path);
  if (!text) fail(text.error().message);
  Result<policies::Policy> policy = policies::parse_policy_yaml(*text, path);
  if (!policy) fail(policy.error().message);
  return std::move(policy).value();
}

bool ensure_lids(routing::Fabric& fabric) {
  if (fabric.has_lids()) return false;
  auto with_lids = routing::assign_lids(fabric);
  if (!with_lids) fail(with_lids.error().message);
  fabric = std::move(with_lids).value();
  return true;
}

routing::RoutingOptions plan_or_fail(const routing::Fabric& fabric, const policies::Policy& policy,
                                     const std::string& policy_path) {
  routing::RailMap rails = routing::map_rails(fabric, policy.rails);
  auto options = routing::plan_routing(fabric, policy, rails);
  if (!options) fail((policy_path.empty() ? std::string("policy") : policy_path) + ": " + options.error().message);
  return std::move(options).value();
}

}  // namespace railyard::cli
