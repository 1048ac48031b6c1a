#include "cli/io.h"

#include <cerrno>
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

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    std::cout.flush();  // what the command printed before goes first
    file_ = stdout;
    return;
  }
  tmp_ = path_ + ".tmp";
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr) {
    error_ = Error{tmp_ + ": cannot create: " + std::strerror(errno)};
    tmp_.clear();  // not ours to remove
  }
}

OutputFile::~OutputFile() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

void OutputFile::fail(std::string message) {
  if (!error_) error_ = Error{std::move(message)};
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
  file_ = nullptr;
}

void OutputFile::write(std::string_view data) {
  if (file_ == nullptr || data.empty()) return;
  if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) {
    fail((tmp_.empty() ? std::string("standard output") : tmp_) + ": write error: " + std::strerror(errno));
  }
}

Status OutputFile::commit() {
  if (file_ == stdout) {
    file_ = nullptr;
    if (std::fflush(stdout) != 0) fail(std::string("standard output: write error: ") + std::strerror(errno));
  } else if (file_ != nullptr) {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0) fail(tmp_ + ": write error: " + std::strerror(errno));
  }
  if (error_) return *error_;
  if (tmp_.empty()) return {};
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    return Error{path_ + ": cannot rename: " + std::strerror(errno)};  // the destructor removes tmp_
  }
  tmp_.clear();
  return {};
}

}  // namespace railyard::cli
