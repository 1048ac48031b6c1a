// read_token_file: the one reader of bearer-token files, used by railyardd
// (config load, so `railyardd config check` reports a bad file) and by
// railyardctl (--token-file, $RAILYARD_TOKEN_FILE). Both must read a file the
// same way, or a token that works for one is a 401 for the other.
//
// The rule: the file holds one token. Whitespace around it (space, tab, CR,
// LF: what `echo`, editors and Windows line ends add) is ignored; whitespace
// or a control character inside it, a second non-empty line, or nothing at all
// is an error naming the file. The file must be a regular file that only its
// owner can access (mode & 077 == 0): a secret readable by others is refused,
// with the chmod that fixes it.
//
// Header-only: railyardctl includes it without linking railyardd's libraries.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "routing/result.h"

namespace railyard::controller {

// A token file is one line; anything this big is not one.
inline constexpr size_t kMaxTokenFileBytes = 64 * 1024;

namespace token_file_detail {

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The token in the bytes of a token file, by the rule above.
inline Result<std::string> parse_token_text(std::string_view text, const std::string& path) {
  const std::string where = "token file '" + path + "'";
  size_t begin = 0, end = text.size();
  while (begin < end && is_blank(text[begin])) ++begin;
  while (end > begin && is_blank(text[end - 1])) --end;
  const std::string_view token = text.substr(begin, end - begin);
  if (token.empty()) return Error{where + " is empty (it must hold one token)"};
  for (char c : token) {
    if (c == '\n' || c == '\r') return Error{where + " holds more than one line (it must hold one token)"};
  }
  for (char c : token) {
    if (c == ' ' || c == '\t') return Error{where + ": the token contains whitespace"};
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return Error{where + ": the token contains a control character"};
  }
  return std::string(token);
}

}  // namespace token_file_detail

inline Result<std::string> read_token_file(const std::string& path) {
  const std::string where = "token file '" + path + "'";
  // O_NONBLOCK: a FIFO at the path must not hang the open; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return Error{"cannot read the " + where + ": " + std::strerror(errno)};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"cannot read the " + where + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{where + " is not a regular file"};
  if ((st.st_mode & 077) != 0) {
    return Error{where + " can be read or written by group or others (mode " + token_file_detail::octal_mode(st.st_mode) +
                 "): run chmod 600 " + path};
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxTokenFileBytes) {
    return Error{where + " is larger than " + std::to_string(kMaxTokenFileBytes) + " bytes (it must hold one token)"};
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"cannot read the " + where + ": " + std::strerror(errno)};
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxTokenFileBytes) {
      return Error{where + " is larger than " + std::to_string(kMaxTokenFileBytes) + " bytes (it must hold one token)"};
    }
  }
  return token_file_detail::parse_token_text(text, path);
}

}  // namespace railyard::controller
