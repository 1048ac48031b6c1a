// SharpAllocator: shared tree capacity, release, and rebuilding the trees a
// fabric change broke. See sharp_allocator.h for the guarantees.
#include "routing/sharp_allocator.h"

#include <algorithm>
#include <cassert>
#include <optional>

namespace railyard::routing {

struct SharpAllocator::State {
  Fabric fabric;
  RailMap rails;
  std::vector<uint8_t> drained;
  std::unique_ptr<SharpTreeBuilder> builder;  // refers to the members above
  std::vector<uint32_t> load;                 // trees per switch index
};

namespace {

std::string hex(Guid g) {
  static const char* digits = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out += digits[(g.value >> shift) & 0xF];
  return out;
}

// `tree` (ids of `from`) in the ids of `to`, or nullopt when a switch, parent
// cable or CA cable it uses is gone, down or drained there. The tree's CAs
// found in `to` go to `cas`; a CA that is not there goes to `gone`.
std::optional<SharpTree> translate(const Fabric& from, const SharpTreeBuilder& to, std::span<const uint8_t> drained,
                                   const SharpTree& tree, std::vector<NodeId>& cas, NodeId& gone) {
  const Fabric& f = to.fabric();
  bool ok = true;
  // Old switch id -> new, sorted by old id for lookups.
  std::vector<std::pair<NodeId, NodeId>> ids;
  ids.reserve(tree.switches.size());
  for (const auto& s : tree.switches) {
    NodeId x = f.find_node_guid(from.node(s.node).guid);
    if (!x.valid() || !f.is_switch(x)) ok = false;
    ids.emplace_back(s.node, x);
  }
  std::sort(ids.begin(), ids.end());
  auto map = [&](NodeId old) {
    auto it = std::lower_bound(ids.begin(), ids.end(), old, [](const auto& p, NodeId n) { return p.first < n; });
    assert(it != ids.end() && it->first == old);  // parents and children are switches of the same tree
    return it->second;
  };
  SharpTree out = tree;
  for (auto& s : out.switches) {
    for (NodeId ca : s.cas) {
      NodeId x = f.find_node_guid(from.node(ca).guid);
      if (!x.valid() || f.is_switch(x)) {
        gone = ca;
        continue;
      }
      cas.push_back(x);
    }
    if (!ok) continue;
    NodeId old = s.node;
    s.node = map(old);
    for (NodeId& c : s.children) c = map(c);
    const uint32_t here = to.graph().switch_index(s.node);
    for (NodeId& ca : s.cas) {
      ca = f.find_node_guid(from.node(ca).guid);
      if (!ca.valid() || f.is_switch(ca) || to.attach(ca) != here) ok = false;
    }
    std::sort(s.cas.begin(), s.cas.end());
    if (!s.parent.valid()) continue;
    s.parent = map(s.parent);
    const Link& l = from.link(s.uplink);
    const Port& mine = from.port(from.port(l.a).node == old ? l.a : l.b);
    if (mine.num.value > f.node(s.node).num_ports) {
      ok = false;
      continue;
    }
    const Port& now = f.port(f.port_id(s.node, mine.num));
    s.uplink = now.link;
    if (!link_usable(f, drained, now.link) || f.remote_node(f.port_id(s.node, mine.num)) != s.parent) ok = false;
  }
  if (!ok) return std::nullopt;
  out.root = out.switches.front().node;
  return out;
}

}  // namespace

SharpAllocator::SharpAllocator(std::unique_ptr<State> state, uint32_t capacity)
    : state_(std::move(state)), capacity_(capacity) {}
SharpAllocator::SharpAllocator(SharpAllocator&&) noexcept = default;
SharpAllocator& SharpAllocator::operator=(SharpAllocator&&) noexcept = default;
SharpAllocator::~SharpAllocator() = default;

Result<std::unique_ptr<SharpAllocator::State>> SharpAllocator::make_state(Fabric fabric, RailMap rails,
                                                                         std::vector<uint8_t> drained) {
  auto st = std::make_unique<State>();
  st->fabric = std::move(fabric);
  st->rails = std::move(rails);
  st->drained = std::move(drained);
  st->builder = std::make_unique<SharpTreeBuilder>(st->fabric, st->rails, st->drained);
  if (auto s = st->builder->status(); !s) return s.error();
  st->load.assign(st->builder->num_switches(), 0);
  return st;
}

Result<SharpAllocator> SharpAllocator::create(Fabric fabric, RailMap rails, std::vector<uint8_t> drained,
                                              uint32_t trees_per_switch) {
  if (trees_per_switch == 0) return Error{"SHARP trees per switch must be at least 1"};
  auto st = make_state(std::move(fabric), std::move(rails), std::move(drained));
  if (!st) return st.error();
  return SharpAllocator(std::move(st).value(), trees_per_switch);
}

const Fabric& SharpAllocator::fabric() const { return state_->fabric; }
const RailMap& SharpAllocator::rails() const { return state_->rails; }
std::span<const uint8_t> SharpAllocator::drained() const { return state_->drained; }

const SharpAllocation* SharpAllocator::find(std::string_view job_id) const {
  for (const auto& j : jobs_) {
    if (j.job_id == job_id) return &j;
  }
  return nullptr;
}

uint32_t SharpAllocator::trees_on(NodeId sw) const {
  uint32_t s = state_->builder->graph().switch_index(sw);
  return s == SwitchGraph::kNone ? 0 : state_->load[s];
}

Result<SharpAllocation> SharpAllocator::allocate(const SharpJob& job) {
  if (find(job.id)) return Error{"job '" + job.id + "' already holds SHARP trees; release it first"};
  auto resolved = state_->builder->resolve(job);
  if (!resolved) return resolved.error();
  auto trees = state_->builder->build_job(*resolved, state_->load, capacity_);
  if (!trees) return trees.error();
  jobs_.push_back(SharpAllocation{job.id, std::move(trees).value(), 1});
  return jobs_.back();
}

Status SharpAllocator::release(std::string_view job_id) {
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const SharpAllocation& j) { return j.job_id == job_id; });
  if (it == jobs_.end()) return Error{"no SHARP job '" + std::string(job_id) + "'"};
  const SwitchGraph& g = state_->builder->graph();
  for (const auto& t : it->trees) {
    for (const auto& s : t.switches) {
      uint32_t i = g.switch_index(s.node);
      assert(state_->load[i] > 0);  // every tree switch took a slot when the tree was made
      --state_->load[i];
    }
  }
  jobs_.erase(it);
  return {};
}

Result<SharpRecompute> SharpAllocator::set_drained(std::vector<uint8_t> drained) {
  return update(state_->fabric, state_->rails, std::move(drained));
}

Result<SharpRecompute> SharpAllocator::update(Fabric fabric, RailMap rails, std::vector<uint8_t> drained) {
  auto made = make_state(std::move(fabric), std::move(rails), std::move(drained));
  if (!made) return made.error();
  std::unique_ptr<State> next = std::move(made).value();
  SharpTreeBuilder& builder = *next->builder;
  const SwitchGraph& g = builder.graph();
  auto take = [&](const SharpTree& t, int delta) {
    for (const auto& s : t.switches) {
      uint32_t& l = next->load[g.switch_index(s.node)];
      assert(delta > 0 || l > 0);  // only trees that took a slot give one back
      l = delta > 0 ? l + 1 : l - 1;
    }
  };

  // Pass 1: carry every tree over; note the broken ones and their CAs.
  struct Work {
    std::vector<SharpTree> trees;
    std::vector<size_t> broken;
    std::vector<std::vector<NodeId>> broken_cas;
    std::optional<Error> refused;
    bool held = false;  // kept trees took their slots in pass 2
  };
  std::vector<Work> work(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    Work& w = work[j];
    for (size_t t = 0; t < jobs_[j].trees.size(); ++t) {
      const SharpTree& old = jobs_[j].trees[t];
      std::vector<NodeId> cas;
      NodeId gone;
      auto moved = translate(state_->fabric, builder, next->drained, old, cas, gone);
      if (gone.valid() && !w.refused) {
        w.refused = Error{"job '" + jobs_[j].job_id + "': CA " + state_->builder->label(gone) + " (" +
                          hex(state_->fabric.node(gone).guid) + ") is no longer in the fabric"};
      }
      w.trees.push_back(moved ? std::move(*moved) : old);
      if (!moved) {
        w.broken.push_back(t);
        w.broken_cas.push_back(std::move(cas));
      }
    }
  }
  // Pass 2: kept trees hold their slots before anything is rebuilt.
  for (Work& w : work) {
    if (w.refused) continue;
    w.held = true;
    for (size_t t = 0; t < w.trees.size(); ++t) {
      if (std::find(w.broken.begin(), w.broken.end(), t) == w.broken.end()) take(w.trees[t], +1);
    }
  }
  // Pass 3: rebuild broken trees job by job; a job that fails is dropped.
  SharpRecompute report;
  std::vector<SharpAllocation> jobs;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    Work& w = work[j];
    std::vector<size_t> rebuilt;
    for (size_t b = 0; b < w.broken.size() && !w.refused; ++b) {
      size_t t = w.broken[b];
      auto tree = builder.build_tree(jobs_[j].job_id, w.trees[t].rail, w.broken_cas[b], next->load, capacity_);
      if (!tree) {
        w.refused = tree.error();
        break;
      }
      w.trees[t] = std::move(tree).value();
      take(w.trees[t], +1);
      rebuilt.push_back(t);
    }
    if (w.refused) {
      // Give back what this job holds: kept trees (if pass 2 gave them slots) and rebuilt ones.
      for (size_t t = 0; t < w.trees.size(); ++t) {
        bool kept = std::find(w.broken.begin(), w.broken.end(), t) == w.broken.end();
        bool redone = std::find(rebuilt.begin(), rebuilt.end(), t) != rebuilt.end();
        if (redone || (kept && w.held)) take(w.trees[t], -1);
      }
      report.refused.push_back({jobs_[j].job_id, *w.refused});
      continue;
    }
    SharpAllocation a{jobs_[j].job_id, std::move(w.trees), jobs_[j].version};
    if (w.broken.empty()) {
      report.unchanged.push_back(a.job_id);
    } else {
      ++a.version;
      report.changed.push_back(a.job_id);
    }
    jobs.push_back(std::move(a));
  }
  state_ = std::move(next);
  jobs_ = std::move(jobs);
  return report;
}

}  // namespace railyard::routing
