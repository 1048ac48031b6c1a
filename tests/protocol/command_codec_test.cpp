// Commands through the shared codec: what railyardd sends, as the plugin
// reads it.
#include "api/protocol/command_codec.h"

#include <gtest/gtest.h>

namespace railyard::protocol {
namespace {

TEST(CommandCodec, EveryCommandRoundTrips) {
  for (CommandKind kind : {CommandKind::kReroute, CommandKind::kPolicyChanged, CommandKind::kSendFabric}) {
    for (const std::string& id : {std::string("r1796156611901-3"), std::string(), std::string(kMaxRequestId, 'x')}) {
      const Command c{kind, id};
      const std::string line = encode_command(c);
      Decoded<Command> back = decode_command_line(line);
      ASSERT_TRUE(back.ok()) << line << " -> " << back.error().message();
      EXPECT_EQ(*back, c) << line;
      EXPECT_EQ(encode_command(*back), line);
    }
  }
}

TEST(CommandCodec, NotLeaderAndPolicyCarryTheirFields) {
  const Command not_leader{CommandKind::kNotLeader, "", "tls://10.0.0.2:8641"};
  EXPECT_EQ(encode_command(not_leader), R"({"leader":"tls://10.0.0.2:8641","type":"not_leader"})");
  Decoded<Command> back = decode_command_line(encode_command(not_leader));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, not_leader);
  // No leader known: empty, absent or null all read as "".
  for (const char* line : {R"({"type":"not_leader","leader":""})", R"({"type":"not_leader"})",
                           R"({"type":"not_leader","leader":null})"}) {
    Decoded<Command> c = decode_command_line(line);
    ASSERT_TRUE(c.ok()) << line;
    EXPECT_EQ(c->kind, CommandKind::kNotLeader);
    EXPECT_EQ(c->leader, "");
  }
  const Command policy{CommandKind::kPolicy, "p3", "", "drains:\n  - link: \"a\"\n"};
  EXPECT_EQ(encode_command(policy), R"({"id":"p3","type":"policy","yaml":"drains:\n  - link: \"a\"\n"})");
  back = decode_command_line(encode_command(policy));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, policy);
  Decoded<Command> no_yaml = decode_command_line(R"({"type":"policy","id":"p"})");
  ASSERT_FALSE(no_yaml.ok());
  EXPECT_EQ(no_yaml.error().message(), "policy: yaml is missing");
  Decoded<Command> bad_leader = decode_command_line(R"({"type":"not_leader","leader":5})");
  ASSERT_FALSE(bad_leader.ok());
  EXPECT_EQ(bad_leader.error().message(), "not_leader: leader must be a string");
}

TEST(CommandCodec, ReceivedCarriesItsLineCountAndNoId) {
  Command received{CommandKind::kReceived};
  received.lines = 4097;
  EXPECT_EQ(encode_command(received), R"({"lines":4097,"type":"received"})");
  Decoded<Command> back = decode_command_line(encode_command(received));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, received);
  // An id sent with it is ignored (it carries none).
  Decoded<Command> with_id = decode_command_line(R"({"type":"received","lines":3,"id":"x"})");
  ASSERT_TRUE(with_id.ok());
  EXPECT_EQ(with_id->id, "");
  EXPECT_EQ(with_id->lines, 3u);
  for (const char* bad : {R"({"type":"received"})", R"({"type":"received","lines":-1})",
                          R"({"type":"received","lines":"3"})", R"({"type":"received","lines":1.5})"}) {
    EXPECT_FALSE(decode_command_line(bad).ok()) << bad;
  }
}

TEST(CommandCodec, TheWireFormatIsUnchanged) {
  // What railyardd has always sent (nlohmann::json, keys sorted).
  EXPECT_EQ(encode_command(Command{CommandKind::kPolicyChanged, "r17-1"}), R"({"id":"r17-1","type":"policy_changed"})");
  EXPECT_EQ(encode_command(Command{CommandKind::kReroute, "r17-2"}), R"({"id":"r17-2","type":"reroute"})");
  // And the lines the integration tests write by hand.
  Decoded<Command> c = decode_command_line(R"({"type":"policy_changed","id":"it-policy-1"})" "\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, (Command{CommandKind::kPolicyChanged, "it-policy-1"}));
}

TEST(CommandCodec, TheIdMayBeAbsentOrNull) {
  for (const char* line : {R"({"type":"reroute"})", R"({"type":"reroute","id":null})"}) {
    Decoded<Command> c = decode_command_line(line);
    ASSERT_TRUE(c.ok()) << line;
    EXPECT_EQ(c->id, "") << line;
  }
}

TEST(CommandCodec, BadCommandsAreRefusedNamingTheField) {
  using K = DecodeError::Kind;
  const struct {
    std::string line;
    K kind;
    std::string message;
  } cases[] = {
      {"reroute now", K::kNotJson, "not JSON"},
      {R"(["reroute"])", K::kNotAnObject, "not a JSON object"},
      {R"({"id":"x"})", K::kMissingField, "type is missing"},
      {R"({"type":5})", K::kWrongType, "type must be a string"},
      {R"({"type":"dance","id":"x"})", K::kUnknownType, "unknown type 'dance'"},
      {R"({"type":"reroute","id":7})", K::kWrongType, "reroute: id must be a string"},
      {R"({"type":"policy_changed","id":")" + std::string(129, 'x') + "\"}", K::kBadValue,
       "policy_changed: id longer than 128 bytes"},
  };
  for (const auto& c : cases) {
    Decoded<Command> d = decode_command_line(c.line);
    ASSERT_FALSE(d.ok()) << c.line;
    EXPECT_EQ(d.error().kind, c.kind) << c.line << " -> " << d.error().message();
    EXPECT_EQ(d.error().message(), c.message) << c.line;
  }
}

}  // namespace
}  // namespace railyard::protocol
