// railyard-port-probe: asks switches the state of their ports with
// directed-route Get(PortInfo) SMPs, for the plugin's fast path (trap 128
// names a switch, not the port that went down or came up; sm_plugin/smp.h).
//
// A separate process on purpose: it registers its own requester-only SMP
// agent, which OpenSM's process must not do (under ibsim's umad2sim a second
// agent of a class in one process takes every MAD of that class from the
// first). The plugin starts it once and talks to it over its stdin/stdout,
// one line per request:
//
//   probe ID M_KEY PATH PORT...   ->   ID ok PORT:STATE:PHYS ... ms=TIME
//                                      (PORT:timeout or PORT:error for a port
//                                      that did not answer well; TIME the
//                                      request took, in ms)
//                                 ->   ID error MESSAGE   (bad request)
//
// M_KEY in hex, PATH a directed route ("0,1,17" or "0"). On start it prints
// "ready CA PORT" (or "error MESSAGE" and exits 1). All SMPs of a request go
// out at once; the answers are matched by transaction id.
#include <infiniband/umad.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sm_plugin/probe/smp.h"

namespace {

using railyard::sm_plugin::DrPath;
using railyard::sm_plugin::kSmpDirectClass;
using railyard::sm_plugin::kSmpSize;

struct Probe {
  int fd = -1;
  int agent = -1;
  int timeout_ms = 100;
  int retries = 2;
  uint32_t next_tid = 1;
  std::vector<uint8_t> buf;
};

std::string answer(Probe& p, const std::string& line) {
  std::istringstream in(line);
  std::string word, id, mkey_text, path_text;
  in >> word >> id >> mkey_text >> path_text;
  if (word != "probe" || id.empty() || path_text.empty()) {
    return (id.empty() ? std::string("-") : id) + " error expected: probe ID M_KEY PATH PORT...";
  }
  char* end = nullptr;
  const uint64_t m_key = std::strtoull(mkey_text.c_str(), &end, 16);
  if (end == mkey_text.c_str() || *end != '\0') return id + " error M_KEY '" + mkey_text + "' is not hex";
  auto path = railyard::sm_plugin::parse_dr_path(path_text);
  if (!path.ok()) return id + " error " + path.error().message;
  std::vector<uint8_t> ports;
  for (std::string t; in >> t;) {
    const int v = std::atoi(t.c_str());
    if (v < 0 || v > 254 || std::to_string(v) != t) return id + " error port '" + t + "' is not a port number";
    ports.push_back(static_cast<uint8_t>(v));
  }
  if (ports.empty()) return id + " error no ports";
  const auto started = std::chrono::steady_clock::now();
  // Send every Get, then collect the answers by transaction id.
  std::map<uint32_t, uint8_t> waiting;  // low 32 bits of the TID -> port
  std::map<uint8_t, std::string> result;
  for (uint8_t port : ports) {
    const uint32_t tid = p.next_tid++;
    const auto smp = railyard::sm_plugin::portinfo_get(path.value(), port, tid, m_key);
    std::memset(p.buf.data(), 0, p.buf.size());
    umad_set_addr(p.buf.data(), 0xFFFF, 0, 0, 0);  // permissive DLID, QP0
    std::memcpy(umad_get_mad(p.buf.data()), smp.data(), kSmpSize);
    if (umad_send(p.fd, p.agent, p.buf.data(), static_cast<int>(kSmpSize), p.timeout_ms, p.retries) < 0) {
      result[port] = "error";
      continue;
    }
    waiting[tid] = port;
  }
  // Each send ends in one receive: the answer, or the request back with a
  // timeout status. The overall wait is bounded all the same.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(p.timeout_ms * (p.retries + 1) + 200);
  while (!waiting.empty() && std::chrono::steady_clock::now() < deadline) {
    int len = static_cast<int>(kSmpSize);
    const int rc = umad_recv(p.fd, p.buf.data(), &len, p.timeout_ms);
    if (rc < 0) continue;
    const uint8_t* mad = static_cast<const uint8_t*>(umad_get_mad(p.buf.data()));
    uint64_t tid = 0;
    for (int i = 0; i < 8; ++i) tid = tid << 8 | mad[8 + i];
    auto it = waiting.find(static_cast<uint32_t>(tid));
    if (it == waiting.end()) continue;  // a stale answer
    const uint8_t port = it->second;
    waiting.erase(it);
    if (umad_status(p.buf.data()) != 0) {
      result[port] = "timeout";
      continue;
    }
    auto reply = railyard::sm_plugin::parse_portinfo_reply({mad, static_cast<size_t>(std::max(len, 0))});
    result[port] = reply.ok() ? std::to_string(reply.value().status.state) + ":" +
                                    std::to_string(reply.value().status.phys_state)
                              : "error";
  }
  for (const auto& [tid, port] : waiting) result[port] = "timeout";
  std::string out = id + " ok";
  for (uint8_t port : ports) out += " " + std::to_string(port) + ":" + result[port];
  char took[32];
  std::snprintf(took, sizeof took, " ms=%.2f",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  return out + took;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "railyard-port-probe: the state of switch ports by directed-route Get(PortInfo), for the railyard\n"
      "plugin's fast path. Reads requests on stdin, one per line:\n"
      "  probe ID M_KEY PATH PORT...     e.g.  probe 7 0 0,1,17 1 2 3\n"
      "and answers on stdout:\n"
      "  ID ok PORT:STATE:PHYS ... ms=T  STATE 1 Down 2 Init 3 Armed 4 Active; PHYS 5 LinkUp\n"
      "(PORT:timeout when a port's switch did not answer). Prints 'ready CA PORT' once its SMP agent\n"
      "is registered."};
  std::string ca;
  int port = 0;
  Probe p;
  app.add_option("--ca", ca, "HCA to send from (default: the first)");
  app.add_option("--port", port, "its port (default: the first active one)");
  app.add_option("--timeout-ms", p.timeout_ms, "per SMP attempt")->check(CLI::Range(1, 10000));
  app.add_option("--retries", p.retries, "attempts after the first")->check(CLI::Range(0, 10));
  CLI11_PARSE(app, argc, argv);
  if (umad_init() < 0) {
    std::printf("error umad_init failed\n");
    return 1;
  }
  p.fd = umad_open_port(ca.empty() ? nullptr : ca.c_str(), port);
  if (p.fd < 0) {
    std::printf("error cannot open the umad port %s:%d\n", ca.empty() ? "(first)" : ca.c_str(), port);
    return 1;
  }
  // Requester only (no method mask): it never receives unsolicited SMPs, so
  // it takes no trap or request away from the SM.
  p.agent = umad_register(p.fd, kSmpDirectClass, 1, 0, nullptr);
  if (p.agent < 0) {
    std::printf("error cannot register an SMP agent\n");
    return 1;
  }
  p.buf.assign(umad_size() + kSmpSize, 0);
  std::printf("ready %s %d\n", ca.empty() ? "-" : ca.c_str(), port);
  std::fflush(stdout);
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    std::printf("%s\n", answer(p, line).c_str());
    std::fflush(stdout);
  }
  umad_unregister(p.fd, p.agent);
  umad_close_port(p.fd);
  umad_done();
  return 0;
}
