#include "routing/lft_json.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <vector>

#include "policies/utf8.h"

namespace railyard::routing {

namespace {

// A JSON string as nlohmann::json::dump() prints it (UTF-8 kept, the short
// escapes, \u00xx for other control bytes); a byte that starts no valid
// UTF-8 sequence becomes U+FFFD, where nlohmann's default would throw.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  while (!s.empty()) {
    const unsigned char c = static_cast<unsigned char>(s.front());
    size_t n = utf8_sequence(s);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      n = 1;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      switch (c) {
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default: {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          out += u;
        }
      }
    } else {
      out.append(s.data(), n);
    }
    s.remove_prefix(n);
  }
  out += '"';
  return out;
}

}  // namespace

void write_lft_json(const Fabric& fabric, const ForwardingTables& tables, const TextSink& sink,
                    size_t chunk_bytes) {
  assert(tables.num_switches() == fabric.switches().size());
  const uint32_t num_lids = tables.num_lids();

  // Keys in nlohmann's order (std::map of strings): "1", "10", "100", ..., "2".
  std::vector<std::string> keys(num_lids);
  std::vector<uint32_t> key_order;
  for (uint32_t lid = 1; lid < num_lids; ++lid) {
    keys[lid] = "\"" + std::to_string(lid) + "\":";
    key_order.push_back(lid);
  }
  const auto digits = [&](uint32_t lid) { return std::string_view(keys[lid]).substr(1, keys[lid].size() - 3); };
  std::sort(key_order.begin(), key_order.end(), [&](uint32_t a, uint32_t b) { return digits(a) < digits(b); });

  ChunkedText out(sink, chunk_bytes);
  out.append("{\"switches\":[");
  auto switches = fabric.switches();
  for (uint32_t row = 0; row < switches.size(); ++row) {
    const Node& nd = fabric.node(switches[row]);
    out.append(row == 0 ? "{\"guid\":" : ",{\"guid\":");
    out.append(json_string(to_string(nd.guid)));
    out.append(",\"lft\":{");
    std::span<const uint8_t> ports = tables.row(row);
    bool first = true;
    for (uint32_t lid : key_order) {
      if (ports[lid] == ForwardingTables::kNoPath) continue;
      const std::string& key = keys[lid];
      char* w = out.reserve(key.size() + 4);  // ,"<lid>":<port>
      if (!first) *w++ = ',';
      first = false;
      std::memcpy(w, key.data(), key.size());
      w = std::to_chars(w + key.size(), w + key.size() + 3, ports[lid]).ptr;
      out.commit(w);
    }
    out.append("},\"lid\":");
    out.append(std::to_string(fabric.port(nd.first_port).lid.value));
    out.append(",\"name\":");
    out.append(json_string(fabric.desc(switches[row])));
    out.append("}");
  }
  out.append("]}\n");
  out.flush();
}

}  // namespace railyard::routing
