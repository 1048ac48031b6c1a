// Directed-route Get(PortInfo) SMPs (sm_plugin/probe/smp.h): the bytes of a
// request at the offsets IBA 1.3 vol. 1 14.2.1.2 gives, and replies read
// back, with every malformed reply refused.
#include "sm_plugin/probe/smp.h"

#include <gtest/gtest.h>

namespace railyard::sm_plugin {
namespace {

TEST(Smp, ParsesDirectedRoutes) {
  auto p = parse_dr_path("0,1,17,3");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().hops, (std::vector<uint8_t>{1, 17, 3}));
  EXPECT_EQ(to_string(p.value()), "0,1,17,3");
  auto own = parse_dr_path("0");
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own.value().hops.empty());
  auto bare = parse_dr_path("5,2");  // without the leading 0
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare.value().hops, (std::vector<uint8_t>{5, 2}));
  for (const char* bad : {"", "0,", "0,x", "0,256", "0,1,0", "1,,2", "-1"}) {
    EXPECT_FALSE(parse_dr_path(bad).ok()) << bad;
  }
  std::string long_path = "0";
  for (int i = 0; i < 64; ++i) long_path += ",1";
  EXPECT_FALSE(parse_dr_path(long_path).ok());
}

TEST(Smp, GetPortInfoHasTheFieldsAtTheirOffsets) {
  const DrPath path{{1, 17, 3}};
  const Smp m = portinfo_get(path, 9, 0x0102030405060708ull, 0xAABBCCDDEEFF0011ull);
  EXPECT_EQ(m[0], 1);     // BaseVersion
  EXPECT_EQ(m[1], 0x81);  // directed-route SMP class
  EXPECT_EQ(m[2], 1);     // ClassVersion
  EXPECT_EQ(m[3], 0x01);  // Get
  EXPECT_EQ(m[4], 0);     // D bit clear: outbound
  EXPECT_EQ(m[6], 0);     // HopPointer
  EXPECT_EQ(m[7], 3);     // HopCount
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m[8 + i], i + 1) << "TID byte " << i;
  EXPECT_EQ(m[16], 0x00);  // AttributeID 0x0015
  EXPECT_EQ(m[17], 0x15);
  EXPECT_EQ(m[20], 0);  // AttributeModifier = port 9
  EXPECT_EQ(m[23], 9);
  EXPECT_EQ(m[24], 0xAA);  // M_Key, big-endian
  EXPECT_EQ(m[31], 0x11);
  EXPECT_EQ(m[32], 0xFF);  // DrSLID and DrDLID permissive
  EXPECT_EQ(m[35], 0xFF);
  EXPECT_EQ(m[128], 0);  // InitialPath[0] unused
  EXPECT_EQ(m[129], 1);
  EXPECT_EQ(m[130], 17);
  EXPECT_EQ(m[131], 3);
  EXPECT_EQ(m[132], 0);
}

// A reply as a switch's SMA makes it: the request turned around.
Smp reply_to(const Smp& request, uint8_t state, uint8_t phys) {
  Smp r = request;
  r[3] = 0x81;  // GetResp
  r[4] = 0x80;  // D bit: inbound
  r[64 + 32] = static_cast<uint8_t>(0x50 | state);  // LinkSpeedSupported 5, PortState
  r[64 + 33] = static_cast<uint8_t>(phys << 4 | 2);
  return r;
}

TEST(Smp, ReadsThePortStateOfAReply) {
  const Smp req = portinfo_get(DrPath{{2}}, 7, 42, 0);
  auto r = parse_portinfo_reply(reply_to(req, 4, 5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().tid, 42u);
  EXPECT_EQ(r.value().status.port, 7);
  EXPECT_EQ(r.value().status.state, 4);
  EXPECT_EQ(r.value().status.phys_state, 5);
  auto down = parse_portinfo_reply(reply_to(req, 1, 2));
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down.value().status.state, 1);
  EXPECT_EQ(down.value().status.phys_state, 2);
}

TEST(Smp, RefusesWhatIsNotAGoodPortInfoReply) {
  const Smp req = portinfo_get(DrPath{{2}}, 7, 42, 0);
  Smp good = reply_to(req, 4, 5);
  EXPECT_FALSE(parse_portinfo_reply(std::span<const uint8_t>(good.data(), 100)).ok());
  Smp s = good;
  s[3] = 0x01;  // still a Get
  EXPECT_FALSE(parse_portinfo_reply(s).ok());
  s = good;
  s[1] = 0x01;  // LID-routed class
  EXPECT_FALSE(parse_portinfo_reply(s).ok());
  s = good;
  s[17] = 0x11;  // NodeInfo
  EXPECT_FALSE(parse_portinfo_reply(s).ok());
  s = good;
  s[5] = 0x1C;  // status: invalid attribute modifier
  auto bad = parse_portinfo_reply(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("001c"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace railyard::sm_plugin
