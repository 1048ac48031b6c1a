// What schedulers and job launchers read: slurm (topology.conf or
// topology.yaml), kubernetes (node labels and a Kueue Topology), rails (one
// host's per-rail health). With -o FILE a document replaces FILE atomically,
// and only when its content changed, so a cron job can reconfigure Slurm
// (scontrol reconfigure) only when there is something new.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"
#include "controller/files/atomic_file.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

struct DocumentOptions {
  bool yaml = false;
  std::string output;  // -o FILE; empty: stdout
};

// Prints the document, or writes it to o.output when it differs from what is
// there: "FILE written" / "FILE unchanged" (--json: {"file", "changed"}).
void emit_document(const ApiSession& api, const ApiReply& r, const DocumentOptions& o) {
  if (o.output.empty()) {
    std::cout << r.text;
    return;
  }
  std::string old;
  if (std::ifstream in(o.output, std::ios::binary); in) {
    std::ostringstream ss;
    ss << in.rdbuf();
    old = ss.str();
  }
  const bool changed = old != r.text;
  if (changed) {
    const Status s = files::write_file_atomically(o.output, r.text, 0644);
    if (!s) {
      print_error(s.error().message);
      throw CommandExit{Exit::kTransport};
    }
  }
  if (api.json_output()) {
    std::cout << json{{"file", o.output}, {"changed", changed}}.dump() << "\n";
  } else {
    std::cout << o.output << (changed ? " written" : " unchanged") << "\n";
  }
}

void run_slurm(Context& ctx, const DocumentOptions& o) {
  const ApiReply r = ctx.api().get(api_path({"topology", "slurm"}) + (o.yaml ? "?format=yaml" : ""));
  emit_document(ctx.api(), r, o);
}

void run_kubernetes(Context& ctx, const DocumentOptions& o) {
  const ApiReply r = ctx.api().get(api_path({"topology", "kubernetes"}));
  emit_document(ctx.api(), r, o);
}

void run_rails(Context& ctx, const std::string& host) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"hosts", host, "rails"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"RAIL", "CA", "LID", "HEALTH", "LEAF", "LEAF PORT", "UPLINKS OK"});
  for (size_t c : {0, 2, 5}) t.align_right(c);
  for (const json& c : r.body.value("cas", json::array())) {
    const json up = c.value("leaf_uplinks", json::object());
    t.add_row({cell(c, "rail"), cell(c, "name"), cell(c, "lid"), cell(c, "health"), cell(c, "leaf"), cell(c, "leaf_port"),
               up.empty() ? "-" : cell(up, "healthy") + "/" + cell(up, "total")});
  }
  t.print(std::cout);
  std::cout << cell(r.body, "rails_healthy") << " of " << cell(r.body, "rails") << " rails healthy\n";
}

}  // namespace

void add_scheduler_commands(CLI::App& app, Context& ctx) {
  auto slurm_o = std::make_shared<DocumentOptions>();
  auto* slurm = app.add_subcommand("slurm", "Slurm topology.conf (topology/tree) or, with --yaml, topology.yaml");
  slurm->add_flag("--yaml", slurm_o->yaml, "Slurm 25.05 topology.yaml: a tree topology and a block topology");
  slurm->add_option("-o,--output", slurm_o->output,
                    "Replace FILE atomically, only when the content changed; prints \"FILE written\" or "
                    "\"FILE unchanged\" (--json: {\"file\", \"changed\"})");
  slurm->footer(
      "Hosts sharing their rail leaves are one leaf switch (a block), blocks under pods (3-level\n"
      "fabrics) under one switch for the fabric. Hosts with a broken rail are listed in a\n"
      "comment line \"# RailyardExclude=HOST,...\" (docs/slurm.md). Slurm reads the file again\n"
      "on `scontrol reconfigure`.\n\n"
      "Examples:\n"
      "  railyardctl slurm\n"
      "  railyardctl --json slurm -o /etc/slurm/topology.conf | jq -e .changed && scontrol reconfigure\n"
      "  railyardctl slurm --yaml -o /etc/slurm/topology.yaml");
  slurm->callback([&ctx, slurm_o] { run_slurm(ctx, *slurm_o); });

  auto k8s_o = std::make_shared<DocumentOptions>();
  auto* k8s = app.add_subcommand("kubernetes", "Kubernetes node labels (Topograph's) and a Kueue Topology, as YAML");
  k8s->alias("k8s");
  k8s->add_option("-o,--output", k8s_o->output, "Replace FILE atomically, only when the content changed");
  k8s->footer(
      "One Node per host with network.topology.nvidia.com/{leaf,spine,core} and\n"
      "railyard.io/rail-N (healthy, degraded, isolated, drained, down); first a Kueue\n"
      "Topology (kueue.x-k8s.io/v1alpha1) with those labels as levels (docs/kubernetes.md).\n\n"
      "Examples:\n"
      "  railyardctl kubernetes | kubectl apply --server-side --field-manager=railyard -f -\n"
      "  railyardctl k8s -o /var/lib/railyard/k8s.yaml");
  k8s->callback([&ctx, k8s_o] { run_kubernetes(ctx, *k8s_o); });

  auto host = std::make_shared<std::string>();
  auto* rails = app.add_subcommand("rails", "One host's rails: CA, leaf and health per rail");
  rails->add_option("HOST", *host, "Host name (as in `railyardctl hosts`)")->required();
  rails->footer(
      "Health: healthy, degraded (its leaf lost some uplinks), isolated (its leaf lost all),\n"
      "drained, down. A launcher keeps the healthy and degraded rails (docs/rail_health.md,\n"
      "scripts/nccl_hca.sh).\n\n"
      "Examples:\n"
      "  railyardctl rails node001\n"
      "  railyardctl --json rails node001 | jq -r '.cas[] | select(.health == \"down\") | .rail'");
  rails->callback([&ctx, host] { run_rails(ctx, *host); });
}

}  // namespace railyard::ctl
