// A main() for a fuzz harness without libFuzzer: feeds every file named on the
// command line (a folder: every regular file in it, recursively, in name
// order) once through LLVMFuzzerTestOneInput. A harness reports a violation by
// aborting (or a sanitizer does), so passing means every input went through.
// tests/fuzz/CMakeLists.txt builds <name>_replay from it and registers
// fuzz_corpus.<name> over tests/fuzz/corpus/<corpus> as a unit test.
//
//   build/asan/tests/fuzz/api_request_fuzz_replay tests/fuzz/corpus/api_request
//   build/asan/tests/fuzz/api_request_fuzz_replay crash-1234   # one input
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(arg)) {
        if (e.is_regular_file()) inputs.push_back(e.path());
      }
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder\n", arg.c_str());
      return 2;
    }
  }
  if (inputs.empty()) {
    // A corpus that silently vanished would make this test pass on nothing.
    std::fprintf(stderr, "no inputs found\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", p.c_str());
      return 2;
    }
    // Printed first, so the input is named when the harness aborts on it.
    std::fprintf(stderr, "replay %s (%zu bytes)\n", p.c_str(), bytes.size());
    std::fflush(stderr);
    // An exact-size heap copy, as libFuzzer gives: ASan sees any over-read.
    std::unique_ptr<uint8_t[]> data(new uint8_t[bytes.size() ? bytes.size() : 1]);
    std::copy(bytes.begin(), bytes.end(), data.get());
    LLVMFuzzerTestOneInput(data.get(), bytes.size());
  }
  std::fprintf(stderr, "%zu inputs passed\n", inputs.size());
  return 0;
}
