// The C99 JIT backend: emits a graph as C (module.hpp), compiles it with the system C
// compiler into a shared object cached by content hash, loads it with dlopen, and runs
// it behind rt::Executable's API (same bindings, outputs and persistent state as the
// interpreter). Compiler failures are UserErrors naming the generated source file.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/runtime/c99/module.hpp"

namespace mg::rt::c99 {

// The compiler command as argv (without file names); $MG_CC overrides the compiler (default
// cc) and is split on spaces ("ccache gcc" works); no shell ever runs it.
std::vector<std::string> compiler_command();
// Where compiled modules are cached: $MG_C99_CACHE, else $XDG_CACHE_HOME/minigrad/c99,
// else ~/.cache/minigrad/c99, else /tmp/minigrad-c99-uid<euid>. It must be private to this
// user (jit_cache.hpp checks it).
std::string cache_dir();

// A compiled, loaded module: calls its entry with one pointer per Arg.
class Native {
 public:
  ~Native();
  static std::shared_ptr<Native> load(const Module& m);  // compiles unless cached
  int call(void* const* args, void* arena) const { return fn_(args, arena); }
  const std::string& source_path() const { return source_path_; }

 private:
  void* handle_ = nullptr;
  int (*fn_)(void* const*, void*) = nullptr;
  std::string source_path_;
};

// What rt::Executable holds for Backend::c99.
class NativeRunner {
 public:
  // check_numerics: the module checks every float value (Options::check_numerics) and a
  // non-finite one raises mg::NumericsError, the same report as the interpreter's.
  NativeRunner(const ir::Graph& g, std::vector<ir::NodeId> outputs, std::vector<StateUpdate> state,
               bool check_numerics = false);
  // `given`: one entry per graph input, in order (checked by the caller; null for state
  // and unneeded inputs); `state_values` the current state (replaced by the next values
  // on success). Returns the outputs.
  std::vector<Array> run(std::span<const Array* const> given, std::vector<Array>& state_values) const;
  const Module& module() const { return module_; }
  const std::string& source_path() const { return native_->source_path(); }

 private:
  const ir::Graph* graph_;
  Module module_;
  std::vector<std::size_t> input_position_;  // per Arg of kind input: its index in graph inputs
  std::shared_ptr<Native> native_;
  mutable std::unique_ptr<std::byte[]> arena_;
  std::byte* arena_aligned_ = nullptr;
  // Per state entry: the value before the last run, recycled as the next run's output
  // buffer when no one else holds it (a training step's weights and moments are MBs:
  // fresh buffers each step cost page faults).
  mutable std::vector<Array> spare_;
  mutable std::vector<void*> args_;  // the entry's argument pointers, reused across runs
};

}  // namespace mg::rt::c99
