// One libFuzzer binary per target: compiled with -DMG_FUZZ_TARGET=<name> by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mg::fuzz::MG_FUZZ_TARGET(data, size);
  return 0;
}
