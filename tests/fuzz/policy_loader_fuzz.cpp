// libFuzzer target for the policy loader: any bytes must load or fail with an
// Error, never crash or throw; whatever loads must survive render -> parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policies/policy_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  railyard::Result<railyard::policies::Policy> r = railyard::policies::parse_policy_yaml(text, "fuzz");
  if (!r.ok()) return 0;
  railyard::Result<railyard::policies::Policy> back =
      railyard::policies::parse_policy_yaml(railyard::policies::render_policy_yaml(*r), "rendered");
  if (!back.ok() || !(*back == *r)) std::abort();  // the round-trip promise of policy_loader.h
  return 0;
}
