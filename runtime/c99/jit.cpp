// cc + dlopen behind rt::Executable; see jit.hpp.
#include "minigrad/runtime/c99/jit.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops/native_kernels.hpp"
#include "minigrad/runtime/c99/jit_cache.hpp"
#include "minigrad/runtime/glassbox/numerics_c99.hpp"

namespace mg::rt::c99 {

namespace {
// The lookup a module's <name>_bind calls for each kernel pointer (Module::bound_kernels).
extern "C" ir::native::CFunction mg_jit_kernel(const char* c_name) { return ir::native::c_kernel(c_name); }
}  // namespace

std::vector<std::string> compiler_command() {
  std::vector<std::string> argv;
  const char* cc = std::getenv("MG_CC");
  std::istringstream words(cc && *cc ? cc : "cc");  // split on spaces; no shell is involved
  for (std::string w; words >> w;) argv.push_back(w);
  // -fno-math-errno: with errno to set, sqrtf is a scalar call per element and loops around
  // it do not vectorise (Adam's update ran 8x slower); -fno-trapping-math: float selects
  // vectorise. Results are the same (no reassociation, no contraction). -O3, not -O2:
  // most of a big module's compile is its one step function (miniGPT: ~21 of 23 s of CPU),
  // and -O2 there (kernels kept at -O3, vect-cost-model=dynamic) compiled it in 9 s with
  // the miniGPT and MLP steps unchanged, but the CNN step ran 2x slower (its convolution
  // loops, written into the step function, need -O3's unrolling and peeling).
  // The module calls no BLAS (its GEMMs are its own), so it neither includes <cblas.h> nor
  // links OpenBLAS: 25% of a small module's compile was that header and that library.
  for (const char* flag : {"-std=c99", "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno",
                           "-fno-trapping-math", "-fopenmp", "-fPIC", "-shared", "-pipe", "-w"})
    argv.emplace_back(flag);
  return argv;
}

std::string cache_dir() {
  if (const char* d = std::getenv("MG_C99_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/minigrad/c99";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/minigrad/c99";
  // No home: a directory of this user's own (created 0700 and checked), never a shared one.
  return "/tmp/minigrad-c99-uid" + std::to_string(::geteuid());
}

Native::~Native() {
  if (handle_) dlclose(handle_);
}

std::shared_ptr<Native> Native::load(const Module& m) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Native>> loaded;
  const std::vector<std::string> cmd = compiler_command();
  std::string cmd_text;
  for (auto& w : cmd) cmd_text += w + " ";
  const std::string key = m.name + "-" + content_hash(cmd_text + "\n" + m.header + "\n" + m.source);
  std::lock_guard lock(mu);
  if (auto p = loaded[key].lock()) return p;

  const CachedObject obj = cached_compile(key, m.name + ".h", m.header, m.source, cmd, {"-lm"});
  auto p = std::shared_ptr<Native>(new Native());
  p->source_path_ = obj.source.string();
  p->handle_ = dlopen(obj.object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle_) throw UserError("C99 backend: cannot load " + obj.object.string() + ": " + dlerror());
  p->fn_ = reinterpret_cast<int (*)(void* const*, void*)>(dlsym(p->handle_, (m.name + "_call").c_str()));
  if (!p->fn_) throw UserError("C99 backend: " + obj.object.string() + " has no " + m.name + "_call");
  if (!m.bound_kernels.empty()) {
    using Bind = int (*)(ir::native::CFunction (*)(const char*));
    auto bind = reinterpret_cast<Bind>(dlsym(p->handle_, (m.name + "_bind").c_str()));
    if (!bind || bind(mg_jit_kernel) != 0)
      throw UserError("C99 backend: cannot bind " + obj.object.string() + "'s kernels to the library's");
  }
  loaded[key] = p;
  return p;
}

NativeRunner::NativeRunner(const ir::Graph& g, std::vector<ir::NodeId> outputs, std::vector<StateUpdate> state,
                           bool check_numerics)
    : graph_(&g) {
  Options o;
  o.name = "mg_jit";
  o.standalone = false;
  // The library's kernels were compiled for this CPU's ISA, as `cc -march=native` compiles a
  // module; with MG_CC (other flags, another target) or MG_C99_KERNEL_TEXT=1 (a suspected
  // library copy ruled out) the module compiles their text, as an export has it.
  const auto set = [](const char* var) {
    const char* v = std::getenv(var);
    return v && *v && std::string(v) != "0";
  };
  o.host_kernels = !set("MG_CC") && !set("MG_C99_KERNEL_TEXT") && ir::native::kernels<float>() &&
                   ir::native::kernels<double>();
  o.check_numerics = check_numerics;
  module_ = emit_module(g, outputs, state, o);
  native_ = Native::load(module_);
  const auto& ins = g.inputs();
  for (const Arg& a : module_.args)
    if (a.kind == ArgKind::input)
      input_position_.push_back(static_cast<std::size_t>(std::find(ins.begin(), ins.end(), a.node) - ins.begin()));
  arena_ = std::make_unique<std::byte[]>(module_.arena_bytes + 64);
  auto addr = reinterpret_cast<std::uintptr_t>(arena_.get());
  arena_aligned_ = arena_.get() + ((64 - addr % 64) % 64);
}

std::vector<Array> NativeRunner::run(std::span<const Array* const> given, std::vector<Array>& state_values) const {
  args_.clear();
  std::vector<Array> outs, next;
  outs.reserve(module_.args.size());
  next.reserve(state_values.size());
  spare_.resize(state_values.size());
  std::size_t state_in = 0, input = 0;
  for (const Arg& a : module_.args) {
    switch (a.kind) {
      case ArgKind::input: args_.push_back(const_cast<void*>(given[input_position_[input++]]->raw())); break;
      case ArgKind::output: args_.push_back(outs.emplace_back(a.type).raw()); break;
      case ArgKind::state_in: args_.push_back(state_values[state_in++].raw()); break;
      case ArgKind::constant: args_.push_back(const_cast<void*>(graph_->node(a.node).literal->raw())); break;
      case ArgKind::state_out: {
        Array& spare = spare_[next.size()];
        const bool reuse = spare.sole_owner() && spare.type() == a.type;
        args_.push_back(next.emplace_back(reuse ? std::move(spare) : Array(a.type)).raw());
        spare = Array();
        break;
      }
    }
  }
  // Pointers into outs/next stay valid: emplace_back above may have reallocated the
  // vectors, but Arrays are handles to heap storage that does not move.
  const int rc = native_->call(args_.data(), arena_aligned_);
  if (rc < 0)  // Options::check_numerics: node -rc - 1 made a NaN/Inf; its buffers are intact
    glassbox::raise_c99_nonfinite(*graph_, module_, static_cast<std::size_t>(-static_cast<std::int64_t>(rc) - 1),
                                  arena_aligned_, args_);
  if (rc != 0) {
    const ir::Node& n = graph_->node(static_cast<ir::NodeId>(rc - 1));
    const std::string& what = n.op->emit_c.fail_what;
    throw UserError("op '" + n.op_name() + "': " + (what.empty() ? "an index is out of range" : what) + " (C99 backend)",
                    n.loc);
  }
  for (std::size_t j = 0; j < next.size(); ++j) {
    spare_[j] = std::move(state_values[j]);
    state_values[j] = std::move(next[j]);
  }
  return outs;
}

}  // namespace mg::rt::c99
