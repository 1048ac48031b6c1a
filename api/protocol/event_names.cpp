#include "api/protocol/event_names.h"

#include <array>
#include <utility>

#include "routing/topology_writer.h"

namespace railyard::protocol {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
// Spelled out: clang 14 does not deduce an aggregate's template arguments.
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

constexpr std::array<std::pair<SimpleKind, std::string_view>, 5> kSimpleKinds = {{
    {SimpleKind::kHeavySweepStart, "heavy_sweep_start"},
    {SimpleKind::kHeavySweepDone, "heavy_sweep_done"},
    {SimpleKind::kSubnetUp, "subnet_up"},
    {SimpleKind::kSaDbDumped, "sa_db_dumped"},
    {SimpleKind::kStateChange, "state_change"},
}};

constexpr std::array<std::pair<RoutingReason, std::string_view>, 4> kReasons = {{
    {RoutingReason::kNone, "none"},
    {RoutingReason::kHeavySweep, "heavy_sweep"},
    {RoutingReason::kReroute, "reroute"},
    {RoutingReason::kFastPath, "fast_path"},
}};

}  // namespace

std::string_view to_string(SimpleKind kind) {
  for (const auto& [k, name] : kSimpleKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<SimpleKind> parse_simple_kind(std::string_view type) {
  for (const auto& [k, name] : kSimpleKinds) {
    if (name == type) return k;
  }
  return std::nullopt;
}

std::string_view to_string(RoutingReason reason) {
  for (const auto& [r, name] : kReasons) {
    if (r == reason) return name;
  }
  return "none";
}

std::optional<RoutingReason> parse_routing_reason(std::string_view text) {
  for (const auto& [r, name] : kReasons) {
    if (name == text) return r;
  }
  return std::nullopt;
}

namespace {

constexpr char kStateChars[] = {'?', 'D', 'I', 'R', 'A'};  // PortState order

// The enum value whose to_string is `text`: every value from 0 to `last`.
template <class E>
std::optional<E> parse_enum(std::string_view text, E last) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (routing::to_string(static_cast<E>(i)) == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

char port_state_char(routing::PortState state) {
  const auto i = static_cast<size_t>(state);
  return i < sizeof kStateChars ? kStateChars[i] : '?';
}

std::optional<routing::PortState> parse_port_state_char(char c) {
  for (size_t i = 0; i < sizeof kStateChars; ++i) {
    if (kStateChars[i] == c) return static_cast<routing::PortState>(i);
  }
  return std::nullopt;
}

std::optional<routing::NodeType> parse_node_type(std::string_view text) {
  return parse_enum(text, routing::NodeType::kRouter);
}
std::optional<routing::LinkWidth> parse_link_width(std::string_view text) {
  return parse_enum(text, routing::LinkWidth::k12x);
}
std::optional<routing::LinkSpeed> parse_link_speed(std::string_view text) {
  return parse_enum(text, routing::LinkSpeed::kXdr);
}
std::optional<routing::PortState> parse_port_state(std::string_view text) {
  return parse_enum(text, routing::PortState::kActive);
}

std::string_view event_type(const EventBody& body) {
  return std::visit(Overloaded{
                        [](const SimpleEvent& e) { return to_string(e.kind); },
                        [](const TrapEvent&) { return std::string_view("trap"); },
                        [](const LftChangeEvent&) { return std::string_view("lft_change"); },
                        [](const UcastRoutingDoneEvent&) { return std::string_view("ucast_routing_done"); },
                        [](const RoutingPassEvent&) { return std::string_view("routing_pass"); },
                        [](const FabricEvent&) { return std::string_view("fabric"); },
                        [](const PortCountersEvent&) { return std::string_view("port_counters"); },
                        [](const PortErrorsEvent&) { return std::string_view("port_errors"); },
                        [](const PortSelectEvent&) { return std::string_view("port_select"); },
                        [](const AckEvent&) { return std::string_view("ack"); },
                        [](const HelloEvent&) { return std::string_view("hello"); },
                        [](const FastPathEvent&) { return std::string_view("fast_path"); },
                        [](const FabricChangesEvent&) { return std::string_view("fabric_changes"); },
                        [](const SmStateEvent&) { return std::string_view("sm_state"); },
                    },
                    body);
}

bool FabricEvent::operator==(const FabricEvent& other) const {
  if (pass != other.pass || !fabric != !other.fabric) return false;
  return !fabric || fabric == other.fabric ||
         routing::write_topology(*fabric) == routing::write_topology(*other.fabric);
}

}  // namespace railyard::protocol
