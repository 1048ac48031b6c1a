// A Store journal for tests (docs/ha.md): keeps every batch it is given (the
// leader's log, in order), or refuses as etcd does when this member does not
// lead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/store.h"

namespace railyard::controller {

struct RecordingJournal : Store::Journal {
  std::vector<std::string> entries;
  bool refuse = false;
  int64_t ship(const std::string& batch) override {
    if (refuse) throw StoreError("not the leader: test");
    entries.push_back(batch);
    return static_cast<int64_t>(entries.size());
  }
};

}  // namespace railyard::controller
