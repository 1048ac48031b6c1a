// ForwardingTables: the linear forwarding table (LID -> output port) of every
// switch of a fabric, as one flat array of bytes.
//
// Row i belongs to fabric.switches()[i]; column = LID (0..max_lid). Port 0
// delivers to the switch itself; kNoPath (0xFF, OpenSM's OSM_NO_PATH) drops.
// 1,280 switches x 17.7k LIDs is 22.6 MB: no per-entry objects.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/types.h"

namespace railyard::routing {

class ForwardingTables {
 public:
  static constexpr uint8_t kNoPath = 0xFF;

  ForwardingTables() = default;
  ForwardingTables(uint32_t num_switches, uint32_t num_lids)
      : num_switches_(num_switches), num_lids_(num_lids),
        ports_(static_cast<size_t>(num_switches) * num_lids, kNoPath) {}

  uint32_t num_switches() const { return num_switches_; }
  uint32_t num_lids() const { return num_lids_; }  // max LID + 1

  // As a new ForwardingTables(num_switches, num_lids), every entry kNoPath,
  // in the storage these tables already have when it is large enough: a
  // caller that reads tables again and again (the plugin's fast path, under
  // OpenSM's lock) does not map and fault in ~20 MB each time.
  void reset(uint32_t num_switches, uint32_t num_lids) {
    num_switches_ = num_switches;
    num_lids_ = num_lids;
    ports_.assign(static_cast<size_t>(num_switches) * num_lids, kNoPath);
  }

  uint8_t get(uint32_t sw, Lid lid) const { return ports_[index(sw, lid.value)]; }
  void set(uint32_t sw, Lid lid, uint8_t port) { ports_[index(sw, lid.value)] = port; }
  std::span<uint8_t> row(uint32_t sw) { return {ports_.data() + static_cast<size_t>(sw) * num_lids_, num_lids_}; }
  std::span<const uint8_t> row(uint32_t sw) const {
    return {ports_.data() + static_cast<size_t>(sw) * num_lids_, num_lids_};
  }
  bool operator==(const ForwardingTables&) const = default;

  // Number of 64-entry LFT blocks that differ between two tables of the same
  // fabric: what OpenSM would send to apply `next` over `prev`.
  static uint64_t changed_blocks(const ForwardingTables& prev, const ForwardingTables& next);

 private:
  size_t index(uint32_t sw, uint32_t lid) const { return static_cast<size_t>(sw) * num_lids_ + lid; }
  uint32_t num_switches_ = 0;
  uint32_t num_lids_ = 0;
  std::vector<uint8_t> ports_;
};

}  // namespace railyard::routing
