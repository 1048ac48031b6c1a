// Controller: SHARP jobs. The allocator (routing/sharp_allocator.h) follows
// the fabric view; every change of a job's trees is persisted with the job,
// and recorded as an event (sharp_job_changed / sharp_job_refused).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "controller/controller.h"
#include "routing/node_lookup.h"

namespace railyard::controller {

using nlohmann::json;

namespace {

std::string guid_of(const routing::Fabric& f, NodeId n) { return routing::to_string(f.node(n).guid); }

// The persisted (and served) form of a job's trees.
std::string trees_json(const routing::Fabric& f, const std::vector<routing::SharpTree>& trees) {
  json out = json::array();
  for (const routing::SharpTree& t : trees) {
    json switches = json::array();
    for (const routing::SharpTreeSwitch& s : t.switches) {
      json children = json::array(), cas = json::array();
      for (NodeId c : s.children) children.push_back(f.desc(c));
      for (NodeId c : s.cas) cas.push_back(f.desc(c));
      json sw = {{"switch", f.desc(s.node)}, {"guid", guid_of(f, s.node)}, {"depth", s.depth},
                 {"children", children},     {"cas", cas},                 {"fan_in", s.fan_in()}};
      sw["parent"] = s.parent.valid() ? json(std::string(f.desc(s.parent))) : json(nullptr);
      switches.push_back(sw);
    }
    out.push_back({{"rail", t.rail},
                   {"root", f.desc(t.root)},
                   {"root_guid", guid_of(f, t.root)},
                   {"height", t.height},
                   {"min_height", t.min_height},
                   {"max_fan_in", t.max_fan_in},
                   {"degraded", t.degraded},
                   {"cas", t.num_cas()},
                   {"switches", switches}});
  }
  return out.dump();
}

}  // namespace

Result<routing::SharpAllocation> Controller::sharp_allocate(const JobRecord& job) {
  const std::shared_ptr<const FabricView>& view = state_.view;
  if (!sharp_) return Error{"no fabric yet"};
  json req = json::parse(job.request, nullptr, false);
  if (!req.is_object()) return Error{"job '" + job.id + "': stored request is not JSON"};
  routing::SharpJob sj;
  sj.id = job.id;
  for (const auto& h : req.value("hosts", json::array())) sj.hosts.push_back(h.get<std::string>());
  for (const auto& c : req.value("cas", json::array())) {
    Result<NodeId> n = routing::find_node(view->fabric, c.get<std::string>());
    if (!n) return Error{"job '" + job.id + "': unknown CA '" + c.get<std::string>() + "'"};
    sj.cas.push_back(*n);
  }
  for (const auto& r : req.value("rails", json::array())) sj.rails.push_back(r.get<int32_t>());
  Result<routing::SharpAllocation> a = sharp_->allocate(sj);
  if (!a) return a.error();
  return *a;
}

void Controller::sharp_follow_view() {
  const std::shared_ptr<const FabricView>& view = state_.view;
  if (!view || sharp_version_ == view->version) return;
  sharp_version_ = view->version;
  const double now = unix_now();
  // A follower computes the same trees for its own allocator and writes
  // nothing: the leader's job records reach it through the log.
  const bool writes = !write_refusal();
  std::vector<uint8_t> drained = view->options.drained;
  if (!drained.empty()) drained.resize(view->fabric.num_links(), 0);
  if (!sharp_) {
    Result<routing::SharpAllocator> a = routing::SharpAllocator::create(view->fabric, view->rails, std::move(drained),
                                                                        view->policy.sharp.trees_per_switch);
    if (!a) {
      record_event(Reporter::kController, "sharp_unavailable", {{"error", a.error().message}});
      return;
    }
    sharp_.emplace(std::move(*a));
    // Jobs held before a restart get their trees again, in creation order.
    for (JobRecord job : store_->jobs(true)) {
      Result<routing::SharpAllocation> got = sharp_allocate(job);
      if (got) {
        const std::string trees = trees_json(view->fabric, got->trees);
        if (trees != job.trees) {
          job.trees = trees;
          ++job.version;
          job.updated_at = now;
          job.detail = "trees recomputed at start";
        }
      } else {
        job.status = JobStatus::kRefused;
        job.detail = got.error().message;
        job.trees = "[]";
        job.updated_at = now;
        record_event(Reporter::kController, "sharp_job_refused", {{"job", job.id}, {"reason", job.detail}});
      }
      if (writes) store_->put_job(job);
    }
    return;
  }
  Result<routing::SharpRecompute> r = sharp_->update(view->fabric, view->rails, std::move(drained));
  if (!r) {
    record_event(Reporter::kController, "sharp_unavailable", {{"error", r.error().message}});
    return;
  }
  for (const std::string& id : r->changed) {
    std::optional<JobRecord> job = store_->job(id);
    const routing::SharpAllocation* a = sharp_->find(id);
    if (!job || !a) continue;
    job->trees = trees_json(view->fabric, a->trees);
    ++job->version;
    job->updated_at = now;
    job->detail = "trees recomputed after a fabric change (" + view->origin + ")";
    if (writes) store_->put_job(*job);
    record_event(Reporter::kController, "sharp_job_changed", {{"job", id}, {"version", job->version}});
  }
  for (const routing::SharpRecompute::Refused& ref : r->refused) {
    std::optional<JobRecord> job = store_->job(ref.job_id);
    if (!job) continue;
    job->status = JobStatus::kRefused;
    job->detail = ref.reason.message;
    job->trees = "[]";
    job->updated_at = now;
    if (writes) store_->put_job(*job);
    record_event(Reporter::kController, "sharp_job_refused", {{"job", ref.job_id}, {"reason", ref.reason.message}});
  }
}

std::optional<Failure> Controller::check_job_request(const JobRequest& request) const {
  const std::shared_ptr<const FabricView>& view = state_.view;
  // The same checks, in the same order and words, as the allocator's
  // (routing/sharp_trees.cpp resolve()), whose errors carry no kind.
  const routing::Fabric& f = view->fabric;
  const routing::RailMap& rails = view->rails;
  const std::string who = "job '" + request.id + "'";
  std::vector<NodeId> cas;
  for (const std::string& name : request.cas) {
    Result<NodeId> n = routing::find_node(f, name);
    if (!n) return Failure::not_found(who + ": unknown CA '" + name + "'");
    if (f.is_switch(*n)) {
      const std::string_view desc = f.desc(*n);
      return Failure::invalid(who + ": '" + std::string(desc.empty() ? f.name(*n) : desc) + "' is a switch, not a CA");
    }
    cas.push_back(*n);
  }
  std::vector<uint8_t> wanted_host(rails.hosts.size(), 0);
  for (const std::string& host : request.hosts) {
    const auto it = std::find(rails.hosts.begin(), rails.hosts.end(), host);
    if (it == rails.hosts.end()) return Failure::not_found(who + ": unknown host '" + host + "'");
    wanted_host[static_cast<size_t>(it - rails.hosts.begin())] = 1;
  }
  if (!request.hosts.empty()) {
    for (NodeId ca : f.cas()) {
      const uint32_t h = rails.host[ca.value()];
      if (h < wanted_host.size() && wanted_host[h]) cas.push_back(ca);
    }
  }
  if (cas.empty()) return Failure::invalid(who + ": no CAs (give CAs or hosts)");
  for (int32_t r : request.rails) {
    if (r < 0 || static_cast<uint32_t>(r) >= rails.num_rails) {
      return Failure::invalid(who + ": rail " + std::to_string(r) + " is not a rail of this fabric (" +
                              std::to_string(rails.num_rails) + " rails)");
    }
  }
  for (int32_t r : request.rails) {
    const bool on_rail = std::any_of(cas.begin(), cas.end(), [&](NodeId ca) { return rails.rail[ca.value()] == r; });
    if (!on_rail) return Failure::invalid(who + ": none of its CAs is on rail " + std::to_string(r));
  }
  return std::nullopt;
}

JobOutcome Controller::create_job(const JobRequest& request, const Actor& actor) {
  if (std::optional<std::string> why = write_refusal()) return refused<JobOutcome>(Failure::unavailable(*why));
  std::lock_guard lock(strand_);
  const std::shared_ptr<const FabricView>& view = state_.view;
  if (!view || !sharp_) return refused<JobOutcome>(Failure::unavailable("no fabric yet"));
  if (std::optional<JobRecord> existing = store_->job(request.id); existing && existing->status == JobStatus::kActive) {
    JobOutcome out = refused<JobOutcome>(Failure::conflict("job '" + request.id + "' already exists; DELETE it first"));
    out.job = existing;
    return out;
  }
  if (std::optional<Failure> bad = check_job_request(request)) return refused<JobOutcome>(std::move(*bad));
  JobRecord job;
  job.id = request.id;
  job.request = json{{"hosts", request.hosts}, {"cas", request.cas}, {"rails", request.rails}}.dump();
  job.created_by = actor.name;
  job.created_at = job.updated_at = unix_now();
  job.status = JobStatus::kActive;
  Result<routing::SharpAllocation> a = sharp_allocate(job);
  // The request was checked above: what the allocator refuses now is the
  // fabric's state (capacity, links that are down or drained).
  if (!a) return refused<JobOutcome>(Failure::conflict(a.error().message));
  job.trees = trees_json(view->fabric, a->trees);
  job.detail = "allocated on fabric version " + std::to_string(view->version);
  JobOutcome out;
  const std::string done = "job '" + job.id + "': " + std::to_string(a->trees.size()) + " SHARP trees";
  Effects fx;
  fx.writes.push_back(PutJob{job});
  fx.audit = audit_of(actor, "create job " + job.id, done, unix_now());
  Written written;
  if (std::optional<Failure> failed = make_durable(fx, &written)) {
    (void)sharp_->release(job.id);  // the slots go back: the job does not exist
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  out.audited = true;
  publish();
  out.job = job;
  return out;
}

JobOutcome Controller::delete_job(const std::string& id, const Actor& actor) {
  if (std::optional<std::string> why = write_refusal()) return refused<JobOutcome>(Failure::unavailable(*why));
  std::lock_guard lock(strand_);
  std::optional<JobRecord> job = store_->job(id);
  if (!job || job->status == JobStatus::kDeleted) return refused<JobOutcome>(Failure::not_found("no job '" + id + "'"));
  job->status = JobStatus::kDeleted;
  job->detail = "deleted by " + actor.name;
  job->trees = "[]";
  job->updated_at = unix_now();
  JobOutcome out;
  const std::string done = "job '" + id + "' deleted; its tree slots are free";
  Effects fx;
  fx.writes.push_back(PutJob{*job});
  fx.audit = audit_of(actor, "delete job " + id, done, unix_now());
  Written written;
  if (std::optional<Failure> failed = make_durable(fx, &written)) {
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  // Slots are freed once the deletion is durable: a failed delete keeps them.
  if (sharp_ && sharp_->find(id)) (void)sharp_->release(id);
  out.audited = true;
  publish();
  out.job = job;
  return out;
}

uint32_t Controller::sharp_trees_on(NodeId sw) const {
  std::lock_guard lock(strand_);
  return sharp_ ? sharp_->trees_on(sw) : 0;
}

}  // namespace railyard::controller
