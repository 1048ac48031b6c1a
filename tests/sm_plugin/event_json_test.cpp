// The plugin's use of the shared wire format (sm_plugin/event_json.h): whole
// lines for its socket, and which command lines it acts on. The encoding and
// decoding themselves are tested in tests/protocol/.
#include "sm_plugin/event_json.h"

#include <gtest/gtest.h>

namespace railyard::sm_plugin {
namespace {

TEST(PluginEventLine, OneLineEndedByANewline) {
  const std::string line = event_line(Event{7, 1.5, SimpleEvent{SimpleKind::kSubnetUp}});
  EXPECT_EQ(line, "{\"seq\":7,\"time\":1.5,\"type\":\"subnet_up\"}\n");
}

TEST(PluginCommands, Commands) {
  auto r = parse_command_line(R"({"type":"reroute","id":"R-17"})" "\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->kind, CommandKind::kReroute);
  EXPECT_EQ((*r)->id, "R-17");

  auto p = parse_command_line(R"({"type":"policy_changed","id":"P","extra":[1,2]})");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->kind, CommandKind::kPolicyChanged);
  EXPECT_EQ(to_string((*p)->kind), "policy_changed");

  auto no_id = parse_command_line(R"({"type":"reroute"})");
  ASSERT_TRUE(no_id.ok());
  ASSERT_TRUE(no_id->has_value());
  EXPECT_EQ((*no_id)->id, "");

  auto unknown = parse_command_line(R"({"type":"dance","id":"x"})");
  ASSERT_TRUE(unknown.ok()) << "unknown types are ignored, not errors";
  EXPECT_FALSE(unknown->has_value());
  auto untyped = parse_command_line(R"({"id":"x"})");
  ASSERT_TRUE(untyped.ok());
  EXPECT_FALSE(untyped->has_value());
}

TEST(PluginCommands, BadCommandsAreNamed) {
  auto garbage = parse_command_line("reroute now");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().message, "not JSON");
  auto array = parse_command_line(R"(["reroute"])");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().message, "not a JSON object");
  auto num_id = parse_command_line(R"({"type":"reroute","id":7})");
  ASSERT_FALSE(num_id.ok());
  EXPECT_EQ(num_id.error().message, "reroute: id must be a string");
  auto long_id = parse_command_line(R"({"type":"reroute","id":")" + std::string(129, 'x') + "\"}");
  ASSERT_FALSE(long_id.ok());
  EXPECT_EQ(long_id.error().message, "reroute: id longer than 128 bytes");
  auto max_id = parse_command_line(R"({"type":"reroute","id":")" + std::string(128, 'x') + "\"}");
  EXPECT_TRUE(max_id.ok());
}

TEST(PluginCommands, AnObjectWithoutAStringTypeIsIgnored) {
  for (const char* line : {R"({"type":5,"id":"x"})", R"({"type":null})", R"({})"}) {
    auto r = parse_command_line(line);
    ASSERT_TRUE(r.ok()) << line << ": " << r.error().message;
    EXPECT_FALSE(r->has_value()) << line;
  }
}

}  // namespace
}  // namespace railyard::sm_plugin
