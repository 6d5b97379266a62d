// The body of the entry function: one loop (nest) per scheduled step. Elementwise steps
// are one flat loop whose body computes the inlined chain into `const` temporaries, then
// stores the result; other steps write the loop nest their registry entry gives (with
// views read in place and the step's arena scratch, see schedule.hpp).
#include "minigrad/runtime/c99/emit_steps.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/c99/module.hpp"

namespace mg::rt::c99 {

namespace {

std::string ptr(ir::NodeId id) { return "v" + std::to_string(id); }

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
    std::string off = ir::c_offset("i", g.node(id).type.shape, v.strides);
    if (v.offset != 0) off = std::to_string(v.offset) + " + " + off;
    return ptr(g.node(id).inputs[0]) + "[" + off + "]";
  }
  if (!s.inlined[id]) return ptr(id) + "[i]";
  const ir::Node& n = g.node(id);
  const std::string expr = expression(g, s, n, body);
  const std::string t = "t" + std::to_string(id);
  body += "    const " + ir::c_type(n.type.dtype) + " " + t + " = " + expr + ";\n";
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

// Options::check_numerics: after node id's loop, return -(id + 1) when its value holds a
// NaN or Inf (exponent bits all ones; branch-free, so the scan vectorises).
void emit_check(const ir::Node& n, const StepOptions& o, ir::CWriter& w) {
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
  w.line("if (!" + fn + "(" + ptr(n.id) + ", " + std::to_string(n.type.numel()) + ")) return -" +
         std::to_string(n.id + 1) + ";");
}

}  // namespace

void emit_steps(const ir::Graph& g, const Schedule& s, const StepOptions& o, ir::CWriter& w) {
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const ir::NodeId id = s.steps[k];
    const ir::Node& n = g.node(id);
    w.line("/* " + describe(g, id) + " */");
    if (is_c_expr(n)) {
      const std::int64_t count = n.type.numel();
      if (count == 0) continue;
      std::string body;
      const std::string expr = expression(g, s, n, body);
      // Cost: the chain's length makes short loops worth threads too.
      std::int64_t chain = 1;
      for (char c : body) chain += c == '\n';
      ir::c_for(w, "i", count, count * chain, true);
      w.raw(body);
      w.line(ptr(id) + "[i] = " + expr + ";");
      w.close();
      emit_check(n, o, w);
      continue;
    }
    std::vector<std::string> in;
    std::vector<Type> types;
    std::vector<ir::CView> views;
    for (ir::NodeId x : n.inputs) {
      // A view is read in place: its operand's buffer at the view's strides.
      in.push_back(ptr(s.viewed[x] ? g.node(x).inputs[0] : x));
      types.push_back(g.node(x).type);
      views.push_back(s.viewed[x] ? s.views[x] : ir::CView{});
    }
    w.open("");
    const ir::CLoopArgs a{n, in, types, ptr(id), w, o.blas, "return " + std::to_string(id + 1) + ";", o.support, views,
                          s.scratch_bytes[k] ? "(arena + " + std::to_string(s.scratch_at[k]) + ")" : ""};
    n.op->emit_c.loops(a);
    w.close();
    emit_check(n, o, w);
  }
}

}  // namespace mg::rt::c99
