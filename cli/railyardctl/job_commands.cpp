// SHARP jobs: allocate aggregation trees for a job's hosts (one tree per
// rail), show them, release them. The trees and the capacity they take live
// in railyardd; this is only its client.
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

struct JobOptions {
  std::string id;
  std::vector<std::string> hosts;
  std::vector<std::string> cas;
  std::vector<int> rails;
  bool all = false;
};

void print_trees(const json& job) {
  std::cout << "job " << cell(job, "id") << ": " << cell(job, "status") << " (version " << cell(job, "version")
            << ") " << cell(job, "detail") << "\n";
  for (const json& t : job.value("trees", json::array())) {
    std::cout << "rail " << cell(t, "rail") << ": root " << cell(t, "root") << ", height " << cell(t, "height")
              << ", max fan-in " << cell(t, "max_fan_in") << ", " << cell(t, "cas") << " CAs"
              << (t.value("degraded", false) ? " (degraded: min height " + cell(t, "min_height") + ")" : "") << "\n";
    if (!t.contains("switches")) continue;
    Table table({"SWITCH", "DEPTH", "PARENT", "CHILDREN", "CAS", "FAN-IN"});
    table.align_right(1).align_right(4).align_right(5);
    for (const json& s : t["switches"]) {
      std::ostringstream children;
      for (const json& c : s.value("children", json::array())) children << (children.tellp() ? "," : "") << cell(c);
      table.add_row({cell(s, "switch"), cell(s, "depth"), cell(s, "parent"), children.str().empty() ? "-" : children.str(),
                     std::to_string(s.value("cas", json::array()).size()), cell(s, "fan_in")});
    }
    table.print(std::cout);
  }
}

void run_create(Context& ctx, const JobOptions& o) {
  const ApiSession& api = ctx.api();
  json body = {{"id", o.id}};
  if (!o.hosts.empty()) body["hosts"] = o.hosts;
  if (!o.cas.empty()) body["cas"] = o.cas;
  if (!o.rails.empty()) body["rails"] = o.rails;
  const ApiReply r = api.call("POST", api_path({"jobs"}), body);
  if (!r.ok()) api.fail(r);
  if (api.json_output()) return api.print_raw(r);
  print_trees(r.body);
}

void run_show(Context& ctx, const JobOptions& o) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.call("GET", api_path({"jobs", o.id}));
  if (!r.ok()) api.fail(r);
  if (api.json_output()) return api.print_raw(r);
  print_trees(r.body);
}

void run_list(Context& ctx, const JobOptions& o) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"jobs"}) + (o.all ? "?all=true" : ""));
  if (api.json_output()) return api.print_raw(r);
  Table t({"JOB", "STATUS", "TREES", "MAX HEIGHT", "BY", "UPDATED", "DETAIL"});
  t.align_right(2).align_right(3);
  for (const json& j : r.body.value("jobs", json::array())) {
    int height = 0;
    for (const json& tree : j.value("trees", json::array())) height = std::max(height, tree.value("height", 0));
    t.add_row({cell(j, "id"), cell(j, "status"), std::to_string(j.value("trees", json::array()).size()),
               std::to_string(height), cell(j, "created_by"), format_time(j.value("updated_at", json())),
               cell(j, "detail")});
  }
  t.print(std::cout);
}

void run_delete(Context& ctx, const JobOptions& o) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.call("DELETE", api_path({"jobs", o.id}));
  if (!r.ok()) api.fail(r);
  if (api.json_output()) return api.print_raw(r);
  std::cout << r.body.value("message", "deleted") << "\n";
}

}  // namespace

void add_job_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<JobOptions>();
  auto* job = app.add_subcommand("job", "SHARP aggregation trees for jobs: create, show, list, delete");
  job->require_subcommand(1);
  job->footer(
      "A job gets one tree per rail (rail-aligned), rooted where the tree is shallowest,\n"
      "over healthy, non-drained links; switch capacity (trees per switch) is shared by\n"
      "all jobs. A failed link of a live tree recomputes the job (its version goes up).\n\n"
      "Examples:\n"
      "  railyardctl job create job-42 --hosts node001,node002,node003\n"
      "  railyardctl job create job-43 --hosts node004,node005 --rails 0,1\n"
      "  railyardctl job show job-42\n"
      "  railyardctl --json job show job-42 | jq '.trees[] | {rail, root, height}'\n"
      "  railyardctl job list --all\n"
      "  railyardctl job delete job-42");

  auto* create = job->add_subcommand("create", "Allocate trees for a job (operator); exit 5 when capacity runs out");
  create->add_option("id", o->id, "Job id (unique among active jobs)")->required();
  create->add_option("--hosts", o->hosts, "Hosts (all their CAs)")->delimiter(',');
  create->add_option("--cas", o->cas, "CAs by name or GUID")->delimiter(',');
  create->add_option("--rails", o->rails, "Only these rails")->delimiter(',');
  create->callback([&ctx, o] { run_create(ctx, *o); });

  auto* show = job->add_subcommand("show", "A job's trees: per rail root, height, fan-in; per switch parent, children, CAs");
  show->add_option("id", o->id, "Job id")->required();
  show->callback([&ctx, o] { run_show(ctx, *o); });

  auto* list = job->add_subcommand("list", "Jobs and their tree summaries");
  list->add_flag("--all", o->all, "Also refused and deleted jobs");
  list->callback([&ctx, o] { run_list(ctx, *o); });

  auto* del = job->add_subcommand("delete", "Release a job's trees (operator)");
  del->add_option("id", o->id, "Job id")->required();
  del->callback([&ctx, o] { run_delete(ctx, *o); });
}

}  // namespace railyard::ctl
