#include "api/event_stream.h"

#include "api/render.h"
#include "controller/failure.h"

namespace railyard::api {

namespace {

constexpr uint32_t kBatch = 200;  // events per poll at most; the rest follow at the next poll

class EventStream : public EventSource {
 public:
  EventStream(Api& api, int64_t since) : api_(api), last_(since), stats_(api.http_stats()) {}
  ~EventStream() override { --stats_->event_streams; }

  std::string next() override {
    const controller::Store& store = api_.controller().store();
    if (store.last_event_id() <= last_) return "";
    std::string out;
    for (const controller::EventRecord& e : store.events_since(last_, kBatch)) {
      out += "event: event\nid: " + std::to_string(e.id) + "\ndata: " + render_event(e).dump() + "\n\n";
      last_ = e.id;
    }
    return out;
  }

 private:
  Api& api_;
  int64_t last_;
  std::shared_ptr<HttpStats> stats_;
};

}  // namespace

std::shared_ptr<EventSource> open_event_stream(Api& api, int64_t since) {
  const std::shared_ptr<HttpStats>& stats = api.http_stats();
  if (++stats->event_streams > kMaxEventStreams) {
    --stats->event_streams;
    throw controller::Failure::unavailable("too many event streams (at most " + std::to_string(kMaxEventStreams) +
                                           "); retry later");
  }
  return std::make_shared<EventStream>(api, since);
}

}  // namespace railyard::api
