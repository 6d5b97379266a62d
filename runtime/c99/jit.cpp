// cc + dlopen behind rt::Executable; see jit.hpp.
#include "minigrad/runtime/c99/jit.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "minigrad/ir/errors.hpp"

namespace mg::rt::c99 {

namespace fs = std::filesystem;

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string read_text(const fs::path& p, std::size_t max) {
  std::ifstream f(p);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() > max) s = s.substr(0, max) + "\n[...]";
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string compiler_command() {
  const char* cc = std::getenv("MG_CC");
  // -fno-math-errno: with errno to set, sqrtf is a scalar call per element and loops around
  // it do not vectorise (Adam's update ran 8x slower); -fno-trapping-math: float selects
  // vectorise. Results are the same (no reassociation, no contraction).
  return std::string(cc && *cc ? cc : "cc") +
         " -std=c99 -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp -fPIC -shared -w";
}

std::string cache_dir() {
  if (const char* d = std::getenv("MG_C99_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/minigrad/c99";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/minigrad/c99";
  return "/tmp/minigrad-c99";
}

Native::~Native() {
  if (handle_) dlclose(handle_);
}

std::shared_ptr<Native> Native::load(const Module& m) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Native>> loaded;
  const std::string cmd = compiler_command();
  const std::string key = m.name + "-" + hex(fnv1a(cmd + "\n" + m.header + "\n" + m.source));
  std::lock_guard lock(mu);
  if (auto p = loaded[key].lock()) return p;

  std::error_code ec;
  fs::path dir = cache_dir();
  fs::create_directories(dir, ec);
  if (ec) throw UserError("C99 backend: cannot create the cache directory " + dir.string() + " (" + ec.message() + ")");
  const fs::path src = dir / (key + ".c"), hdr = dir / (m.name + ".h"), so = dir / (key + ".so");
  const fs::path inc = dir / key;  // the header next to its source, in a directory of its own
  if (!fs::exists(so)) {
    fs::create_directories(inc, ec);
    std::ofstream(inc / (m.name + ".h")) << m.header;
    std::ofstream(src) << m.source;
    const std::string tmp = so.string() + ".tmp" + std::to_string(::getpid());
    const fs::path log = dir / (key + ".log");
    const std::string line = cmd + " -I" + shell_quote(inc.string()) + " " + shell_quote(src.string()) + " -o " +
                             shell_quote(tmp) + " -lopenblas -lm > " + shell_quote(log.string()) + " 2>&1";
    const int rc = std::system(line.c_str());
    if (rc != 0) {
      fs::remove(tmp, ec);
      throw UserError("C99 backend: the C compiler failed on the generated source " + src.string() + "\n  command: " +
                      line + "\n" + read_text(log, 4000));
    }
    fs::rename(tmp, so, ec);
    if (ec) throw UserError("C99 backend: cannot place " + so.string() + " (" + ec.message() + ")");
  }
  (void)hdr;
  auto p = std::shared_ptr<Native>(new Native());
  p->source_path_ = src.string();
  p->handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle_) throw UserError("C99 backend: cannot load " + so.string() + ": " + dlerror());
  p->fn_ = reinterpret_cast<int (*)(void* const*, void*)>(dlsym(p->handle_, (m.name + "_call").c_str()));
  if (!p->fn_) throw UserError("C99 backend: " + so.string() + " has no " + m.name + "_call");
  loaded[key] = p;
  return p;
}

NativeRunner::NativeRunner(const ir::Graph& g, std::vector<ir::NodeId> outputs, std::vector<StateUpdate> state)
    : graph_(&g) {
  Options o;
  o.name = "mg_jit";
  o.standalone = false;
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
  if (rc != 0) {
    const ir::Node& n = graph_->node(static_cast<ir::NodeId>(rc - 1));
    throw UserError("op '" + n.op_name() + "': an index is out of range (C99 backend)", n.loc);
  }
  for (std::size_t j = 0; j < next.size(); ++j) {
    spare_[j] = std::move(state_values[j]);
    state_values[j] = std::move(next[j]);
  }
  return outs;
}

}  // namespace mg::rt::c99
