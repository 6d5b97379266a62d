// Replays the committed fuzz corpus (tests/fuzz/corpus/<target>/*) through every target in
// the ordinary build: seeds and every input that once crashed stay regression tests.
// Usage: fuzz_replay CORPUS_DIR. Prints one line per target; exit 1 on a contract violation
// (the target aborts) or an exception other than UserError.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_replay CORPUS_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  std::size_t total = 0;
  for (const auto& t : mg::fuzz::kTargets) {
    const fs::path dir = fs::path(argv[1]) / std::string(t.name);
    std::vector<fs::path> files;
    if (fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) files.push_back(e.path());
    if (files.empty()) {
      std::printf("FAIL %s: no corpus in %s\n", std::string(t.name).c_str(), dir.c_str());
      return 1;
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      try {
        t.run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      } catch (const std::exception& e) {
        std::printf("FAIL %s: %s threw %s\n", std::string(t.name).c_str(), f.c_str(), e.what());
        return 1;
      }
    }
    total += files.size();
    std::printf("ok %-12s %zu inputs\n", std::string(t.name).c_str(), files.size());
  }
  std::printf("%zu passed, 0 failed\n", total);
  return 0;
}
