// A replay checker for update orders (routing/update_order.h), written from
// the fabric alone: the steps of an order are written one by one into a copy
// of the old tables, and after each step every switch's walk to every LID
// whose entry the step changed is followed through the mixed tables on the
// fabric as it is now. No walk may loop; a walk that does not deliver must be
// one that the old tables (on the fabric now) or the new tables lose too.
// Every step must write only old or new values, and the last state must be
// the new tables. For tests of the order and of whatever sends it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/update_order.h"

namespace railyard::routing::test {

enum class Fate : uint8_t { kUnknown, kOnPath, kDelivered, kLost, kLoop };

// Walks every switch's route to `lid` over `t` on `f`: delivered at the
// owning CA port or at port 0 of the owning switch, lost at kNoPath, a port
// past the switch's count, an uncabled or down link or a wrong node, loop
// when a switch comes round again.
class Walker {
 public:
  explicit Walker(const Fabric& f) : f_(f), index_(f.num_nodes(), UINT32_MAX) {
    for (uint32_t s = 0; s < f.switches().size(); ++s) index_[f.switches()[s].value()] = s;
  }

  // Valid until the next call.
  const std::vector<Fate>& fates(const ForwardingTables& t, uint32_t lid) {
    const uint32_t n = static_cast<uint32_t>(f_.switches().size());
    fate_.assign(n, Fate::kUnknown);
    std::vector<Fate>& fate = fate_;
    const PortId owner = f_.lid_owner(Lid{static_cast<uint16_t>(lid)});
    std::vector<uint32_t>& path = path_;
    for (uint32_t s = 0; s < n; ++s) {
      path.clear();
      uint32_t x = s;
      Fate end = Fate::kUnknown;
      while (end == Fate::kUnknown) {
        if (fate[x] == Fate::kOnPath) {
          end = Fate::kLoop;
          break;
        }
        if (fate[x] != Fate::kUnknown) {
          end = fate[x];
          break;
        }
        fate[x] = Fate::kOnPath;
        path.push_back(x);
        const NodeId node = f_.switches()[x];
        const uint8_t out = t.get(x, Lid{static_cast<uint16_t>(lid)});
        if (out == ForwardingTables::kNoPath || out > f_.node(node).num_ports) {
          end = Fate::kLost;
        } else if (out == 0) {
          end = owner == f_.port_id(node, PortNum{0}) ? Fate::kDelivered : Fate::kLost;
        } else {
          const Port& p = f_.port(f_.port_id(node, PortNum{out}));
          if (!p.remote.valid() || f_.link(p.link).state == PortState::kDown) {
            end = Fate::kLost;
          } else if (!f_.is_switch(f_.port(p.remote).node)) {
            end = p.remote == owner ? Fate::kDelivered : Fate::kLost;
          } else {
            x = index_[f_.port(p.remote).node.value()];
          }
        }
      }
      for (uint32_t y : path) fate[y] = end;
    }
    return fate;
  }

 private:
  const Fabric& f_;
  std::vector<uint32_t> index_;
  std::vector<Fate> fate_;
  std::vector<uint32_t> path_;
};

inline const char* to_string(Fate f) {
  switch (f) {
    case Fate::kDelivered: return "delivered";
    case Fate::kLost: return "lost";
    case Fate::kLoop: return "loop";
    default: return "?";
  }
}

// The steps' order within a round when replaying.
enum class RoundOrder : uint8_t { kAsGiven, kReversed };

// Replays `order` over `before` on `f`; "" when every state is safe and the
// end is `after`, else the first violation.
inline std::string replay(const Fabric& f, const ForwardingTables& before, const ForwardingTables& after,
                   const UpdateOrder& order, RoundOrder round_order = RoundOrder::kAsGiven) {
  Walker walker(f);
  const uint32_t lids = before.num_lids();
  // Per LID, each switch's fate under the old and the new tables alone.
  std::vector<std::vector<Fate>> old_fate(lids), new_fate(lids);
  for (uint32_t l = 1; l < lids; ++l) {
    old_fate[l] = walker.fates(before, l);
    new_fate[l] = walker.fates(after, l);
  }
  std::vector<uint32_t> sequence;
  for (uint32_t r = 0; r < order.rounds(); ++r) {
    const uint32_t b = order.round_begin[r], e = order.round_begin[r + 1];
    for (uint32_t j = 0; j < e - b; ++j) sequence.push_back(round_order == RoundOrder::kAsGiven ? b + j : e - 1 - j);
  }
  if (sequence.size() != order.steps.size()) return "rounds cover " + std::to_string(sequence.size()) + " of the steps";
  ForwardingTables mixed = before;
  std::array<uint8_t, kLftBlockLids> entries{};
  for (size_t n = 0; n < sequence.size(); ++n) {
    const UpdateStep& step = order.steps[sequence[n]];
    const std::string at = "step " + std::to_string(n) + " (switch " + std::to_string(step.switch_index) +
                           ", block " + std::to_string(step.block) + ")";
    if (step.switch_index >= mixed.num_switches() || step.block * kLftBlockLids >= lids) return at + ": out of range";
    step_entries(before, after, step, entries);
    uint64_t touched = 0;
    for (uint32_t i = 0; i < kLftBlockLids; ++i) {
      const uint32_t l = step.block * kLftBlockLids + i;
      if (l >= lids) {
        if (entries[i] != ForwardingTables::kNoPath) return at + ": writes past the table";
        continue;
      }
      const Lid lid{static_cast<uint16_t>(l)};
      const uint8_t v = entries[i];
      if (v != before.get(step.switch_index, lid) && v != after.get(step.switch_index, lid)) {
        return at + ": writes " + std::to_string(v) + " for LID " + std::to_string(l) + ", neither old nor new";
      }
      if (mixed.get(step.switch_index, lid) != v) touched |= uint64_t{1} << i;
      mixed.set(step.switch_index, lid, v);
    }
    // The walks to the LIDs whose entry this step changed (the others are
    // as at the last check).
    for (uint32_t i = 0; i < kLftBlockLids; ++i) {
      const uint32_t l = step.block * kLftBlockLids + i;
      if (l == 0 || !((touched >> i) & 1)) continue;
      const std::vector<Fate>& fate = walker.fates(mixed, l);
      for (uint32_t s = 0; s < fate.size(); ++s) {
        if (fate[s] == Fate::kDelivered) continue;
        if (fate[s] == Fate::kLoop || (old_fate[l][s] == Fate::kDelivered && new_fate[l][s] == Fate::kDelivered)) {
          return at + ": LID " + std::to_string(l) + " from switch " + std::string(f.name(f.switches()[s])) + " is " +
                 to_string(fate[s]) + " (old " + to_string(old_fate[l][s]) + ", new " + to_string(new_fate[l][s]) +
                 ")";
        }
      }
    }
  }
  if (!(mixed == after)) return "the tables after the last step are not the new ones";
  return "";
}

}  // namespace railyard::routing::test
