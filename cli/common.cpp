#include "cli/common.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/io.h"
#include "policies/policy_loader.h"
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

}  // namespace railyard::cli
