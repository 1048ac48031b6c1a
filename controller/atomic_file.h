// The daemon's one way to replace a file: write a temporary file beside it,
// fsync it, rename it over the old one, fsync the folder. A reader (OpenSM's
// plugin reading the policy file) sees the old file or the new one, never a
// mix; after a crash the file is one of the two. On any failure (disk full,
// read-only file system) the old file is untouched, the temporary one removed,
// and the error names the file and the cause.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "routing/result.h"

namespace railyard::controller {

Status write_file_atomically(const std::string& path, std::string_view data, mode_t mode);

}  // namespace railyard::controller
