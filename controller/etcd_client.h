// EtcdClient: the few calls of etcd's v3 API that railyardd's replication
// needs (docs/ha.md), over etcd's JSON gateway (POST /v3/kv/range, /v3/kv/put,
// /v3/kv/txn, /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke; keys and
// values base64, 64-bit numbers as JSON strings) with Boost.Beast.
//
//   - several endpoints: a call goes to the one that answered last; when it
//     cannot be reached, times out or answers 5xx, the next one is tried (each
//     at most once per call);
//   - bounded: every attempt has `timeout` for connect, send and receive;
//   - every reply is validated: a body that is not the JSON expected, a bad
//     base64 or number is an Error naming the call, never a crash.
// Thread-safe: each call has its own connection and io_context.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/result.h"

namespace railyard::controller::etcd {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

struct RangeReply {
  int64_t revision = 0;  // the store's revision when read
  std::vector<KeyValue> kvs;
  bool more = false;     // limit cut the answer short
};

// One comparison of a transaction: `key`'s create or mod revision (or
// version) equal to `number`, or its value equal to `value`.
struct Compare {
  enum class Target : uint8_t { kCreate, kMod, kVersion, kValue };
  std::string key;
  Target target = Target::kCreate;
  int64_t number = 0;
  std::string value;
};

// One operation of a transaction: a put (with a lease, 0: none) or a range.
struct TxnOp {
  enum class Kind : uint8_t { kPut, kRange, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;      // put
  int64_t lease = 0;      // put
  std::string range_end;  // range, delete: empty = the key alone
};

struct TxnReply {
  bool succeeded = false;
  int64_t revision = 0;                    // after the transaction (its own when it wrote)
  std::vector<RangeReply> ranges;          // the kRange ops' answers, in order
};

struct Lease {
  int64_t id = 0;
  int64_t ttl = 0;
};

// The first key after every key starting with `prefix` (etcd's range_end for a prefix).
std::string prefix_end(std::string_view prefix);

std::string base64_encode(std::string_view bytes);
// Error on a character outside the alphabet, bad padding or length.
Result<std::string> base64_decode(std::string_view text);

// Parsers of the gateway's replies (pure: the unit tests feed them bad bodies).
Result<RangeReply> parse_range_reply(std::string_view body);
Result<TxnReply> parse_txn_reply(std::string_view body);
Result<Lease> parse_lease_grant_reply(std::string_view body);
// The TTL left; 0 when the lease is gone (etcd answers without a TTL).
Result<int64_t> parse_keepalive_reply(std::string_view body);
// The request bodies (pure).
std::string encode_txn_request(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                               const std::vector<TxnOp>& failure);

class Client {
 public:
  // endpoints: "http://host:port" each (https is not supported); at least one.
  Client(std::vector<std::string> endpoints, std::chrono::milliseconds timeout);

  Result<RangeReply> range(const std::string& key, const std::string& range_end = {}, int64_t limit = 0);
  Result<int64_t> put(const std::string& key, const std::string& value, int64_t lease = 0);  // the revision
  Result<TxnReply> txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                       const std::vector<TxnOp>& failure = {});
  Result<Lease> lease_grant(int64_t ttl_s);
  Result<int64_t> lease_keepalive(int64_t id);  // TTL left, 0: gone
  Status lease_revoke(int64_t id);

  const std::vector<std::string>& endpoints() const { return endpoints_; }
  // "http://host:port" of the endpoint that answered last.
  std::string current_endpoint() const;

  // One POST to one endpoint: the HTTP status and body, or why not (pure
  // transport; public for the tests).
  struct HttpAnswer {
    int status = 0;
    std::string body;
  };
  Result<HttpAnswer> post(const std::string& endpoint, const std::string& path, const std::string& body) const;

 private:
  // POSTs to the endpoints in turn, from the current one; the body of a 200.
  Result<std::string> call(const std::string& path, const std::string& body);

  std::vector<std::string> endpoints_;
  std::chrono::milliseconds timeout_;
  std::atomic<size_t> current_{0};
};

}  // namespace railyard::controller::etcd
