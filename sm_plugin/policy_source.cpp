#include "sm_plugin/policy_source.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "policies/policy_loader.h"

namespace railyard::sm_plugin {

PolicySource::Refresh PolicySource::refresh() {
  Refresh r;
  if (path_.empty()) return r;

  Stamp now;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    now.exists = true;
    now.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    now.size = static_cast<int64_t>(st.st_size);
  }
  if (looked_ && now == stamp_) return r;
  looked_ = true;
  stamp_ = now;

  const std::string keeping = "; keeping the " + (origin_ == "default" ? std::string("default policy")
                                                                         : "last good policy from " + origin_);
  if (!now.exists) {
    r.kind = Refresh::Kind::kError;
    r.message = path_ + ": policy file not found" + keeping;
    return r;
  }
  std::ifstream in(path_, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) {
    r.kind = Refresh::Kind::kError;
    r.message = path_ + ": cannot read the policy file" + keeping;
    return r;
  }
  auto parsed = policies::parse_policy_yaml(text.str(), path_);
  if (!parsed) {
    r.kind = Refresh::Kind::kError;
    r.message = parsed.error().message + keeping;
    return r;
  }
  policy_ = std::move(parsed).value();
  origin_ = path_;
  r.kind = Refresh::Kind::kLoaded;
  r.message = "policy loaded from " + path_;
  return r;
}

}  // namespace railyard::sm_plugin
