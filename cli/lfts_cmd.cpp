// `railyard lfts ...`: work with forwarding-table files.
//
//   lfts diff --topo TOPO A B   compare two table files over one topology. Each
//                               file is OpenSM's opensm-lfts.dump or the
//                               concatenated output of `ibroute <lid>` for the
//                               switches (detected from its first header).
//
// Exit codes: 0 identical; 1 different; 2 bad input (unreadable or invalid
// topology or table file, printed as "file:line: reason"); CLI11's own codes
// (>= 100) for usage errors.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io.h"
#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/lft_dump.h"
#include "routing/topology_reader.h"

namespace railyard::cli {
namespace {

using routing::Fabric;
using routing::ForwardingTables;
using routing::LftFormat;


std::string display_path(const std::string& path) { return path == "-" ? "<stdin>" : path; }

Fabric load_topology(const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text) fail(text.error().message);
  Result<Fabric> fabric = routing::read_topology(*text, display_path(path));
  if (!fabric) fail(fabric.error().message);
  return std::move(fabric).value();
}

struct LoadedTables {
  ForwardingTables tables;
  LftFormat format;
};

LoadedTables load_tables(const Fabric& fabric, const std::string& path) {
  Result<std::string> text = read_file(path);
  if (!text) fail(text.error().message);
  std::optional<LftFormat> format = routing::detect_lft_format(*text);
  Result<ForwardingTables> t = routing::read_tables(fabric, *text, display_path(path));
  if (!t) fail(t.error().message);
  return {std::move(t).value(), *format};  // read_tables succeeded, so the format was detected
}

std::string hex(uint64_t v, int digits) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

std::string node_label(const Fabric& f, NodeId n) {
  std::string_view d = f.desc(n);
  return std::string(d.empty() ? f.name(n) : d);
}

// The port answering to a LID, as "<node>" or "<node>[port]" for CAs with
// several ports; empty when the topology has no such LID.
std::string destination(const Fabric& f, uint32_t lid) {
  if (lid > Lid::kMaxUnicast) return {};
  PortId p = f.lid_owner(Lid{static_cast<uint16_t>(lid)});
  if (!p.valid()) return {};
  const routing::Port& port = f.port(p);
  std::string s = node_label(f, port.node);
  if (!f.is_switch(port.node) && f.node(port.node).num_ports > 1) s += "[" + std::to_string(port.num.value) + "]";
  return s;
}

struct Difference {
  uint32_t row;
  uint32_t lid;
  uint8_t a;
  uint8_t b;
};

struct DiffReport {
  uint32_t switches = 0;
  uint32_t lids = 0;  // columns compared: 0..lids-1
  uint64_t differing_switches = 0;
  uint64_t differing_entries = 0;
  uint64_t changed_blocks = 0;
  std::vector<Difference> first;  // the first `limit`, by switch row then LID
};

DiffReport compare(const ForwardingTables& a, const ForwardingTables& b, size_t limit) {
  DiffReport r;
  r.switches = std::max(a.num_switches(), b.num_switches());
  r.lids = std::max(a.num_lids(), b.num_lids());
  r.changed_blocks = ForwardingTables::changed_blocks(a, b);
  auto at = [](const ForwardingTables& t, uint32_t s, uint32_t l) {
    return (s < t.num_switches() && l < t.num_lids()) ? t.get(s, Lid{static_cast<uint16_t>(l)})
                                                      : ForwardingTables::kNoPath;
  };
  for (uint32_t s = 0; s < r.switches; ++s) {
    uint64_t before = r.differing_entries;
    for (uint32_t l = 0; l < r.lids; ++l) {
      uint8_t pa = at(a, s, l), pb = at(b, s, l);
      if (pa == pb) continue;
      ++r.differing_entries;
      if (r.first.size() < limit) r.first.push_back({s, l, pa, pb});
    }
    if (r.differing_entries != before) ++r.differing_switches;
  }
  return r;
}

std::string port_text(uint8_t p) { return p == ForwardingTables::kNoPath ? "none" : std::to_string(p); }

nlohmann::json port_json(uint8_t p) {
  return p == ForwardingTables::kNoPath ? nlohmann::json(nullptr) : nlohmann::json(p);
}

struct LftsDiffOptions {
  std::string topo;
  std::string a;
  std::string b;
  bool json = false;
  size_t max = 20;
};

void run_lfts_diff(const LftsDiffOptions& o) {
  Fabric fabric = load_topology(o.topo);
  LoadedTables a = load_tables(fabric, o.a);
  LoadedTables b = load_tables(fabric, o.b);
  DiffReport r = compare(a.tables, b.tables, o.max);
  const bool identical = r.differing_entries == 0;
  auto switch_of = [&](uint32_t row) { return fabric.switches()[row]; };

  if (o.json) {
    nlohmann::json j;
    j["identical"] = identical;
    j["a"] = {{"file", display_path(o.a)}, {"format", routing::to_string(a.format)}};
    j["b"] = {{"file", display_path(o.b)}, {"format", routing::to_string(b.format)}};
    j["switches"] = r.switches;
    j["lids"] = r.lids;
    j["differing_switches"] = r.differing_switches;
    j["differing_entries"] = r.differing_entries;
    j["changed_blocks"] = r.changed_blocks;
    nlohmann::json list = nlohmann::json::array();
    for (const Difference& d : r.first) {
      NodeId sw = switch_of(d.row);
      std::string dest = destination(fabric, d.lid);
      list.push_back({{"switch", node_label(fabric, sw)},
                      {"switch_guid", hex(fabric.node(sw).guid.value, 16)},
                      {"lid", d.lid},
                      {"destination", dest.empty() ? nlohmann::json(nullptr) : nlohmann::json(dest)},
                      {"a", port_json(d.a)},
                      {"b", port_json(d.b)}});
    }
    j["differences"] = std::move(list);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "A: " << display_path(o.a) << " (" << routing::to_string(a.format) << ")\n"
              << "B: " << display_path(o.b) << " (" << routing::to_string(b.format) << ")\n"
              << r.switches << " switches, LIDs 0-" << (r.lids ? r.lids - 1 : 0) << "\n";
    if (identical) {
      std::cout << "identical\n";
    } else {
      std::cout << "different: " << r.differing_entries << " entries on " << r.differing_switches << " of "
                << r.switches << " switches, " << r.changed_blocks << " changed 64-entry LFT blocks\n";
      for (const Difference& d : r.first) {
        NodeId sw = switch_of(d.row);
        std::string dest = destination(fabric, d.lid);
        std::cout << "  switch " << node_label(fabric, sw) << " (" << hex(fabric.node(sw).guid.value, 16) << ") LID "
                  << hex(d.lid, 4) << " -> " << (dest.empty() ? "(no such LID in the topology)" : dest)
                  << ": A port " << port_text(d.a) << ", B port " << port_text(d.b) << "\n";
      }
      if (r.differing_entries > r.first.size()) {
        std::cout << "  ... and " << (r.differing_entries - r.first.size()) << " more\n";
      }
    }
  }
  std::cout.flush();
  if (!identical) throw CLI::RuntimeError(kExitFindings);
}

}  // namespace

void add_lfts_commands(CLI::App& app) {
  CLI::App* lfts = app.add_subcommand("lfts", "Compare forwarding-table files (OpenSM dumps, ibroute output)");
  lfts->require_subcommand(1);

  auto o = std::make_shared<LftsDiffOptions>();
  CLI::App* diff = lfts->add_subcommand("diff", "Compare two sets of forwarding tables over one topology");
  diff->footer(
      "A and B are each OpenSM's opensm-lfts.dump (written with log_flags 0x43 and\n"
      "dump_files_dir) or the output of `ibroute <switch-lid>` for every switch,\n"
      "concatenated; the format is detected. Switches are matched by GUID; a switch\n"
      "missing from a file counts as having no routes.\n\n"
      "Reports the entries and switches that differ, the 64-entry LFT blocks OpenSM\n"
      "would have to send to turn A into B, and the first --max differences.\n\n"
      "Example:\n"
      "  railyard lfts diff --topo fabric.topo opensm-lfts.dump ibroute.txt\n\n"
      "Exit codes: 0 identical; 1 different; 2 unreadable or invalid input\n"
      "(the reason is printed as \"file:line: reason\"); >= 100 usage errors.");
  diff->add_option("--topo", o->topo, "Topology file (ibnetdiscover output or ibsim net file)")->required();
  diff->add_option("A", o->a, "First table file ('-' = stdin)")->required();
  diff->add_option("B", o->b, "Second table file")->required();
  diff->add_flag("--json", o->json, "Print the report as JSON");
  diff->add_option("--max", o->max, "List at most this many differences")->capture_default_str();
  diff->callback([o] { run_lfts_diff(*o); });
}

}  // namespace railyard::cli
