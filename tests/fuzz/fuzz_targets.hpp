// Fuzz targets over everything that reads bytes a user (or an attacker) controls. Each is
// a function of one input; the contract is: return normally or throw mg::UserError, never
// crash, hang, leak or touch memory it does not own. Built two ways (tests/fuzz/README.md):
// as libFuzzer targets under clang + ASan/UBSan (scripts/fuzz.sh), and as a replay of the
// committed corpus in the ordinary GCC test suite (tests/fuzz/replay_main.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mg::fuzz {

using Target = void (*)(const std::uint8_t* data, std::size_t size);

struct NamedTarget {
  std::string_view name;  // also the corpus folder: tests/fuzz/corpus/<name>/
  Target run;
};

void text_ir(const std::uint8_t* data, std::size_t size);     // parse -> print -> parse, verify, interpret small graphs
void npy(const std::uint8_t* data, std::size_t size);         // load_npy
void safetensors(const std::uint8_t* data, std::size_t size); // load_safetensors
void idx(const std::uint8_t* data, std::size_t size);         // read_idx (raw and gzip)
void pipeline(const std::uint8_t* data, std::size_t size);    // parse_pipeline
void rules(const std::uint8_t* data, std::size_t size);       // parse_rules
void tarka_formula(const std::uint8_t* data, std::size_t size);  // TARKA's parse_formula -> print -> parse

inline constexpr NamedTarget kTargets[] = {
    {"text_ir", text_ir}, {"npy", npy},           {"safetensors", safetensors},
    {"idx", idx},         {"pipeline", pipeline}, {"rules", rules},
    {"tarka_formula", tarka_formula},
};

}  // namespace mg::fuzz
