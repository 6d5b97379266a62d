// The body of the entry function: one loop (nest) per scheduled step. Elementwise steps
// are one flat loop whose body computes the inlined chain into `const` temporaries, then
// stores the result; other steps write the loop nest their registry entry gives (with
// views read in place and the step's arena scratch, see schedule.hpp).
#include "minigrad/runtime/c99/emit_steps.hpp"

#include <algorithm>
#include <cctype>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/c99/loop_groups.hpp"
#include "minigrad/runtime/c99/module.hpp"

namespace mg::rt::c99 {

namespace {

thread_local const std::string* g_prefix = nullptr;  // the emit_steps call's value prefix
std::string ptr(ir::NodeId id) { return *g_prefix + std::to_string(id); }
// The buffer a view reads: its operand's, through aliases (contiguous views) of aliases.
ir::NodeId view_source(const ir::Graph& g, const Schedule& s, ir::NodeId id) {
  ir::NodeId src = g.node(id).inputs[0];
  while (s.viewed[src]) src = g.node(src).inputs[0];
  return src;
}
// Options::check_numerics: collects the float temporaries element() writes (an inlined
// chain's values, checked inside its loop: a NaN the chain masks has no buffer to check).
thread_local std::vector<ir::NodeId>* g_temps = nullptr;
// Elementwise loops as rows (io) of the last axis (ii): views index by io and ii, so a
// broadcast bias is read contiguously and a row's LayerNorm statistic is loop-invariant
// (flat, `i % 512` and `i / 128` made gathers). Set while such a loop is written;
// g_strided_read records that a flat loop read a strided view.
thread_local std::int64_t g_rows = 0;  // the row length; 0: flat
thread_local bool g_strided_read = false;

// The C expression of node `id`'s element i inside an elementwise loop; inlined nodes
// are computed into temporaries (appended to `body`), in dependency order; views read
// their operand in place.
std::string element(const ir::Graph& g, const Schedule& s, ir::NodeId id, std::string& body);

// The C expression of elementwise node `n` at element i, its operands' temporaries
// appended to `body` first.
std::string expression(const ir::Graph& g, const Schedule& s, const ir::Node& n, std::string& body) {
  std::vector<std::string> in;
  std::vector<DType> dts;
  for (ir::NodeId x : n.inputs) {
    in.push_back(element(g, s, x, body));
    dts.push_back(g.node(x).type.dtype);
  }
  const ir::CExprArgs a{n, in, dts, n.type.dtype, "i"};
  const ir::EmitC& e = n.op->emit_c;
  return e.expr_fn ? e.expr_fn(a) : ir::expand_c_expr(e.expr, a);
}

std::string element(const ir::Graph& g, const Schedule& s, ir::NodeId id, std::string& body) {
  if (s.viewed[id]) {  // read in place: the operand at the view's offset of i
    const ir::CView& v = s.views[id];
    const std::string src = ptr(s.buffer(view_source(g, s, id)));
    if (v.contiguous()) return src + "[" + (v.offset ? std::to_string(v.offset) + " + i" : "i") + "]";
    const Shape& shape = g.node(id).type.shape;
    std::string off;
    if (g_rows && !shape.empty() && shape.back() == g_rows) {  // (always: views read here have the loop's shape)
      off = ir::c_offset("io", Shape(shape.begin(), shape.end() - 1), {v.strides.begin(), v.strides.end() - 1});
      if (v.strides.back() != 0) off += " + ii * " + std::to_string(v.strides.back());
    } else {
      off = ir::c_offset("i", shape, v.strides);
      g_strided_read = true;
    }
    if (v.offset != 0) off = std::to_string(v.offset) + " + " + off;
    return src + "[" + off + "]";
  }
  if (!s.inlined[id]) return ptr(s.buffer(id)) + "[i]";
  const ir::Node& n = g.node(id);
  const std::string expr = expression(g, s, n, body);
  const std::string t = "t" + std::to_string(id);
  body += "    const " + ir::c_type(n.type.dtype) + " " + t + " = " + expr + ";\n";
  if (g_temps && (n.type.dtype == DType::f32 || n.type.dtype == DType::f64)) g_temps->push_back(id);
  return t;
}

std::string describe(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  std::string s = "%" + std::to_string(id) + " = " + n.op_name() + "(";
  for (std::size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", %" : "%") + std::to_string(n.inputs[k]);
  s += ") : " + to_string(n.type);
  if (n.loc.known()) s += "  " + to_string(n.loc);
  return c_comment_text(s);  // file names are user input too: keep the comment closed
}

// Options::check_numerics: the statement reporting node n's step, `return -(id + 1);`,
// inside a region -(site_base + s + 1) for the site s it records.
std::string check_return(const ir::Node& n, const StepOptions& o) {
  std::size_t code = n.id;
  if (!o.path.empty()) {
    MG_ASSERT(o.sites, "C99: a check inside a region needs the module's site list");
    code = o.site_base + o.sites->size();
    o.sites->push_back(NumericsSite{o.path, n.id});
  }
  return "return -" + std::to_string(code + 1) + ";";
}

// An inlined chain's float temporaries, checked in its loop: `mg_bad |= ...` per element
// (a reduction, so the loop stays vectorised and parallel).
void emit_temp_checks(const ir::Graph& g, const std::vector<ir::NodeId>& temps, const StepOptions& o, ir::CWriter& w) {
  for (ir::NodeId t : temps) {
    const bool f32 = g.node(t).type.dtype == DType::f32;
    const std::string fn = f32 ? "mg_nonfinite_f32" : "mg_nonfinite_f64";
    const std::string T = f32 ? "float" : "double", U = f32 ? "uint32_t" : "uint64_t";
    const std::string mask = f32 ? "0x7f800000u" : "0x7ff0000000000000ull";
    o.support(fn, "static inline int " + fn + "(" + T + " x) {  /* the glass box's check of a temporary */\n"
                  "  union { " + T + " f; " + U + " u; } c;\n"
                  "  c.f = x;\n"
                  "  return (c.u & " + mask + ") == " + mask + ";\n}\n");
    w.line("mg_bad |= " + fn + "(t" + std::to_string(t) + ");");
  }
}

// Options::check_numerics: after node n's loop, `fail` when its value holds a NaN or Inf
// (exponent bits all ones; branch-free, so the scan vectorises).
void emit_check(const ir::Node& n, const StepOptions& o, const std::string& fail, ir::CWriter& w) {
  if (!o.check_numerics || n.type.numel() == 0) return;
  const bool f32 = n.type.dtype == DType::f32;
  if (!f32 && n.type.dtype != DType::f64) return;
  const std::string fn = f32 ? "mg_finite_f32" : "mg_finite_f64";
  const std::string T = f32 ? "float" : "double", U = f32 ? "uint32_t" : "uint64_t";
  const std::string mask = f32 ? "0x7f800000u" : "0x7ff0000000000000ull";
  o.support(fn, "static int " + fn + "(const " + T + "* p, int64_t n) {  /* the glass box's numerics check */\n"
                "  " + U + " any = 0;\n"
                "  for (int64_t i = 0; i < n; ++i) {\n"
                "    union { " + T + " f; " + U + " u; } c;\n"
                "    c.f = p[i];\n"
                "    any |= (" + U + ")((c.u & " + mask + ") == " + mask + ");\n"
                "  }\n"
                "  return any == 0;\n}\n");
  w.line("if (!" + fn + "(" + ptr(n.id) + ", " + std::to_string(n.type.numel()) + ")) " + fail);
}

// Writes step k (its loop, or loop nest, and numerics check).
void emit_step(const ir::Graph& g, const Schedule& s, const StepOptions& o, std::size_t k, ir::CWriter& w);

// The entry's steps go into functions of about this many lines each. GCC's time on one
// function grows faster than its length: miniGPT's training step (565 steps, 8800 lines)
// compiled in 20 s as one function, 10 s as one function per step, 8.7 s in functions of
// 300 lines (10.7 s of 1000); a module of fewer lines keeps its steps in the entry, where
// one function per step compiled 15-30% slower (more functions, each with fixed costs).
constexpr std::size_t kStepFunctionLines = 300;

// Moves the steps written into `w` since `mark` into a function of their own and writes
// its call in their place; noinline, or GCC inlines it (called once) straight back.
// `first`: the index of its first step, which names it (not w.fresh: the names after it
// stay what they would be without the split).
void outline(const StepOptions& o, ir::CWriter& w, std::size_t mark, std::size_t first) {
  const std::string body = w.take_since(mark);
  if (body.empty()) return;
  const std::string name = "mg_step" + std::to_string(first);
  std::string params = "unsigned char* const arena", args = "arena", decls = "  (void)arena;\n";
  for (ir::NodeId id : pointers_named(body, o.prefix, *o.pointers)) {
    const StepPointer& p = (*o.pointers)[id];
    const std::string v = o.prefix + std::to_string(id);
    if (p.arena_offset) {
      decls += "  " + p.type + " const " + v + " = (" + p.type + ")(arena + " + std::to_string(*p.arena_offset) + ");\n";
    } else {
      params += ", " + p.type + " const " + v;
      args += ", " + v;
    }
    decls += "  (void)" + v + ";\n";
  }
  *o.functions += "static MG_NOINLINE int " + name + "(" + params + ") {\n" + decls + body + "  return 0;\n}\n\n";
  w.line("{ const int mg_rc = " + name + "(" + args + "); if (mg_rc) return mg_rc; }");
}

}  // namespace

std::vector<ir::NodeId> pointers_named(const std::string& text, const std::string& prefix,
                                       const std::vector<StepPointer>& declared) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<bool> seen(declared.size(), false);
  for (std::size_t i = text.find(prefix); i != std::string::npos; i = text.find(prefix, i + 1)) {
    std::size_t j = i + prefix.size();
    if ((i > 0 && word(text[i - 1])) || j >= text.size() || !std::isdigit(static_cast<unsigned char>(text[j]))) continue;
    std::size_t id = 0;
    for (; j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])); ++j) id = id * 10 + (text[j] - '0');
    if (j < text.size() && word(text[j])) continue;
    if (id < declared.size() && !declared[id].type.empty()) seen[id] = true;
  }
  std::vector<ir::NodeId> ids;
  for (std::size_t id = 0; id < seen.size(); ++id)
    if (seen[id]) ids.push_back(static_cast<ir::NodeId>(id));
  return ids;
}

void emit_region(const ir::Graph& body, const std::string& base, std::span<const std::string> args,
                 std::span<const std::string> results, const StepOptions& o, ir::CWriter& w) {
  std::vector<std::size_t> out_arg(body.outputs.size());
  for (std::size_t k = 0; k < out_arg.size(); ++k) out_arg[k] = k;
  const Schedule s = schedule_graph(body, body.outputs, {}, out_arg, {});
  const std::vector<bool> live = body.reachable_from(body.outputs);
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    const ir::Node& nd = body.node(id);
    if (live[id] && nd.kind == ir::NodeKind::op && nd.op->emit_c.empty())
      throw UserError("C99 backend: op '" + nd.op->name + "' (in a loop body) has no C emission" +
                          (nd.op->emit_c.none.empty() ? "" : " (" + nd.op->emit_c.none + ")"),
                      nd.loc);
  }
  std::vector<bool> named(body.size(), false);
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    named[s.steps[k]] = true;
    for (ir::NodeId r : s.reads[k]) named[r] = true;
  }
  for (ir::NodeId r : body.outputs) named[r] = true;
  w.open("");
  const std::string b = o.prefix + "base";  // named before `arena` is rebound below
  w.line("unsigned char* const " + b + " = " + base + ";");
  w.line("(void)" + b + ";");
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    if (!named[id]) continue;
    const ir::Node& nd = body.node(id);
    const std::string T = ir::c_type(nd.type.dtype), v = o.prefix + std::to_string(id);
    switch (s.home[id]) {
      case Home::input: {
        const auto& ins = body.inputs();
        const std::size_t k = static_cast<std::size_t>(std::find(ins.begin(), ins.end(), id) - ins.begin());
        w.line("const " + T + "* const " + v + " = " + args[k] + ";");
        break;
      }
      case Home::constant: {
        const std::string c = o.prefix + "c" + std::to_string(id);
        o.support(c, ir::c_array(c, *nd.literal));
        w.line("const " + T + "* const " + v + " = " + c + ";");
        break;
      }
      case Home::arena: w.line(T + "* const " + v + " = (" + T + "*)(" + b + " + " + std::to_string(s.where[id]) + ");"); break;
      case Home::output: w.line(T + "* const " + v + " = " + results[s.where[id]] + ";"); break;
      default: MG_ASSERT(false, "C99: region value without a home");
    }
    w.line("(void)" + v + ";");
  }
  // The body's steps address the arena through `arena`: rebind it to this region's base.
  w.line("unsigned char* const arena = " + b + ";");
  w.line("(void)arena;");
  emit_steps(body, s, o, w);
  for (std::size_t k = 0; k < body.outputs.size(); ++k) {
    const ir::NodeId id = body.outputs[k];
    if (s.home[id] == Home::output && s.where[id] == k) continue;
    const std::int64_t m = body.node(id).type.numel();
    if (m == 0) continue;
    w.open("for (int64_t i = 0; i < " + ir::c_int(m) + "; ++i)");
    w.line("(" + results[k] + ")[i] = " + o.prefix + std::to_string(id) + "[i];");
    w.close();
  }
  w.close();
}

void emit_steps(const ir::Graph& g, const Schedule& s, const StepOptions& o, ir::CWriter& w) {
  const std::string* saved_prefix = g_prefix;  // regions nest: restore the caller's
  g_prefix = &o.prefix;
  struct Restore {
    const std::string* p;
    ~Restore() { g_prefix = p; }
  } restore{saved_prefix};
  // Consecutive flat loops of one length run chunk by chunk in one loop (loop_groups.hpp);
  // not inside loop bodies, nor with numerics checks (those scan whole buffers per step).
  const bool grouping = o.path.empty() && !o.check_numerics;
  const std::vector<std::size_t> group_end = grouping ? loop_group_ends(g, s) : std::vector<std::size_t>{};
  const bool outlining = o.functions && o.pointers;
  std::size_t chunk = w.str().size(), chunk_step = 0;  // where the steps not yet in a function begin
  bool outlined = false;
  std::size_t k = 0;
  auto chunk_full = [&] {
    if (!outlining) return;
    const auto from = w.str().begin() + static_cast<std::ptrdiff_t>(chunk);
    if (static_cast<std::size_t>(std::count(from, w.str().end(), '\n')) < kStepFunctionLines) return;
    outline(o, w, chunk, chunk_step);
    outlined = true;
    chunk = w.str().size();
    chunk_step = k;
  };
  for (; k < s.steps.size(); chunk_full()) {
    const std::size_t end = grouping ? group_end[k] : k + 1;
    if (end == k + 1) {
      w.line("/* " + describe(g, s.steps[k]) + " */");
      emit_step(g, s, o, k, w);
      ++k;
      continue;
    }
    const std::int64_t count = g.node(s.steps[k]).type.numel();
    const std::int64_t chunks = (count + kGroupChunk - 1) / kGroupChunk;
    w.line("/* steps " + std::to_string(k) + "-" + std::to_string(end - 1) + ": one loop over chunks of " +
           std::to_string(kGroupChunk) + " elements */");
    w.open("");
    if (chunks > 1 && count * static_cast<std::int64_t>(end - k) >= ir::kCParallelWork)
      w.line("MG_OMP(omp parallel for schedule(static))");
    w.open("for (int64_t mg_k = 0; mg_k < " + std::to_string(chunks) + "; ++mg_k)");
    w.line("const int64_t mg_lo = mg_k * " + std::to_string(kGroupChunk) + ";");
    w.line("const int64_t mg_hi = mg_lo + " + std::to_string(kGroupChunk) + " < " + std::to_string(count) + " ? mg_lo + " +
           std::to_string(kGroupChunk) + " : " + std::to_string(count) + ";");
    {
      const ir::CFlatRange range(count, "mg_lo", "mg_hi");
      for (; k < end; ++k) {
        w.line("/* " + describe(g, s.steps[k]) + " */");
        emit_step(g, s, o, k, w);
      }
    }
    w.close();
    w.close();
  }
  if (outlined) outline(o, w, chunk, chunk_step);  // the rest; a small module's steps stay in the entry
}

namespace {

void emit_step(const ir::Graph& g, const Schedule& s, const StepOptions& o, std::size_t k, ir::CWriter& w) {
  {
    const ir::NodeId id = s.steps[k];
    const ir::Node& n = g.node(id);
    if (is_c_expr(n)) {
      const std::int64_t count = n.type.numel();
      if (count == 0) return;
      std::string body;
      std::vector<ir::NodeId> temps;
      g_temps = o.check_numerics ? &temps : nullptr;
      g_strided_read = false;
      std::string expr = expression(g, s, n, body);
      g_temps = nullptr;
      const std::int64_t row = n.type.shape.empty() ? 1 : n.type.shape.back();
      // Not inside a loop group's chunk (loop_groups.cpp keeps such steps out of groups).
      const bool rows = g_strided_read && temps.empty() && row >= 16 && count > row && !ir::c_flat_range_active();
      if (rows) {
        body.clear();
        g_rows = row;
        expr = expression(g, s, n, body);
        g_rows = 0;
      }
      // Cost: the chain's length makes short loops worth threads too.
      std::int64_t chain = 1;
      for (char c : body) chain += c == '\n';
      const std::string fail = o.check_numerics ? check_return(n, o) : "";
      if (!temps.empty()) {  // as ir::c_for, with the check flag reduced
        w.open("");
        w.line("int mg_bad = 0;");
        const bool par = count * chain >= ir::kCParallelWork && count > 1;
        w.line(std::string("MG_OMP(omp ") + (par ? "parallel for simd schedule(static) " : "simd ") + "reduction(|:mg_bad))");
        w.open("for (int64_t i = 0; i < " + std::to_string(count) + "; ++i)");
      } else if (rows) {
        ir::c_for(w, "io", count / row, count * chain, false);
        w.line("MG_OMP(omp simd)");
        w.open("for (int64_t ii = 0; ii < " + std::to_string(row) + "; ++ii)");
        w.line("const int64_t i = io * " + std::to_string(row) + " + ii;");
      } else {
        ir::c_flat_for(w, count, count * chain);
      }
      w.raw(body);
      emit_temp_checks(g, temps, o, w);
      w.line(ptr(id) + "[i] = " + expr + ";");
      w.close();
      if (rows) w.close();
      if (!temps.empty()) {
        w.line("if (mg_bad) " + fail);
        w.close();
      }
      emit_check(n, o, fail, w);
      return;
    }
    std::vector<std::string> in;
    std::vector<Type> types;
    std::vector<ir::CView> views;
    for (ir::NodeId x : n.inputs) {
      // A view is read in place: its operand's buffer at the view's strides.
      in.push_back(ptr(s.buffer(s.viewed[x] ? view_source(g, s, x) : x)));
      types.push_back(g.node(x).type);
      views.push_back(s.viewed[x] ? s.views[x] : ir::CView{});
    }
    w.open("");
    const std::string fail = o.fail.empty() ? "return " + std::to_string(id + 1) + ";" : o.fail;
    const std::string scratch = s.scratch_bytes[k] ? "(arena + " + std::to_string(s.scratch_at[k]) + ")" : "";
    ir::CLoopArgs a{n, in, types, ptr(id), w, o.host_kernels, fail, o.support, views, scratch};
    // Bodies: after the op's own scratch, one arena per region, each as its schedule plans.
    std::size_t own = 0;
    if (n.op->emit_c.scratch) own = static_cast<std::size_t>(n.op->emit_c.scratch(n, types));
    const std::function<void(std::size_t, std::span<const std::string>, std::span<const std::string>)> region =
        [&](std::size_t r, std::span<const std::string> args, std::span<const std::string> results) {
          std::size_t at = (own + 63) / 64 * 64;
          for (std::size_t q = 0; q < r; ++q) at += region_arena_bytes(*n.regions[q]);
          StepOptions inner = o;
          inner.prefix = w.fresh("mg_r") + "_v";
          inner.pointers = nullptr;  // a body's steps stay inline in the step
          inner.functions = nullptr;
          inner.fail = fail;
          inner.path.emplace_back(id, r);  // the body's checks return its nodes' site codes
          emit_region(*n.regions[r], "(" + (scratch.empty() ? std::string("arena") : scratch) + " + " + std::to_string(at) + ")",
                      args, results, inner, w);
        };
    if (n.op->runs_regions) a.region = &region;
    n.op->emit_c.loops(a);
    w.close();
    if (o.check_numerics) emit_check(n, o, check_return(n, o), w);
  }
}

}  // namespace

}  // namespace mg::rt::c99
