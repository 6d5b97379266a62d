// Standalone export; see export.hpp.
#include "minigrad/runtime/c99/export.hpp"

#include <filesystem>
#include <fstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/runtime/io/atomic_file.hpp"
#include "minigrad/runtime/io/safetensors.hpp"

namespace mg::rt::c99 {

namespace fs = std::filesystem;

namespace {
void write_atomically(const fs::path& p, const std::string& text) {
  io::write_file_atomically(p.string(), text, "export_c('" + p.string() + "')");  // unique temp, fsync, rename
}
}  // namespace

Module export_c(const ir::Graph& g, const std::string& dir, const ExportOptions& options,
                const std::vector<StateUpdate>& state) {
  if (g.outputs.empty() && state.empty()) throw UserError("export_c: the graph has no outputs");
  ir::verify(g);
  Options o;
  o.name = options.name;
  o.standalone = true;
  if (c_identifier(o.name) != o.name)
    throw UserError("export_c: the name '" + o.name + "' is not a C identifier (try '" + c_identifier(o.name) + "')");
  if (!options.weights.empty()) {
    io::SafeTensors st = io::load_safetensors(options.weights);
    for (auto& [name, a] : st.tensors) {
      const ir::Value in = const_cast<ir::Graph&>(g).input(name);
      if (in.valid()) o.weights.emplace(name, a);
    }
    if (o.weights.empty())
      throw UserError("export_c: no tensor of " + options.weights + " names a graph input");
  }
  Module m = emit_module(g, g.outputs, state, o);
  const std::uint64_t need = static_cast<std::uint64_t>(m.arena_bytes) + m.weight_bytes + m.constant_bytes;
  if (options.max_bytes != 0 && need > options.max_bytes)
    throw UserError("export_c: the target would need " + std::to_string(need) + " bytes of static memory (arena " +
                    std::to_string(m.arena_bytes) + ", weights " + std::to_string(m.weight_bytes) + ", constants " +
                    std::to_string(m.constant_bytes) + "), over the limit of " + std::to_string(options.max_bytes) +
                    " bytes; nothing was written");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UserError("export_c: cannot create the directory " + dir);
  write_atomically(fs::path(dir) / (m.name + ".h"), m.header);
  write_atomically(fs::path(dir) / (m.name + ".c"), m.source);
  return m;
}

}  // namespace mg::rt::c99
