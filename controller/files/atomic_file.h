// AtomicFile: the one way railyard replaces a file (the controller's policy
// file, the `railyard` tool's outputs, railyardd's port file). A reader (OpenSM's
// plugin reading the policy file) sees the old file or the new one, never a
// mix; after a crash, power loss included, the file is one of the two.
//
// The bytes go to "<path>.tmp" beside the file (a rename is atomic only within
// one file system); commit() syncs it, renames it over `path` and syncs the
// folder, which makes the rename itself durable (Durability::kReplaced: the
// rename only). A failed commit() removes
// the temporary file at once, and without commit() (an exception, an early
// return) the destructor does: either way the old file is untouched. The first failure is kept and every later write
// ignored, so a producer streaming chunks writes everything and asks once, at
// commit(). Errors name the file and the cause ("<path>: cannot write:
// No space left on device"). The temporary name is fixed: one writer per path
// at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "routing/result.h"  // header-only Result/Error, shared by every layer

namespace railyard::files {

// How far commit() goes.
enum class Durability : uint8_t {
  // Synced, then renamed, then the folder synced: after a crash, power loss
  // included, the file is the old one or the new one. For state (the
  // controller's policy file, the port file).
  kSynced,
  // Renamed without syncing: a reader never sees a half-written file, but a
  // power loss shortly after may lose the new one. For outputs that can be
  // made again and may be large (`railyard route`'s 1.65 GB dump at 16k CAs:
  // syncing it costs seconds).
  kReplaced,
};

class AtomicFile {
 public:
  // The new file gets exactly `mode`, whatever the umask.
  AtomicFile(std::string path, mode_t mode, Durability durability = Durability::kSynced);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);
  // Once: the file is replaced (ok) or untouched (an error), with one
  // exception said in the error: the rename was done but the folder could not
  // be synced, so a crash may still bring the old file back.
  Status commit();

 private:
  void fail(const std::string& what, int err);

  std::string path_;
  std::string tmp_;
  mode_t mode_;
  Durability durability_;
  int fd_ = -1;              // -1 after a failure or commit()
  bool remove_tmp_ = false;  // the temporary file is ours and still there
  std::optional<Error> error_;
};

// The whole of `data` through one AtomicFile.
Status write_file_atomically(const std::string& path, std::string_view data, mode_t mode);

}  // namespace railyard::files
