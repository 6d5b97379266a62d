// The fuzz targets; see fuzz_targets.hpp.
#include "tests/fuzz/fuzz_targets.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "minigrad/frontier/tarka/formula.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "minigrad/passes/rules/rule.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/io/idx.hpp"
#include "minigrad/runtime/io/npy.hpp"
#include "minigrad/runtime/io/safetensors.hpp"

namespace mg::fuzz {

namespace {

[[noreturn]] void violated(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz contract violated: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// The loaders read files: the input goes to a per-process scratch file first.
std::string scratch_file(const std::uint8_t* data, std::size_t size, const char* ext) {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    return std::string(t && *t ? t : "/tmp");
  }();
  const std::string path = dir + "/mg_fuzz_" + std::to_string(::getpid()) + ext;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) violated("cannot write the scratch file", path);
  if (size && std::fwrite(data, 1, size, f) != size) violated("short write", path);
  std::fclose(f);
  return path;
}

constexpr std::int64_t kMaxElements = 1 << 16;  // graphs this small are also run

}  // namespace

void text_ir(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<ir::Graph> g;
  try {
    g = ir::parse(text, "fuzz.mgir");
  } catch (const UserError&) {
    return;  // rejected with a located error: fine
  }
  // Accepted: it must print, parse back to the same text, verify, and (when small) run.
  const std::string printed = ir::to_text(*g);
  std::unique_ptr<ir::Graph> again;
  try {
    again = ir::parse(printed, "printed.mgir");
  } catch (const UserError& e) {
    violated("a printed graph does not parse back", printed + "\n" + e.what());
  }
  if (ir::to_text(*again) != printed) violated("print(parse(print(g))) != print(g)", printed);
  ir::verify(*again);
  std::int64_t total = 0;
  for (ir::NodeId id = 0; id < again->size(); ++id) total += again->node(id).type.numel();
  if (total > kMaxElements || again->outputs.empty()) return;
  rt::Bindings in;
  for (ir::NodeId id : again->inputs()) {
    const ir::Node& n = again->node(id);
    in.emplace(n.name, Array::zeros(n.type));
  }
  try {
    rt::compile(*again, again->outputs).run(in);
  } catch (const UserError&) {
    // e.g. an index out of range found at run time
  }
}

void npy(const std::uint8_t* data, std::size_t size) {
  try {
    io::load_npy(scratch_file(data, size, ".npy"));
  } catch (const UserError&) {
  }
}

void safetensors(const std::uint8_t* data, std::size_t size) {
  try {
    io::load_safetensors(scratch_file(data, size, ".safetensors"));
  } catch (const UserError&) {
  }
}

void idx(const std::uint8_t* data, std::size_t size) {
  // The first byte picks raw or gzip, the file name tells the reader which.
  const bool gz = size > 0 && (data[0] & 1);
  try {
    io::read_idx(scratch_file(data, size, gz ? "-images.gz" : "-images"), DType::f32, 1.0 / 255);
  } catch (const UserError&) {
  }
}

void pipeline(const std::uint8_t* data, std::size_t size) {
  try {
    passes::parse_pipeline(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const UserError&) {
  }
}

void rules(const std::uint8_t* data, std::size_t size) {
  try {
    passes::rules::parse_rules(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.rules");
  } catch (const UserError&) {
  }
}

void tarka_formula(const std::uint8_t* data, std::size_t size) {
  namespace tk = frontier::tarka;
  tk::FormulaPtr f;
  try {
    f = tk::parse_formula(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.logic");
  } catch (const UserError&) {
    return;
  }
  // Accepted: its canonical text must parse back to the same tree and print the same.
  const std::string printed = tk::print(*f);
  tk::FormulaPtr again;
  try {
    again = tk::parse_formula(printed, "printed.logic");
  } catch (const UserError& e) {
    violated("a printed formula does not parse back", printed + "\n" + e.what());
  }
  if (!tk::same_formula(*f, *again)) violated("parse(print(f)) != f", printed);
  if (tk::print(*again) != printed) violated("print(parse(print(f))) != print(f)", printed);
}

}  // namespace mg::fuzz
