// File helpers for the command-line tools (routing/ itself does no I/O).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "controller/files/atomic_file.h"
#include "routing/result.h"

namespace railyard::cli {

// Whole file as a string; "-" reads standard input.
Result<std::string> read_file(const std::string& path);
// Writes atomically (controller/files/atomic_file.h); "-" writes standard output.
Status write_file(const std::string& path, const std::string& data);

// A file written as a stream through files::AtomicFile (a reader never sees
// half a file, a crash leaves the old file or the new one; without commit()
// the old file is untouched), or, for "-", to standard output. The first
// failure is kept and every later write ignored, so a producer can write
// everything and ask once, at commit().
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);
  Status commit();

 private:
  std::optional<files::AtomicFile> file_;  // empty for standard output
  std::optional<Error> stdout_error_;
};

}  // namespace railyard::cli
