// File helpers for the command-line tools (routing/ itself does no I/O).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "routing/result.h"

namespace railyard::cli {

// Whole file as a string; "-" reads standard input.
Result<std::string> read_file(const std::string& path);
// Writes atomically (temporary file + rename); "-" writes standard output.
Status write_file(const std::string& path, const std::string& data);

// A file written as a stream, atomically: the bytes go to "<path>.tmp", which
// commit() renames over `path`, so a reader never sees half a file; without
// commit() (an error, an exception) the destructor removes the temporary
// file. "-" streams to standard output. The first failure is kept and every
// later write ignored, so a producer can write everything and ask once, at
// commit(). No fsync, as write_file: atomic against readers, not against a crash.
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);
  Status commit();

 private:
  void fail(std::string message);

  std::string path_;
  std::string tmp_;            // empty for standard output
  std::FILE* file_ = nullptr;  // null after a failure or commit()
  std::optional<Error> error_;
};

}  // namespace railyard::cli
