// libFuzzer target for the plugin socket's wire format (api/protocol/), the one
// definition both ends decode: the plugin its command lines, railyardd the
// plugin's event lines. The input is split at '\n'; each line is decoded as
// an event and as a command.
//
// Properties (a violation aborts):
//  - a line that does not decode says why (a non-empty message);
//  - a decoded message encodes to a line that decodes again, and that line
//    is a fixed point: encode(decode(encode(m))) == encode(m) byte for byte
//    (the first encode may round times to the microsecond). A fabric's
//    topology text is routing/'s round trip (topology_reader_fuzz); here its
//    pass and that it reads back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/protocol/command_codec.h"
#include "api/protocol/event_codec.h"

namespace {

using namespace railyard::protocol;

[[noreturn]] void violation(const char* what, std::string_view line, const std::string& detail) {
  std::fprintf(stderr, "*** plugin protocol: %s\n  line: %.*s\n  %s\n", what,
               static_cast<int>(std::min<size_t>(line.size(), 2048)), line.data(), detail.c_str());
  std::abort();
}

void check_event(std::string_view line) {
  Decoded<Event> first = decode_event_line(line);
  if (!first) {
    if (first.error().message().empty()) violation("a decode error without a message", line, "");
    return;
  }
  const std::string once = encode_event(*first);
  Decoded<Event> second = decode_event_line(once);
  if (!second) violation("an encoded event does not decode", once, second.error().message());
  if (const auto* fabric = std::get_if<FabricEvent>(&first->body)) {
    if (std::get<FabricEvent>(second->body).pass != fabric->pass) violation("the fabric's pass changed", once, "");
    return;
  }
  const std::string twice = encode_event(*second);
  if (twice != once) violation("encode(decode(line)) is not a fixed point", once, twice);
}

void check_command(std::string_view line) {
  Decoded<Command> first = decode_command_line(line);
  if (!first) {
    if (first.error().message().empty()) violation("a decode error without a message", line, "");
    return;
  }
  const std::string once = encode_command(*first);
  Decoded<Command> second = decode_command_line(once);
  if (!second) violation("an encoded command does not decode", once, second.error().message());
  if (!(*second == *first)) violation("the command changed", once, encode_command(*second));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    check_event(line);
    check_command(line);
  }
  return 0;
}
