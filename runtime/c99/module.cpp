// The translation unit's layout: includes, the OpenMP guard, support functions the ops
// asked for, constants and embedded weights, the arena, and the entry function (pointer
// declarations, the steps, copies into outputs that live elsewhere). See module.hpp.
#include "minigrad/runtime/c99/module.hpp"

#include <cctype>
#include <map>
#include <cstdio>
#include <set>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/c_kernels.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/c99/emit_steps.hpp"
#include "minigrad/runtime/c99/schedule.hpp"

namespace mg::rt::c99 {

std::string c_identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

// Text from the IR (user-chosen names) shown inside a C comment: printable ASCII except what
// could end the comment or splice lines ('*', '/', '\\') is kept; every other byte is
// written %XX (for reading only: '%' itself stays). So no name can close the comment.
std::string c_comment_text(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '*' && c != '/' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace {

constexpr const char* kF2I64 =
    "static int64_t mg_f2i64(double s) {  /* the IR's cast: truncate, saturate, NaN -> 0 */\n"
    "  if (s != s) return 0;\n"
    "  if (s >= 9223372036854775808.0) return INT64_MAX;\n"
    "  if (s < -9223372036854775808.0) return INT64_MIN;\n"
    "  return (int64_t)s;\n}\n";

// glibc's vector math (libmvec, linked through libm.so's AS_NEEDED): declared `simd`, as
// math.h does only under -ffast-math, so `omp simd` loops over tanhf/expf call the 8- or
// 16-wide variants (<= 4 ulp) instead of one scalar call per element: GELU's tanh was
// 16 ns an element, half the miniGPT step. Only the functions the module calls; gcc on
// x86-64 glibc with OpenMP only (clang has no simd attribute); -DMG_NO_LIBMVEC opts out.
std::string vector_math_decls(const std::string& body) {
  struct Fn {
    const char* name;
    int args;
    int glibc_minor;  // the glibc release that added its vector variants
  };
  static constexpr Fn kFns[] = {{"exp", 1, 22}, {"log", 1, 22}, {"sin", 1, 22}, {"cos", 1, 22}, {"pow", 2, 22},
                                {"tanh", 1, 35}, {"expm1", 1, 35}, {"log1p", 1, 35}, {"erf", 1, 35}};
  std::string old_glibc, new_glibc;
  for (const Fn& f : kFns)
    for (const char* suffix : {"f", ""}) {
      const std::string name = std::string(f.name) + suffix, T = *suffix ? "float" : "double";
      if (body.find(name + "(") == std::string::npos) continue;
      (f.glibc_minor > 22 ? new_glibc : old_glibc) += T + " " + name + "(" + T + (f.args == 2 ? ", " + T : "") +
                                                     ") __attribute__((__simd__(\"notinbranch\")));\n";
    }
  if (old_glibc.empty() && new_glibc.empty()) return "";
  std::string s = "#if defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__) && defined(__x86_64__) && "
                  "defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 22) && defined(_OPENMP) && !defined(MG_NO_LIBMVEC)\n"
                  "/* glibc's vector math (libmvec): `omp simd` loops call its 8/16-wide variants */\n" + old_glibc;
  if (!new_glibc.empty())
    s += "#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)\n" + new_glibc + "#endif\n";
  return s + "#endif\n\n";
}

// The JIT passes constants with more elements by pointer (see ArgKind::constant).
constexpr std::int64_t kMaxEmbeddedConstant = 64;

std::string unique(std::set<std::string>& used, std::string s) {
  std::string base = s;
  for (int k = 1; !used.insert(s).second; ++k) s = base + "_" + std::to_string(k);
  return s;
}

}  // namespace

Module emit_module(const ir::Graph& g, const std::vector<ir::NodeId>& outputs, const std::vector<StateUpdate>& state,
                   const Options& opt) {
  Module m;
  m.name = c_identifier(opt.name);
  const std::size_t n = g.size();
  std::vector<ir::NodeId> roots = outputs;
  for (auto& st : state) roots.push_back(st.update);
  const std::vector<bool> live = g.reachable_from(roots);
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!live[id] || nd.kind != ir::NodeKind::op) continue;
    if (nd.op->emit_c.empty())
      throw UserError("C99 backend: op '" + nd.op->name + "' has no C emission" +
                          (nd.op->emit_c.none.empty() ? "" : " (" + nd.op->emit_c.none + ")"),
                      nd.loc);
  }

  // The entry's parameters.
  std::vector<int> state_of(n, -1);
  for (std::size_t j = 0; j < state.size(); ++j) state_of[state[j].input] = static_cast<int>(j);
  std::set<std::string> names;
  for (ir::NodeId id : g.inputs()) {
    const ir::Node& nd = g.node(id);
    if (state_of[id] >= 0 || opt.weights.count(nd.name) || !live[id]) continue;
    m.args.push_back({ArgKind::input, nd.name, unique(names, "in_" + c_identifier(nd.name)), nd.type, id});
  }
  std::vector<std::size_t> out_arg, state_arg, state_in_arg;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    std::string name = k < g.output_names.size() && !g.output_names[k].empty() ? g.output_names[k] : "out" + std::to_string(k);
    out_arg.push_back(m.args.size());
    m.args.push_back({ArgKind::output, name, unique(names, "out_" + c_identifier(name)), g.node(outputs[k]).type, outputs[k]});
  }
  for (std::size_t j = 0; j < state.size(); ++j) {
    const ir::Node& in = g.node(state[j].input);
    state_in_arg.push_back(m.args.size());
    m.args.push_back({ArgKind::state_in, in.name, unique(names, "state_" + c_identifier(in.name)), in.type, in.id});
  }
  for (std::size_t j = 0; j < state.size(); ++j) {
    const ir::Node& in = g.node(state[j].input);
    state_arg.push_back(m.args.size());
    m.args.push_back({ArgKind::state_out, in.name, unique(names, "next_" + c_identifier(in.name)), in.type, state[j].update});
  }
  std::vector<std::size_t> constant_arg(n, 0);  // JIT: constant node -> its Arg (0: embedded)
  if (!opt.standalone)
    for (ir::NodeId id = 0; id < n; ++id) {
      const ir::Node& nd = g.node(id);
      if (!live[id] || nd.kind != ir::NodeKind::constant || nd.type.numel() <= kMaxEmbeddedConstant) continue;
      constant_arg[id] = m.args.size();
      m.args.push_back({ArgKind::constant, "%" + std::to_string(id), unique(names, "const_" + std::to_string(id)), nd.type, id});
    }

  // With embedded weights, whatever depends only on them and on constants (a weight's
  // transpose, say) is computed now, by the interpreter, and emitted as a constant.
  std::vector<bool> folded(n, false);
  std::map<ir::NodeId, Array> folded_value;
  if (opt.fold_constants && !opt.weights.empty()) {
    std::vector<bool> fixed(n, false);
    for (ir::NodeId id = 0; id < n; ++id) {
      const ir::Node& nd = g.node(id);
      if (nd.kind == ir::NodeKind::constant) fixed[id] = true;
      else if (nd.kind == ir::NodeKind::input) fixed[id] = state_of[id] < 0 && opt.weights.count(nd.name);
      else {
        fixed[id] = !nd.op->traits.random && nd.regions.empty();
        for (ir::NodeId in : nd.inputs) fixed[id] = fixed[id] && fixed[in];
      }
    }
    std::vector<bool> needed(n, false);  // fixed op nodes a dynamic node (or a root) reads
    for (ir::NodeId id = 0; id < n; ++id)
      if (live[id] && !fixed[id] && g.node(id).kind == ir::NodeKind::op)
        for (ir::NodeId in : g.node(id).inputs) needed[in] = fixed[in] && g.node(in).kind == ir::NodeKind::op;
    for (ir::NodeId r : roots) needed[r] = needed[r] || (fixed[r] && g.node(r).kind == ir::NodeKind::op);
    std::vector<ir::NodeId> ids;
    for (ir::NodeId id = 0; id < n; ++id)
      if (needed[id]) ids.push_back(id);
    if (!ids.empty()) {
      Bindings b;
      for (ir::NodeId id : g.inputs())
        if (auto it = opt.weights.find(g.node(id).name); it != opt.weights.end() && fixed[id]) b.emplace(it->first, it->second);
      std::vector<Array> vals = compile(g, ids).run(b);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        folded[ids[k]] = true;
        folded_value[ids[k]] = vals[k];
      }
    }
  }
  const Schedule s = schedule_graph(g, outputs, state, out_arg, state_arg, folded);
  m.arena_bytes = s.arena_bytes;
  m.peak_bytes = s.peak_bytes;
  m.num_kernels = s.steps.size();
  for (ir::NodeId id = 0; id < n; ++id) m.num_inlined += s.inlined[id] ? 1 : 0;

  // Values the body names: every step, what it reads, and the sources of final copies.
  std::vector<bool> named(n, false);
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    named[s.steps[k]] = true;
    for (ir::NodeId r : s.reads[k]) named[r] = true;
  }
  for (ir::NodeId r : roots) named[r] = true;

  std::string statics;
  // The entry: `arena`, then the declarations of the value pointers its body names (the
  // steps are functions of their own, each deriving its arena pointers itself), then `w`.
  std::string entry = "  unsigned char* const arena = " + std::string(opt.standalone ? "mg_arena.b" : "(unsigned char*)arena_") +
                      ";\n  (void)arena;\n";
  for (auto& a : m.args) entry += "  (void)" + a.c_name + ";\n";
  std::vector<std::string> decl(n);      // value k's pointer declaration in the entry
  std::vector<StepPointer> pointers(n);  // and how a step function gets it
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!named[id]) continue;
    const ir::Node& nd = g.node(id);
    const std::string T = ir::c_type(nd.type.dtype), v = "v" + std::to_string(id);
    const bool writable = s.home[id] == Home::arena || s.home[id] == Home::output || s.home[id] == Home::state_out;
    pointers[id].type = (writable ? "" : "const ") + T + "*";
    if (s.home[id] == Home::arena) pointers[id].arena_offset = s.where[id];
    switch (s.home[id]) {
      case Home::input:
        if (state_of[id] >= 0) {
          decl[id] = "const " + T + "* const " + v + " = " + m.args[state_in_arg[static_cast<std::size_t>(state_of[id])]].c_name + ";";
        } else if (auto it = opt.weights.find(nd.name); it != opt.weights.end()) {
          if (it->second.type() != nd.type)
            throw UserError("C99 export: weight '" + nd.name + "' is " + to_string(it->second.type()) +
                            " but the graph input is " + to_string(nd.type));
          const std::string c = "mg_w_" + c_identifier(nd.name);
          statics += ir::c_array(c, it->second);
          m.weight_bytes += nd.type.nbytes();
          decl[id] = "const " + T + "* const " + v + " = " + c + ";";
        } else {
          std::size_t a = 0;
          while (m.args[a].kind != ArgKind::input || m.args[a].node != id) ++a;
          decl[id] = "const " + T + "* const " + v + " = " + m.args[a].c_name + ";";
        }
        break;
      case Home::constant:
        if (constant_arg[id]) {
          decl[id] = "const " + T + "* const " + v + " = " + m.args[constant_arg[id]].c_name + ";";
          break;
        }
        statics += ir::c_array("mg_c" + std::to_string(id), folded[id] ? folded_value[id] : *nd.literal);
        (folded[id] ? m.weight_bytes : m.constant_bytes) += nd.type.nbytes();
        decl[id] = "const " + T + "* const " + v + " = mg_c" + std::to_string(id) + ";";
        break;
      case Home::arena:
        decl[id] = T + "* const " + v + " = (" + T + "*)(arena + " + std::to_string(s.where[id]) + ");";
        break;
      case Home::output:
      case Home::state_out:
        decl[id] = T + "* const " + v + " = " + m.args[s.where[id]].c_name + ";";
        break;
      case Home::none: MG_ASSERT(false, "C99: value without a home");
    }
  }

  std::map<std::string, std::string> support;
  std::vector<std::string> support_order;
  StepOptions so;
  so.host_kernels = opt.host_kernels && !opt.standalone;
  so.support = [&](const std::string& name, const std::string& code) {
    if (support.emplace(name, code).second) support_order.push_back(name);
  };
  so.check_numerics = opt.check_numerics;
  so.sites = &m.numerics_sites;
  so.site_base = g.size();
  std::string step_functions;
  ir::CWriter w;
  so.pointers = &pointers;
  so.functions = &step_functions;
  emit_steps(g, s, so, w);

  // Outputs and next states that live elsewhere are copied last.
  auto copy_to = [&](const Arg& a) {
    const ir::NodeId id = a.node;
    const std::size_t idx = static_cast<std::size_t>(&a - m.args.data());
    if ((s.home[id] == Home::output || s.home[id] == Home::state_out) && s.where[id] == idx) return;
    if (a.type.numel() == 0) return;
    w.line("/* " + a.c_name + " = %" + std::to_string(id) + " */");
    ir::c_for(w, "i", a.type.numel(), a.type.numel(), true);
    w.line(a.c_name + "[i] = v" + std::to_string(id) + "[i];");
    w.close();
  };
  for (auto& a : m.args)
    if (a.kind == ArgKind::output || a.kind == ArgKind::state_out) copy_to(a);
  w.line("return 0;");

  // The signature.
  std::string params;
  for (auto& a : m.args) {
    params += (params.empty() ? "" : ", ") + std::string(a.read_only() ? "const " : "") + ir::c_type(a.type.dtype) + "* " + a.c_name;
  }
  if (!opt.standalone) params += std::string(params.empty() ? "" : ", ") + "void* arena_";
  if (params.empty()) params = "void";
  const std::string proto = "int " + m.name + "_run(" + params + ")";

  std::string doc;
  for (auto& a : m.args) {
    static const char* kinds[] = {"input", "output", "state (read)", "state (next value)", "constant"};
    doc += " *   " + a.c_name + ": " + to_string(a.type) + "  " + kinds[static_cast<int>(a.kind)] + " '" + c_comment_text(a.name) + "'\n";
  }
  const std::string sizes = " * arena " + std::to_string(m.arena_bytes) + " bytes (peak live " + std::to_string(m.peak_bytes) +
                            "), embedded weights " + std::to_string(m.weight_bytes) + " bytes, constants " +
                            std::to_string(m.constant_bytes) + " bytes.\n";
  const std::string guard = "MG_" + m.name + "_H";
  std::string upper = m.name;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string build =
      opt.standalone ? " * Any C99 compiler; with -O3 -fno-math-errno loops over sqrtf vectorise (same results).\n" : "";
  m.header = "/* " + m.name + ".h: generated by miniGrad's C99 emitter; do not edit.\n * " + proto +
             ": returns 0, or k + 1 when node %k failed (an index out of range).\n" + doc + sizes + build + " */\n#ifndef " +
             guard + "\n#define " + guard + "\n#include <stdint.h>\n\n#define " + upper + "_ARENA_BYTES " +
             std::to_string(m.arena_bytes) + "\n#define " + upper + "_WEIGHT_BYTES " + std::to_string(m.weight_bytes) +
             "\n\n" + proto + ";\n";
  if (!opt.standalone) m.header += "int " + m.name + "_call(void* const* args, void* arena);\n";
  m.header += "\n#endif\n";

  std::string src = "/* " + m.name + ".c: generated by miniGrad's C99 emitter; do not edit.\n" + sizes + " */\n";
  src += "#include <math.h>\n#include <stdint.h>\n";
  src += "#include \"" + m.name + ".h\"\n\n";
  src += "#ifdef _OPENMP\n#define MG_OMP(x) _Pragma(#x)\n#else\n#define MG_OMP(x)\n#endif\n";
  // simd loops only GCC vectorises (float max reductions; libm calls, through libmvec):
  // clang reports the loops it cannot vectorise as warnings, which -Werror exports refuse.
  src += "#if defined(_OPENMP) && defined(__GNUC__) && !defined(__clang__)\n#define MG_OMP_GCC(x) _Pragma(#x)\n#else\n"
         "#define MG_OMP_GCC(x)\n#endif\n";
  src += "#if defined(__GNUC__)\n#define MG_NOINLINE __attribute__((noinline))\n#else\n#define MG_NOINLINE\n#endif\n\n";
  std::string calls = w.str() + step_functions;  // what the module calls
  for (auto& name : support_order) calls += support[name];
  src += vector_math_decls(calls);
  if (calls.find("mg_f2i64(") != std::string::npos) src += kF2I64 + std::string("\n");
  for (auto& name : support_order) src += support[name] + "\n";
  src += statics;
  if (opt.standalone)
    src += "\n/* The one arena: every intermediate buffer at its planned offset. */\nstatic union { double d; int64_t i; "
           "unsigned char b[" + std::to_string(m.arena_bytes > 0 ? m.arena_bytes : 1) + "]; } mg_arena;\n";
  if (!step_functions.empty())
    src += "\n/* " + m.name + "_run's steps, in runs of about 300 lines, each a function it calls in order. */\n" +
           step_functions;
  for (ir::NodeId id : pointers_named(w.str(), "v", pointers)) entry += "  " + decl[id] + "\n";
  src += proto + " {\n" + entry + w.str() + "}\n";
  for (auto& name : support_order)
    if (so.host_kernels && ir::c_kernels::is_bound(name)) m.bound_kernels.push_back(name);
  if (!m.bound_kernels.empty()) {
    src += "\ntypedef void (*mg_kernel_fn)(void);\nint " + m.name + "_bind(mg_kernel_fn (*kernel)(const char*)) {\n";
    for (auto& name : m.bound_kernels)
      src += "  if (!(" + name + " = (" + name + "_fn)kernel(\"" + name + "\"))) return 1;\n";
    src += "  return 0;\n}\n";
  }
  if (!opt.standalone) {
    src += "\nint " + m.name + "_call(void* const* args, void* arena) {\n  return " + m.name + "_run(";
    for (std::size_t k = 0; k < m.args.size(); ++k) {
      src += "(" + std::string(m.args[k].read_only() ? "const " : "") + ir::c_type(m.args[k].type.dtype) + "*)args[" + std::to_string(k) + "], ";
    }
    src += "arena);\n}\n";
  }
  m.source = std::move(src);
  m.schedule = s;
  return m;
}

}  // namespace mg::rt::c99
