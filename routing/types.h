// Strong identifier types shared by every part of railyard.
//
// Indices into the fabric's flat arrays are 32-bit and typed, so a node index
// can never be passed where a port or link index is expected. GUIDs, LIDs and
// port numbers carry their InfiniBand widths.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace railyard {

// The sentinels of the flat arrays' 32-bit entries: "no such index" (no
// switch, no node, no port) and "unreachable" (a distance). One definition
// for every file (a unity build compiles several .cpp files as one).
inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
inline constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();

// A typed 32-bit index into one of the fabric's arrays.
template <class Tag>
class Index {
 public:
  using Rep = uint32_t;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

  constexpr Index() = default;
  constexpr explicit Index(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr bool valid() const { return v_ != kInvalid; }
  static constexpr Index invalid() { return Index(); }
  constexpr auto operator<=>(const Index&) const = default;

 private:
  Rep v_ = kInvalid;
};

struct NodeTag;
struct PortTag;
struct LinkTag;
using NodeId = Index<NodeTag>;  // a switch, CA or router
using PortId = Index<PortTag>;  // a port, globally numbered across nodes
using LinkId = Index<LinkTag>;  // a cable between two ports

// 64-bit node, port or system-image GUID.
struct Guid {
  uint64_t value = 0;
  constexpr auto operator<=>(const Guid&) const = default;
  constexpr bool valid() const { return value != 0; }
};

// 16-bit local identifier. Unicast LIDs are 1..0xBFFF; 0 means "unassigned".
struct Lid {
  static constexpr uint16_t kMaxUnicast = 0xBFFF;
  uint16_t value = 0;
  constexpr auto operator<=>(const Lid&) const = default;
  constexpr bool valid() const { return value != 0 && value <= kMaxUnicast; }
};

// Port number on a node: 0 is a switch's management port, 1..254 physical.
struct PortNum {
  uint8_t value = 0;
  constexpr auto operator<=>(const PortNum&) const = default;
};

}  // namespace railyard

template <class Tag>
struct std::hash<railyard::Index<Tag>> {
  size_t operator()(railyard::Index<Tag> i) const noexcept { return std::hash<uint32_t>()(i.value()); }
};
template <>
struct std::hash<railyard::Guid> {
  size_t operator()(railyard::Guid g) const noexcept { return std::hash<uint64_t>()(g.value); }
};
