// StoreOp: one write of the Store (store.h) as the replicated log carries it
// (docs/ha.md). An op holds everything the write decided — ids, times, the
// whole record — so that applying the same ops in the same order to the
// same database gives the same rows on every member (nothing is read from a
// clock or numbered by SQLite on replay). A batch is one Store transaction's
// ops: one etcd log entry, applied in one SQLite transaction.
//
// Encoded as JSON: {"v": 1, "ops": [{"op": "add_drain", ...}, ...]}; decoding
// checks every field (type, enum words) and refuses what it does not know:
// a member never applies half of an entry it cannot read.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "controller/store.h"
#include "routing/result.h"

namespace railyard::controller {

struct OpAddDrain { DrainRecord drain; };  // with its id
struct OpRemoveDrain { int64_t id = 0; std::string by; double at = 0; };
struct OpAddEvent { EventRecord event; };  // with its id
struct OpAddLinkState { int64_t id = 0; LinkStateRecord state; };
struct OpAddAudit { AuditRecord audit; };  // with its id
struct OpPutJob { JobRecord job; };
struct OpPutReroute { RerouteRecord reroute; };
struct OpFinishReroute { std::string id; RerouteStatus status = RerouteStatus::kFailed; double at = 0; std::string detail; };
struct OpPrune {
  double now = 0;
  double events_max_age_s = 0;
  uint64_t events_max_count = 0;
  double audit_max_age_s = 0;
  uint64_t audit_max_count = 0;
};
// A mutation's Idempotency-Key (api/), with what it made ("drain 12").
struct OpIdempotency { IdempotencyRecord record; };

using StoreOp = std::variant<OpAddDrain, OpRemoveDrain, OpAddEvent, OpAddLinkState, OpAddAudit, OpPutJob, OpPutReroute,
                             OpFinishReroute, OpPrune, OpIdempotency>;

nlohmann::json encode_op(const StoreOp& op);
Result<StoreOp> decode_op(const nlohmann::json& j);

inline constexpr int kOpsFormat = 1;
std::string encode_batch(const std::vector<StoreOp>& ops);
Result<std::vector<StoreOp>> decode_batch(std::string_view text);

}  // namespace railyard::controller
