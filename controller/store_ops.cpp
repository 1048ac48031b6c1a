#include "controller/store_ops.h"

#include <cmath>
#include <limits>

namespace railyard::controller {

using nlohmann::json;

namespace {

template <class... F>
struct OpsOverloaded : F... {
  using F::operator()...;
};
template <class... F>
OpsOverloaded(F...) -> OpsOverloaded<F...>;

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Reads fields of one op; the first problem is kept (and named) and the
// readers return zero values after it.
struct OpReader {
  const json& j;
  std::string error;

  const json* field(const char* name) {
    auto it = j.find(name);
    if (it == j.end()) {
      if (error.empty()) error = std::string("'") + name + "' is missing";
      return nullptr;
    }
    return &*it;
  }
  void wrong(const char* name, const char* what) {
    if (error.empty()) error = std::string("'") + name + "' is not " + what;
  }
  std::string str(const char* name) {
    const json* v = field(name);
    if (v == nullptr) return {};
    if (!v->is_string()) return wrong(name, "a string"), std::string();
    return v->get<std::string>();
  }
  int64_t i64(const char* name) {
    const json* v = field(name);
    if (v == nullptr) return 0;
    if (!v->is_number_integer()) return wrong(name, "an integer"), 0;
    return v->get<int64_t>();
  }
  uint64_t u64(const char* name) {
    const json* v = field(name);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      return wrong(name, "a count"), 0;
    }
    return v->get<uint64_t>();
  }
  double real(const char* name) {
    const json* v = field(name);
    if (v == nullptr) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) return wrong(name, "a number"), 0.0;
    return v->get<double>();
  }
  std::optional<double> opt_real(const char* name) {
    const json* v = field(name);
    if (v == nullptr || v->is_null()) return std::nullopt;
    return real(name);
  }
  template <class E>
  E word(const char* name, std::optional<E> (*parse)(std::string_view)) {
    const std::string text = str(name);
    if (!error.empty()) return E{};
    if (std::optional<E> e = parse(text)) return *e;
    if (error.empty()) error = std::string("'") + name + "': unknown value '" + text + "'";
    return E{};
  }
};

}  // namespace

json encode_op(const StoreOp& op) {
  return std::visit(
      OpsOverloaded{
          [](const OpAddDrain& x) -> json {
            const DrainRecord& d = x.drain;
            return {{"op", "add_drain"},       {"id", d.id},
                    {"kind", to_string(d.kind)}, {"target", d.target},
                    {"target_name", d.target_name}, {"reason", d.reason},
                    {"created_by", d.created_by}, {"created_at", d.created_at},
                    {"expires_at", opt_json(d.expires_at)}, {"removed_at", opt_json(d.removed_at)},
                    {"removed_by", d.removed_by}};
          },
          [](const OpRemoveDrain& x) -> json {
            return {{"op", "remove_drain"}, {"id", x.id}, {"by", x.by}, {"at", x.at}};
          },
          [](const OpAddEvent& x) -> json {
            const EventRecord& e = x.event;
            return {{"op", "add_event"},     {"id", e.id},     {"time", e.time},
                    {"source", to_string(e.source)}, {"type", e.type}, {"external_id", e.external_id},
                    {"body", e.body}};
          },
          [](const OpAddLinkState& x) -> json {
            const LinkStateRecord& s = x.state;
            return {{"op", "add_link_state"}, {"id", x.id},     {"link", s.link},
                    {"state", to_string(s.state)}, {"time", s.time}, {"source", to_string(s.source)},
                    {"reason", s.reason}};
          },
          [](const OpAddAudit& x) -> json {
            const AuditRecord& a = x.audit;
            return {{"op", "add_audit"}, {"id", a.id},         {"time", a.time},     {"actor", a.actor},
                    {"role", a.role},    {"action", a.action}, {"request", a.request}, {"status", a.status},
                    {"result", a.result}};
          },
          [](const OpPutJob& x) -> json {
            const JobRecord& r = x.job;
            return {{"op", "put_job"},        {"id", r.id},           {"request", r.request},
                    {"trees", r.trees},       {"status", to_string(r.status)}, {"detail", r.detail},
                    {"created_by", r.created_by}, {"created_at", r.created_at}, {"updated_at", r.updated_at},
                    {"version", r.version}};
          },
          [](const OpPutReroute& x) -> json {
            const RerouteRecord& r = x.reroute;
            return {{"op", "put_reroute"}, {"id", r.id},         {"requested_at", r.requested_at},
                    {"requested_by", r.requested_by}, {"reason", r.reason}, {"status", to_string(r.status)},
                    {"finished_at", opt_json(r.finished_at)}, {"latency_ms", opt_json(r.latency_ms)}, {"detail", r.detail}};
          },
          [](const OpFinishReroute& x) -> json {
            return {{"op", "finish_reroute"}, {"id", x.id}, {"status", to_string(x.status)}, {"at", x.at},
                    {"detail", x.detail}};
          },
          [](const OpPrune& x) -> json {
            return {{"op", "prune"},
                    {"now", x.now},
                    {"events_max_age_s", x.events_max_age_s},
                    {"events_max_count", x.events_max_count},
                    {"audit_max_age_s", x.audit_max_age_s},
                    {"audit_max_count", x.audit_max_count}};
          },
          [](const OpIdempotency& x) -> json {
            const IdempotencyRecord& r = x.record;
            return {{"op", "idempotency"}, {"key", r.key}, {"request", r.request}, {"time", r.time},
                    {"result", r.result}};
          },
      },
      op);
}

Result<StoreOp> decode_op(const json& j) {
  if (!j.is_object()) return Error{"an op is not an object"};
  OpReader r{j, {}};
  const std::string name = r.str("op");
  if (!r.error.empty()) return Error{"op: " + r.error};
  StoreOp out;
  if (name == "add_drain") {
    DrainRecord d;
    d.id = r.i64("id");
    d.kind = r.word("kind", parse_drain_kind);
    d.target = r.str("target");
    d.target_name = r.str("target_name");
    d.reason = r.str("reason");
    d.created_by = r.str("created_by");
    d.created_at = r.real("created_at");
    d.expires_at = r.opt_real("expires_at");
    d.removed_at = r.opt_real("removed_at");
    d.removed_by = r.str("removed_by");
    out = OpAddDrain{std::move(d)};
  } else if (name == "remove_drain") {
    out = OpRemoveDrain{r.i64("id"), r.str("by"), r.real("at")};
  } else if (name == "add_event") {
    EventRecord e;
    e.id = r.i64("id");
    e.time = r.real("time");
    e.source = r.word("source", parse_reporter);
    e.type = r.str("type");
    e.external_id = r.str("external_id");
    e.body = r.str("body");
    out = OpAddEvent{std::move(e)};
  } else if (name == "add_link_state") {
    OpAddLinkState s;
    s.id = r.i64("id");
    s.state.link = r.str("link");
    s.state.state = r.word("state", parse_link_state);
    s.state.time = r.real("time");
    s.state.source = r.word("source", parse_reporter);
    s.state.reason = r.str("reason");
    out = std::move(s);
  } else if (name == "add_audit") {
    AuditRecord a;
    a.id = r.i64("id");
    a.time = r.real("time");
    a.actor = r.str("actor");
    a.role = r.str("role");
    a.action = r.str("action");
    a.request = r.str("request");
    a.status = static_cast<int>(r.i64("status"));
    a.result = r.str("result");
    out = OpAddAudit{std::move(a)};
  } else if (name == "put_job") {
    JobRecord job;
    job.id = r.str("id");
    job.request = r.str("request");
    job.trees = r.str("trees");
    job.status = r.word("status", parse_job_status);
    job.detail = r.str("detail");
    job.created_by = r.str("created_by");
    job.created_at = r.real("created_at");
    job.updated_at = r.real("updated_at");
    job.version = r.i64("version");
    out = OpPutJob{std::move(job)};
  } else if (name == "put_reroute") {
    RerouteRecord x;
    x.id = r.str("id");
    x.requested_at = r.real("requested_at");
    x.requested_by = r.str("requested_by");
    x.reason = r.str("reason");
    x.status = r.word("status", parse_reroute_status);
    x.finished_at = r.opt_real("finished_at");
    x.latency_ms = r.opt_real("latency_ms");
    x.detail = r.str("detail");
    out = OpPutReroute{std::move(x)};
  } else if (name == "finish_reroute") {
    OpFinishReroute x;
    x.id = r.str("id");
    x.status = r.word("status", parse_reroute_status);
    x.at = r.real("at");
    x.detail = r.str("detail");
    out = std::move(x);
  } else if (name == "prune") {
    out = OpPrune{r.real("now"), r.real("events_max_age_s"), r.u64("events_max_count"), r.real("audit_max_age_s"),
                  r.u64("audit_max_count")};
  } else if (name == "idempotency") {
    IdempotencyRecord x;
    x.key = r.str("key");
    x.request = r.str("request");
    x.time = r.real("time");
    x.result = r.str("result");
    out = OpIdempotency{std::move(x)};
  } else {
    return Error{"unknown op '" + name.substr(0, 40) + "'"};
  }
  if (!r.error.empty()) return Error{"op " + name + ": " + r.error};
  return out;
}

std::string encode_batch(const std::vector<StoreOp>& ops) {
  json list = json::array();
  for (const StoreOp& op : ops) list.push_back(encode_op(op));
  return json{{"v", kOpsFormat}, {"ops", std::move(list)}}.dump();
}

Result<std::vector<StoreOp>> decode_batch(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"a log entry is not a JSON object"};
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() != kOpsFormat) {
    return Error{"a log entry of an unknown format (this railyardd reads v " + std::to_string(kOpsFormat) + ")"};
  }
  auto list = j.find("ops");
  if (list == j.end() || !list->is_array()) return Error{"a log entry without an 'ops' list"};
  std::vector<StoreOp> out;
  out.reserve(list->size());
  for (const json& x : *list) {
    Result<StoreOp> op = decode_op(x);
    if (!op) return op.error();
    out.push_back(std::move(*op));
  }
  return out;
}

}  // namespace railyard::controller
