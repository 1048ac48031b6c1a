#include "cli/io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

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
  if (path == "-") {
    std::cout << data;
    std::cout.flush();
    return {};
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{tmp + ": cannot create: " + std::strerror(errno)};
    out << data;
    out.flush();
    if (!out) return Error{tmp + ": write error"};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Error{path + ": cannot rename: " + std::strerror(errno)};
  return {};
}

}  // namespace railyard::cli
