// PolicySource: the policy in force for the routing passes, re-read from its
// file when the file changes.
//
// Checked at the start of every routing pass (one stat(), no thread, no
// inotify): when the file's modification time or size differs from the last
// look, it is read and parsed again. A file that does not parse, is missing or
// unreadable never replaces a good policy: the last good one (or the default
// policy, if none was ever good) stays in force and the refresh reports the
// error ("<file>:<line>: <reason>") once per change of the file.
#pragma once

#include <cstdint>
#include <string>

#include "policies/policy.h"

namespace railyard::sm_plugin {

class PolicySource {
 public:
  // Empty path: the default policy, never re-read.
  explicit PolicySource(std::string path) : path_(std::move(path)) {}

  struct Refresh {
    enum class Kind : uint8_t { kUnchanged, kLoaded, kError };
    Kind kind = Kind::kUnchanged;
    std::string message;  // kLoaded: what was loaded; kError: file, line, reason and what stays in force
  };
  Refresh refresh();

  // The next refresh() reads the file even if its time and size did not
  // change (the controller's `policy_changed`: an edit within the file
  // system's timestamp granularity, or a file replaced by one of equal size).
  void invalidate() { looked_ = false; }

  const policies::Policy& policy() const { return policy_; }
  // "default" or "<path>" (the last good load), for log lines.
  const std::string& origin() const { return origin_; }
  const std::string& path() const { return path_; }

 private:
  struct Stamp {
    bool exists = false;
    int64_t mtime_ns = 0;
    int64_t size = 0;
    bool operator==(const Stamp&) const = default;
  };

  std::string path_;
  policies::Policy policy_;
  std::string origin_ = "default";
  bool looked_ = false;
  Stamp stamp_;
};

}  // namespace railyard::sm_plugin
