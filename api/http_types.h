// The HTTP exchange as plain values: the server (http_server.h) fills an
// HttpRequest from the wire, the Api (api.h) answers with an HttpResponse.
// Nothing here knows about sockets, so the API is testable in-process too.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railyard::api {

struct HttpRequest {
  std::string method;  // GET, POST, DELETE, ...
  std::string path;    // decoded, without the query
  std::map<std::string, std::string> query;
  std::string authorization;  // the Authorization header
  std::string idempotency_key;  // the Idempotency-Key header (mutations: a retry changes nothing twice)
  std::string body;
  std::string peer;           // "127.0.0.1:54321", for the log
};

// The body of a response that stays open (server-sent events): after the
// headers the server asks next() every kEventPollMs on an I/O thread and
// writes what it returns ("" = nothing new). next() must not block. The
// server ends the stream when the client goes away or a write stalls.
class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual std::string next() = 0;
};
inline constexpr int kEventPollMs = 250;
inline constexpr int kEventKeepaliveS = 15;  // a ": keepalive" comment when nothing was sent for this long

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra (Retry-After, WWW-Authenticate)
  std::shared_ptr<EventSource> events;  // set: a text/event-stream; `body` is sent first
};

// Splits "a/b%20c?x=1&y" into the path, still percent-encoded (so an encoded
// '/' inside a segment stays inside it: endpoints.h decodes each segment), and
// the decoded query; false on bad escapes.
bool split_target(const std::string& target, std::string* path, std::map<std::string, std::string>* query);

// Splits also refuse (false) a target with bytes outside visible ASCII.
//
// Percent-decoding ("+" is a space only in queries); false on a bad escape or
// when the result is not clean UTF-8 (below).
bool percent_decode(std::string_view in, std::string* out, bool plus_is_space);

// Valid UTF-8 (no overlong forms, no surrogates) without control characters
// (C0 and DEL; NUL included): what every name, id and reason must be.
bool is_clean_utf8(std::string_view text);

}  // namespace railyard::api
