#include "sm_plugin/probe/smp.h"

#include <charconv>
#include <cstdio>

namespace railyard::sm_plugin {

namespace {

// Offsets in a directed-route SMP (IBA 14.2.1.2).
constexpr size_t kMethod = 3, kStatus = 4, kHopPointer = 6, kHopCount = 7, kTid = 8, kAttrId = 16, kAttrMod = 20,
                 kMKey = 24, kDrSlid = 32, kDrDlid = 34, kData = 64, kInitialPath = 128;
constexpr uint8_t kGet = 0x01, kGetResp = 0x81;
// In PortInfo: PortState in the low nibble of byte 32, PortPhysicalState in
// the high nibble of byte 33 (IBA 14.2.5.6).
constexpr size_t kPortState = 32, kPhysState = 33;

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

}  // namespace

Result<DrPath> parse_dr_path(std::string_view text) {
  DrPath path;
  if (text.empty()) return Error{"empty directed route"};
  bool first = true;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v > 255) {
      return Error{"directed route '" + std::string(text) + "': '" + std::string(item) + "' is not a port number"};
    }
    // infiniband-diags write the SM's own node as a leading 0.
    if (!(first && v == 0)) {
      if (v == 0) return Error{"directed route: port 0 after the first hop"};
      path.hops.push_back(static_cast<uint8_t>(v));
    }
    first = false;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return Error{"directed route ends with a comma"};
  }
  if (path.hops.size() > kMaxHops) return Error{"directed route longer than 63 hops"};
  return path;
}

std::string to_string(const DrPath& path) {
  std::string out = "0";
  for (uint8_t h : path.hops) out += "," + std::to_string(h);
  return out;
}

Smp portinfo_get(const DrPath& path, uint8_t port, uint64_t tid, uint64_t m_key) {
  Smp m{};
  m[0] = 1;  // BaseVersion
  m[1] = kSmpDirectClass;
  m[2] = 1;  // ClassVersion
  m[kMethod] = kGet;
  m[kHopPointer] = 0;
  m[kHopCount] = static_cast<uint8_t>(path.hops.size());
  put64(&m[kTid], tid);
  put16(&m[kAttrId], kAttrPortInfo);
  put32(&m[kAttrMod], port);
  put64(&m[kMKey], m_key);
  // Permissive LIDs: the route is directed from end to end.
  put16(&m[kDrSlid], 0xFFFF);
  put16(&m[kDrDlid], 0xFFFF);
  for (size_t i = 0; i < path.hops.size(); ++i) m[kInitialPath + 1 + i] = path.hops[i];
  return m;
}

Result<SmpReply> parse_portinfo_reply(std::span<const uint8_t> mad) {
  if (mad.size() < kSmpSize) return Error{"short SMP: " + std::to_string(mad.size()) + " bytes"};
  if (mad[1] != kSmpDirectClass) return Error{"not a directed-route SMP"};
  SmpReply r;
  r.tid = get64(&mad[kTid]);
  if (mad[kMethod] != kGetResp) return Error{"not a GetResp"};
  if (get16(&mad[kAttrId]) != kAttrPortInfo) return Error{"not PortInfo"};
  const uint16_t status = get16(&mad[kStatus]) & 0x7FFF;  // the top bit is the direction
  if (status != 0) {
    char text[8];
    std::snprintf(text, sizeof text, "%04x", status);
    return Error{std::string("SMP status 0x") + text};
  }
  r.status.port = mad[kAttrMod + 3];
  r.status.state = mad[kData + kPortState] & 0x0F;
  r.status.phys_state = mad[kData + kPhysState] >> 4;
  return r;
}

}  // namespace railyard::sm_plugin
