#include "controller/slurm_drain_sync.h"

#include <map>

namespace railyard::controller {

namespace {

// The value of " KEY=" in a oneliner up to the next " Word=" (values such as
// Reason may hold blanks; Reason is the last field scontrol prints, so it
// runs to the end of the line).
std::string field(std::string_view line, std::string_view key, bool to_end) {
  const std::string at_start = std::string(key) + "=";
  size_t start;
  if (line.rfind(at_start, 0) == 0) {
    start = at_start.size();
  } else {
    const size_t at = line.find(" " + at_start);
    if (at == std::string_view::npos) return "";
    start = at + 1 + at_start.size();
  }
  size_t end = to_end ? line.size() : line.find(' ', start);
  if (end == std::string_view::npos) end = line.size();
  std::string v(line.substr(start, end - start));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
  return v;
}

}  // namespace

std::vector<SlurmNode> parse_scontrol_nodes(std::string_view text) {
  std::vector<SlurmNode> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("NodeName=", 0) != 0) continue;
    SlurmNode n;
    n.name = field(line, "NodeName", false);
    n.state = field(line, "State", false);
    n.reason = field(line, "Reason", true);
    // "railyard: rail 1 down [root@2026-12-01T22:51:59]": the user and time
    // scontrol adds are not part of the reason.
    if (const size_t b = n.reason.rfind(" ["); b != std::string::npos && !n.reason.empty() && n.reason.back() == ']') {
      n.reason.resize(b);
    }
    if (n.reason == "(null)" || n.reason == "none") n.reason.clear();
    n.drain = n.state.find("DRAIN") != std::string::npos;
    if (!n.name.empty()) out.push_back(std::move(n));
  }
  return out;
}

std::string slurm_drain_reason(const HostRails& host) {
  return std::string(kSlurmReasonPrefix) + " " + broken_rails_text(host);
}

std::vector<SlurmAction> plan_drain_sync(const RailHealthMap& health, const std::vector<SlurmNode>& nodes) {
  std::map<std::string_view, const SlurmNode*> by_name;
  for (const SlurmNode& n : nodes) by_name[n.name] = &n;
  std::vector<SlurmAction> out;
  for (const HostRails& h : health.hosts) {
    auto it = by_name.find(h.host);
    if (it == by_name.end()) continue;
    const SlurmNode& n = *it->second;
    const bool broken_now = !h.broken_rails().empty();
    if (broken_now) {
      const std::string reason = slurm_drain_reason(h);
      // Drained by someone else, or down with another reason: not ours.
      if (!n.reason.empty() && !n.ours()) continue;
      if (n.drain && n.reason == reason) continue;
      out.push_back({SlurmAction::Kind::kDrain, h.host, reason});
    } else if (n.drain && n.ours()) {
      out.push_back({SlurmAction::Kind::kResume, h.host, ""});
    }
  }
  return out;
}

}  // namespace railyard::controller
