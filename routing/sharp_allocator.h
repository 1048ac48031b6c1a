// SharpAllocator: SHARP trees of every live job on one fabric, with the
// per-switch tree capacity shared among them.
//
// Guarantees
//  - Capacity: no switch ever carries more than `trees_per_switch` trees,
//    counted over all jobs (a tree takes one slot on each switch it uses).
//  - All or nothing: allocate() either gives a job all its trees (one per
//    rail, see sharp_trees.h) or refuses it and changes nothing.
//  - Stability: update() keeps every tree whose switches, parent cables and
//    CA cables are all still present, up and not drained (matched by GUID and
//    port number, so a rebuilt Fabric with other node indices is fine), even
//    if a shallower tree became possible. Only broken trees are rebuilt;
//    kept trees hold their slots first, then broken trees are rebuilt job by
//    job in allocation order.
//  - Degraded behaviour: a rebuilt tree may be deeper than the shallowest
//    possible when capacity is short (SharpTree::degraded). A job with a tree
//    that cannot be rebuilt (a CA gone or cut off, its leaves disconnected, or
//    no capacity) is dropped: all its trees are released and it is listed in
//    `refused` with the reason. A job dropped late does not give its slots to
//    a job refused earlier in the same update (order is allocation order).
//  - Deterministic: the same calls in the same order give the same trees.
// Not thread-safe; the controller serialises calls.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "routing/fabric.h"
#include "routing/rails.h"
#include "routing/result.h"
#include "routing/sharp_trees.h"

namespace railyard::routing {

struct SharpAllocation {
  std::string job_id;
  std::vector<SharpTree> trees;  // by rail
  uint64_t version = 1;          // +1 each time update() rebuilds one of its trees
};

// What update() did, by job id (each list in allocation order).
struct SharpRecompute {
  struct Refused {
    std::string job_id;
    Error reason;
  };
  std::vector<std::string> unchanged;
  std::vector<std::string> changed;  // some trees rebuilt; see find()
  std::vector<Refused> refused;      // dropped, capacity freed
};

class SharpAllocator {
 public:
  // `drained`: one byte per LinkId (nonzero = drained) or empty. Errors: a
  // capacity of 0, a mask or rail map sized for another fabric.
  static Result<SharpAllocator> create(Fabric fabric, RailMap rails, std::vector<uint8_t> drained,
                                       uint32_t trees_per_switch);

  SharpAllocator(SharpAllocator&&) noexcept;
  SharpAllocator& operator=(SharpAllocator&&) noexcept;
  ~SharpAllocator();

  // The job's trees, or a refusal: bad input (empty or duplicate job id,
  // unknown host, ...) or capacity ("job 'j' rail 3: SHARP tree capacity
  // exhausted on leaf switch 'leaf g001 r3' (4 of 4 trees in use)").
  Result<SharpAllocation> allocate(const SharpJob& job);
  // Frees the job's slots. Error if no such job.
  Status release(std::string_view job_id);

  // A new snapshot (links failed or returned, drains changed): keeps, rebuilds
  // or drops each job's trees as described above. Errors only for a mask or
  // rail map that does not fit the new fabric; then nothing changes.
  Result<SharpRecompute> update(Fabric fabric, RailMap rails, std::vector<uint8_t> drained);
  // The same fabric with another drained set.
  Result<SharpRecompute> set_drained(std::vector<uint8_t> drained);

  const SharpAllocation* find(std::string_view job_id) const;
  std::span<const SharpAllocation> jobs() const { return jobs_; }  // allocation order
  uint32_t trees_on(NodeId sw) const;                             // slots in use on a switch
  uint32_t capacity() const { return capacity_; }
  const Fabric& fabric() const;
  const RailMap& rails() const;
  std::span<const uint8_t> drained() const;

 private:
  struct State;
  SharpAllocator(std::unique_ptr<State> state, uint32_t capacity);
  static Result<std::unique_ptr<State>> make_state(Fabric fabric, RailMap rails, std::vector<uint8_t> drained);

  std::unique_ptr<State> state_;
  std::vector<SharpAllocation> jobs_;
  uint32_t capacity_ = 0;
};

}  // namespace railyard::routing
