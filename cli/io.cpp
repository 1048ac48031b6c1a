#include "cli/io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <utility>

namespace railyard::cli {

Result<std::string> read_file(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error{path + ": read error"};
  return data;
}

Status write_file(const std::string& path, const std::string& data) {
  OutputFile out(path);
  out.write(data);
  return out.commit();
}

// Files the tools write (topologies, tables) are for anyone to read.
constexpr mode_t kOutputMode = 0644;

OutputFile::OutputFile(std::string path) {
  if (path == "-") {
    std::cout.flush();  // what the command printed before goes first
    return;
  }
  // Outputs can be made again and may be large: replaced atomically, not
  // synced (controller/files/atomic_file.h, Durability).
  file_.emplace(std::move(path), kOutputMode, files::Durability::kReplaced);
}

void OutputFile::write(std::string_view data) {
  if (file_) return file_->write(data);
  if (stdout_error_ || data.empty()) return;
  if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size()) {
    stdout_error_ = Error{std::string("standard output: write error: ") + std::strerror(errno)};
  }
}

Status OutputFile::commit() {
  if (file_) return file_->commit();
  if (!stdout_error_ && std::fflush(stdout) != 0) {
    stdout_error_ = Error{std::string("standard output: write error: ") + std::strerror(errno)};
  }
  if (stdout_error_) return *stdout_error_;
  return {};
}

}  // namespace railyard::cli
