// ApiSession: railyardd's /api/v1 as the commands see it. It resolves the
// token, sends requests, parses JSON replies, and turns every failure into
// one line on stderr ("railyardctl: <status> <message>") and an exit code
// (exit_codes.h), so a command only handles the answers it cares about.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cli/railyardctl/exit_codes.h"
#include "cli/railyardctl/http_client.h"

namespace railyard::ctl {

inline constexpr const char* kDefaultUrl = "http://127.0.0.1:8640";

struct GlobalOptions {
  // --url, else $RAILYARD_URL, else kDefaultUrl. Several, comma separated
  // (the members of an HA controller, docs/railyardctl.md): reads go to the
  // first that answers; a mutation refused 503 by a member that names the
  // leader is sent to the leader (at most kMaxLeaderHops times), else to the
  // next URL, always with the same Idempotency-Key.
  std::string url;
  std::string token;       // --token (visible in `ps`: prefer a file)
  std::string token_file;  // --token-file
  bool json = false;       // print the API's JSON instead of tables
  double timeout_s = 30;
};

struct ApiReply {
  int status = 0;
  nlohmann::json body;      // the parsed JSON body; null for text or unparsable bodies
  std::string text;         // the body as sent
  std::string retry_after;  // Retry-After (429)
  bool ok() const { return status >= 200 && status < 300; }
};

class ApiSession {
 public:
  // Throws CommandExit (after printing why) for a bad URL or token file.
  explicit ApiSession(const GlobalOptions& options);
  ApiSession(const ApiSession&) = delete;
  ApiSession& operator=(const ApiSession&) = delete;

  // One request; `body` null sends none. Transport failures print and throw
  // CommandExit{kTransport}; HTTP errors come back in the reply.
  ApiReply call(std::string_view method, const std::string& target, const nlohmann::json& body = nullptr) const;
  // GET that must succeed: a non-2xx reply goes to fail().
  ApiReply get(const std::string& target) const;

  // Prints the reply's error (and, with --json, its body on stdout unless the
  // command already printed it) and throws CommandExit with its status's code.
  [[noreturn]] void fail(const ApiReply& reply, bool body_printed = false) const;

  bool json_output() const { return json_; }
  // --json: the reply body exactly as the API sent it.
  void print_raw(const ApiReply& reply) const;

 private:
  // One request to one URL; TransportError when it did not answer.
  HttpReply send(const HttpClient& client, std::string_view method, const std::string& target,
                 const std::string& body, const std::string& key) const;

  std::vector<HttpClient> clients_;  // one per --url, in order
  mutable size_t preferred_ = 0;     // the one that answered last
  std::string token_;
  std::chrono::milliseconds timeout_{30000};
  bool json_;
};

inline constexpr int kMaxLeaderHops = 3;

// "a, b,c" -> {"a", "b", "c"} (blanks around each dropped, empty ones too).
std::vector<std::string> split_urls(const std::string& text);
// A random Idempotency-Key (128 bits, hex).
std::string new_idempotency_key();

// Where the token comes from, first found wins: --token, --token-file,
// $RAILYARD_TOKEN, $RAILYARD_TOKEN_FILE. Empty when none is given (health,
// metrics and openapi.json need none). Throws CommandExit{kUsage} when a
// named file cannot be read or is empty.
std::string resolve_token(const GlobalOptions& options);

// "/api/v1/" + the segments, each percent-encoded, joined by '/':
// api_path({"routes", "node001 mlx5_0", "42"}).
std::string api_path(std::initializer_list<std::string_view> segments);

// Prints "railyardctl: <message>" on stderr.
void print_error(const std::string& message);

}  // namespace railyard::ctl
