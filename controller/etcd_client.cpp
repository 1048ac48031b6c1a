#include "controller/etcd_client.h"

#include "api/http_exchange/http_exchange.h"

// Before Asio: Boost 1.74's awaitable.hpp uses std::exchange without including it.
#include <utility>

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <charconv>

namespace railyard::controller::etcd {

namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxReplyBytes = 64ull << 20;
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// An int64 the gateway sends as a string ("123") — or, leniently, a number.
// Absent: 0 (proto3 leaves zero values out).
Result<int64_t> number(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return int64_t{0};
  if (it->is_number_integer()) return it->get<int64_t>();
  if (!it->is_string()) return Error{std::string("'") + field + "' is not a number"};
  const std::string& s = it->get_ref<const std::string&>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return Error{std::string("'") + field + "' is not a number: '" + s.substr(0, 40) + "'"};
  }
  return v;
}

Result<json> parse_object(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"the reply is not a JSON object"};
  return j;
}

Result<int64_t> header_revision(const json& reply) {
  auto it = reply.find("header");
  if (it == reply.end()) return int64_t{0};
  if (!it->is_object()) return Error{"'header' is not an object"};
  return number(*it, "revision");
}

Result<std::string> bytes_field(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Error{std::string("'") + field + "' is not a string"};
  Result<std::string> decoded = base64_decode(it->get_ref<const std::string&>());
  if (!decoded) return Error{std::string("'") + field + "': " + decoded.error().message};
  return decoded;
}

Result<RangeReply> range_from(const json& reply) {
  RangeReply out;
  Result<int64_t> rev = header_revision(reply);
  if (!rev) return rev.error();
  out.revision = *rev;
  if (auto more = reply.find("more"); more != reply.end()) {
    if (!more->is_boolean()) return Error{"'more' is not a boolean"};
    out.more = more->get<bool>();
  }
  auto kvs = reply.find("kvs");
  if (kvs == reply.end() || kvs->is_null()) return out;
  if (!kvs->is_array()) return Error{"'kvs' is not a list"};
  for (const json& kv : *kvs) {
    if (!kv.is_object()) return Error{"a kvs entry is not an object"};
    KeyValue v;
    Result<std::string> key = bytes_field(kv, "key");
    if (!key) return key.error();
    Result<std::string> value = bytes_field(kv, "value");
    if (!value) return value.error();
    v.key = std::move(*key);
    v.value = std::move(*value);
    for (auto [field, out_field] : {std::pair{"create_revision", &v.create_revision},
                                    std::pair{"mod_revision", &v.mod_revision}, std::pair{"version", &v.version},
                                    std::pair{"lease", &v.lease}}) {
      Result<int64_t> n = number(kv, field);
      if (!n) return n.error();
      *out_field = *n;
    }
    out.kvs.push_back(std::move(v));
  }
  return out;
}

json op_json(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::kPut: {
      json put = {{"key", base64_encode(op.key)}, {"value", base64_encode(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", put}};
    }
    case TxnOp::Kind::kRange: {
      json range = {{"key", base64_encode(op.key)}};
      if (!op.range_end.empty()) range["range_end"] = base64_encode(op.range_end);
      return {{"request_range", range}};
    }
    case TxnOp::Kind::kDelete: {
      json del = {{"key", base64_encode(op.key)}};
      if (!op.range_end.empty()) del["range_end"] = base64_encode(op.range_end);
      return {{"request_delete_range", del}};
    }
  }
  return json::object();
}

// "http://host:port" -> host, port.
bool split_endpoint(const std::string& endpoint, std::string* host, std::string* port) {
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = endpoint;
  if (!rest.starts_with(kScheme)) return false;
  rest.remove_prefix(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) return false;
  *host = std::string(rest.substr(0, colon));
  *port = std::string(rest.substr(colon + 1));
  return port->find_first_not_of("0123456789") == std::string::npos && port->size() <= 5;
}

}  // namespace

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t n = uint32_t(uint8_t(in[i])) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return Error{"bad base64 (length " + std::to_string(in.size()) + " is not a multiple of 4)"};
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return Error{"bad base64 (data after '=')"};
      v[k] = value(c);
      if (v[k] < 0) return Error{"bad base64 (character " + std::to_string(int(uint8_t(c))) + ")"};
    }
    const uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

Result<RangeReply> parse_range_reply(std::string_view body) {
  Result<json> j = parse_object(body);
  if (!j) return Error{"etcd range: " + j.error().message};
  Result<RangeReply> r = range_from(*j);
  if (!r) return Error{"etcd range: " + r.error().message};
  return r;
}

Result<TxnReply> parse_txn_reply(std::string_view body) {
  Result<json> j = parse_object(body);
  if (!j) return Error{"etcd txn: " + j.error().message};
  TxnReply out;
  Result<int64_t> rev = header_revision(*j);
  if (!rev) return Error{"etcd txn: " + rev.error().message};
  out.revision = *rev;
  if (auto s = j->find("succeeded"); s != j->end()) {
    if (!s->is_boolean()) return Error{"etcd txn: 'succeeded' is not a boolean"};
    out.succeeded = s->get<bool>();
  }
  if (auto responses = j->find("responses"); responses != j->end() && !responses->is_null()) {
    if (!responses->is_array()) return Error{"etcd txn: 'responses' is not a list"};
    for (const json& r : *responses) {
      if (!r.is_object()) return Error{"etcd txn: a response is not an object"};
      auto range = r.find("response_range");
      if (range == r.end()) continue;
      if (!range->is_object()) return Error{"etcd txn: 'response_range' is not an object"};
      Result<RangeReply> rr = range_from(*range);
      if (!rr) return Error{"etcd txn: " + rr.error().message};
      out.ranges.push_back(std::move(*rr));
    }
  }
  return out;
}

Result<Lease> parse_lease_grant_reply(std::string_view body) {
  Result<json> j = parse_object(body);
  if (!j) return Error{"etcd lease grant: " + j.error().message};
  if (auto e = j->find("error"); e != j->end() && e->is_string() && !e->get_ref<const std::string&>().empty()) {
    return Error{"etcd lease grant: " + e->get<std::string>()};
  }
  Result<int64_t> id = number(*j, "ID");
  Result<int64_t> ttl = number(*j, "TTL");
  if (!id || !ttl) return Error{"etcd lease grant: " + (!id ? id.error() : ttl.error()).message};
  if (*id == 0 || *ttl <= 0) return Error{"etcd lease grant: no lease in the reply"};
  return Lease{*id, *ttl};
}

Result<int64_t> parse_keepalive_reply(std::string_view body) {
  // A stream of {"result": {...}} objects; one request sent, the first answers it.
  const size_t newline = body.find('\n');
  Result<json> j = parse_object(newline == std::string_view::npos ? body : body.substr(0, newline));
  if (!j) return Error{"etcd lease keepalive: " + j.error().message};
  if (auto e = j->find("error"); e != j->end()) {
    if (e->is_object()) return Error{"etcd lease keepalive: " + e->value("message", std::string("error"))};
    return Error{"etcd lease keepalive: error"};
  }
  auto result = j->find("result");
  if (result == j->end() || !result->is_object()) return Error{"etcd lease keepalive: no 'result' object"};
  Result<int64_t> ttl = number(*result, "TTL");
  if (!ttl) return Error{"etcd lease keepalive: " + ttl.error().message};
  return *ttl < 0 ? 0 : *ttl;
}

std::string encode_txn_request(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                               const std::vector<TxnOp>& failure) {
  json req = json::object();
  json cmp = json::array();
  for (const Compare& c : compares) {
    json x = {{"key", base64_encode(c.key)}, {"result", "EQUAL"}};
    switch (c.target) {
      case Compare::Target::kCreate:
        x["target"] = "CREATE";
        x["create_revision"] = std::to_string(c.number);
        break;
      case Compare::Target::kMod:
        x["target"] = "MOD";
        x["mod_revision"] = std::to_string(c.number);
        break;
      case Compare::Target::kVersion:
        x["target"] = "VERSION";
        x["version"] = std::to_string(c.number);
        break;
      case Compare::Target::kValue:
        x["target"] = "VALUE";
        x["value"] = base64_encode(c.value);
        break;
    }
    cmp.push_back(std::move(x));
  }
  req["compare"] = std::move(cmp);
  json ok = json::array(), ko = json::array();
  for (const TxnOp& op : success) ok.push_back(op_json(op));
  for (const TxnOp& op : failure) ko.push_back(op_json(op));
  req["success"] = std::move(ok);
  if (!ko.empty()) req["failure"] = std::move(ko);
  return req.dump();
}

Client::Client(std::vector<std::string> endpoints, std::chrono::milliseconds timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {}

std::string Client::current_endpoint() const {
  return endpoints_.empty() ? std::string() : endpoints_[current_.load() % endpoints_.size()];
}

Result<Client::HttpAnswer> Client::post(const std::string& endpoint, const std::string& path,
                                        const std::string& body) const {
  std::string host, port;
  if (!split_endpoint(endpoint, &host, &port)) return Error{endpoint + ": not an http://host:port address"};
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, host + ":" + port);
  req.set(http::field::content_type, "application/json");
  req.keep_alive(false);
  req.body() = body;
  req.prepare_payload();

  const http_exchange::Outcome got = http_exchange::exchange(host, port, req, timeout_, kMaxReplyBytes);
  if (got.timed_out) {
    return Error{endpoint + path + ": no answer within " + std::to_string(timeout_.count()) + " ms"};
  }
  if (!got.ok) return Error{endpoint + path + ": " + got.stage + ": " + got.error};
  return HttpAnswer{static_cast<int>(got.response.result_int()), got.response.body()};
}

Result<std::string> Client::call(const std::string& path, const std::string& body) {
  if (endpoints_.empty()) return Error{"etcd: no endpoints"};
  std::string errors;
  const size_t start = current_.load();
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t at = (start + i) % endpoints_.size();
    Result<HttpAnswer> a = post(endpoints_[at], path, body);
    std::string why;
    if (!a) {
      why = a.error().message;
    } else if (a->status == 200) {
      current_ = at;
      return std::move(a->body);
    } else {
      // etcd's own error: {"error": "...", "message": "...", "code": N}.
      json j = json::parse(a->body, nullptr, false);
      std::string message = j.is_object() && j.contains("message") && j["message"].is_string()
                                ? j["message"].get<std::string>()
                                : a->body.substr(0, 200);
      why = endpoints_[at] + path + ": HTTP " + std::to_string(a->status) + ": " + message;
      // A 4xx is the request's fault (a lease not found): another member
      // would say the same.
      if (a->status < 500) return Error{"etcd: " + why};
    }
    errors += (errors.empty() ? "" : "; ") + why;
  }
  return Error{"etcd: no member answered (" + errors + ")"};
}

Result<RangeReply> Client::range(const std::string& key, const std::string& range_end, int64_t limit) {
  json req = {{"key", base64_encode(key)}};
  if (!range_end.empty()) req["range_end"] = base64_encode(range_end);
  if (limit > 0) req["limit"] = std::to_string(limit);
  Result<std::string> body = call("/v3/kv/range", req.dump());
  if (!body) return body.error();
  return parse_range_reply(*body);
}

Result<int64_t> Client::put(const std::string& key, const std::string& value, int64_t lease) {
  json req = {{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease != 0) req["lease"] = std::to_string(lease);
  Result<std::string> body = call("/v3/kv/put", req.dump());
  if (!body) return body.error();
  Result<json> j = parse_object(*body);
  if (!j) return Error{"etcd put: " + j.error().message};
  Result<int64_t> rev = header_revision(*j);
  if (!rev) return Error{"etcd put: " + rev.error().message};
  return *rev;
}

Result<TxnReply> Client::txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                             const std::vector<TxnOp>& failure) {
  Result<std::string> body = call("/v3/kv/txn", encode_txn_request(compares, success, failure));
  if (!body) return body.error();
  return parse_txn_reply(*body);
}

Result<Lease> Client::lease_grant(int64_t ttl_s) {
  Result<std::string> body = call("/v3/lease/grant", json{{"TTL", std::to_string(ttl_s)}}.dump());
  if (!body) return body.error();
  return parse_lease_grant_reply(*body);
}

Result<int64_t> Client::lease_keepalive(int64_t id) {
  Result<std::string> body = call("/v3/lease/keepalive", json{{"ID", std::to_string(id)}}.dump());
  if (!body) return body.error();
  return parse_keepalive_reply(*body);
}

Status Client::lease_revoke(int64_t id) {
  Result<std::string> body = call("/v3/lease/revoke", json{{"ID", std::to_string(id)}}.dump());
  if (!body) return body.error();
  return {};
}

}  // namespace railyard::controller::etcd
