#include "sm_plugin/controller_policy.h"

#include <fstream>
#include <sstream>

#include "controller/files/atomic_file.h"
#include "policies/policy_loader.h"

namespace railyard::sm_plugin {

Result<PolicyWrite> write_controller_policy(const std::string& path, std::string_view yaml) {
  if (path.empty()) return Error{"no policy_file to write the controller's policy to"};
  auto parsed = policies::parse_policy_yaml(yaml, "the controller's policy");
  if (!parsed) return Error{parsed.error().message + "; " + path + " left as it is"};
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      if (in && text.str() == yaml) return PolicyWrite::kUnchanged;
    }
  }
  if (Status s = files::write_file_atomically(path, yaml, 0644); !s) return s.error();
  return PolicyWrite::kWritten;
}

}  // namespace railyard::sm_plugin
