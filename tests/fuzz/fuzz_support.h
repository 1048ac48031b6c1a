// What the railyardd fuzz harnesses share: a scratch folder that goes away at
// exit, the small fabric they run on, and the checks every API response must
// pass. A violated check prints what it saw and aborts (a fuzzer crash).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>

#include "api/http_types.h"
#include "controller/controller.h"
#include "routing/generator.h"
#include "routing/topology_writer.h"

namespace railyard::fuzz {

// A fresh folder for the database and the policy file, removed at exit. In
// $RAILYARD_FUZZ_SCRATCH when set (scripts/test.sh: removed after the run,
// also after a crash), else on tmpfs when there is one: the store syncs every
// write (synchronous=FULL).
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    std::error_code ec;
    const char* env = std::getenv("RAILYARD_FUZZ_SCRATCH");
    std::filesystem::path base = env && *env ? std::filesystem::path(env)
                                 : std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    path_ = base / ("railyard-fuzz-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The harnesses' fabric: a 2-level ROFT, 8 servers x 2 rails at radix 8, with
// LIDs: leaves "leaf g000 r0" .. "leaf g001 r1" (ports 1-4 down, 5-8 up),
// CAs "node001 mlx5_0" .. "node008 mlx5_1". Seeds in the corpora use these names.
inline std::string small_fabric_text() {
  routing::GeneratorSpec spec;
  spec.servers = 8;
  spec.rails = 2;
  spec.radix = 8;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  if (!g.ok()) {
    std::fprintf(stderr, "fuzz setup: cannot generate the fabric: %s\n", g.error().message.c_str());
    std::abort();
  }
  return routing::write_topology(g->fabric);
}

inline bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;  // cut short
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates, beyond U+10FFFF.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += n + 1;
  }
  return true;
}

[[noreturn]] inline void violation(const char* what, const std::string& request, const api::HttpResponse& r) {
  std::fprintf(stderr, "\n*** railyard fuzz check failed: %s\n*** request: %s\n*** response: %d %s\n%.*s\n", what,
               request.c_str(), r.status, r.content_type.c_str(), static_cast<int>(std::min<size_t>(r.body.size(), 4096)),
               r.body.data());
  std::fflush(stderr);
  std::abort();
}

// The promises of every API response, whatever the request:
//  - a status of 100..599, header fields without CR, LF or NUL;
//  - a JSON content type means the body is valid UTF-8 and parses as JSON;
//  - no 500 "internal error": that is an exception escaping a handler (the
//    server's catch-all), i.e. a bug the request could trigger at will.
// `request` describes the request in the messages.
inline void check_response(const std::string& request, const api::HttpResponse& r) {
  if (r.status < 100 || r.status > 599) violation("status out of 100..599", request, r);
  for (const auto& [name, value] : r.headers) {
    if ((name + value).find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      violation("CR, LF or NUL in a response header", request, r);
    }
  }
  if (r.content_type.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    violation("CR, LF or NUL in the content type", request, r);
  }
  if (r.content_type.rfind("application/json", 0) == 0) {
    if (!valid_utf8(r.body)) violation("JSON body is not valid UTF-8", request, r);
    const nlohmann::json doc = nlohmann::json::parse(r.body, nullptr, false);
    if (doc.is_discarded()) violation("JSON body does not parse", request, r);
    if (r.status == 500 && doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
      const std::string message = doc["error"].value("message", "");
      if (message.rfind("internal error", 0) == 0 || message.rfind("the change was made but", 0) == 0) {
        violation("an exception escaped a handler (500)", request, r);
      }
    }
  }
}

// A started controller on `cfg` with a fresh store; aborts (a setup failure,
// not a finding) when either cannot be had.
inline std::unique_ptr<controller::Controller> start_controller(const controller::ControllerConfig& cfg) {
  auto store = controller::Store::open(cfg.database);
  if (!store.ok()) {
    std::fprintf(stderr, "fuzz setup: %s\n", store.error().message.c_str());
    std::abort();
  }
  auto c = std::make_unique<controller::Controller>(cfg, std::move(store).value());
  if (Status s = c->start(); !s.ok()) {
    std::fprintf(stderr, "fuzz setup: %s\n", s.error().message.c_str());
    std::abort();
  }
  return c;
}

}  // namespace railyard::fuzz
