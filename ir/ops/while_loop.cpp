// The `while_loop` op: a bounded loop with a data-dependent trip count (adaptive ODE
// steppers). Operands: carries, consts; regions: cond (carries, consts) -> bool[], body
// (carries, consts) -> next carries (types kept). At most `max_steps` body runs, so the
// memory plan stays static; a condition still true after them is a run-time error of the
// node (both executors). Its result packs the final carries in one dtype. No VJP: the
// trip count depends on the data; wrap the loop in a custom_vjp (e.g. an adjoint solve).
#include <cstring>

#include "minigrad/ir/control.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

std::int64_t total_numel(std::span<const Type> in, std::int64_t carries) {
  std::int64_t t = 0;
  for (std::int64_t i = 0; i < carries; ++i) t += in[i].numel();
  return t;
}

void check(const Node& n, std::span<const Type> in) {
  require(n.regions.size() == 2, "a while_loop node owns two regions (condition, body)");
  const std::int64_t C = n.attrs.i64("num_carry");
  for (std::size_t r = 0; r < 2; ++r) {
    const Graph& g = *n.regions[r];
    const char* what = r == 0 ? "condition" : "body";
    require(g.inputs().size() == in.size(), std::string("the ") + what + " takes " + std::to_string(g.inputs().size()) +
                                                " parameters but the node has " + std::to_string(in.size()) +
                                                " inputs (carries, consts)");
    for (std::size_t i = 0; i < in.size(); ++i)
      require(g.node(g.inputs()[i]).type == in[i], std::string("the ") + what + "'s parameter " + std::to_string(i) +
                                                       " is " + to_string(g.node(g.inputs()[i]).type) +
                                                       " but should be " + to_string(in[i]));
  }
  const Graph& cond = *n.regions[0];
  require(cond.outputs.size() == 1 && cond.node(cond.outputs[0]).type == Type{DType::boolean, {}},
          "the condition returns one bool[] value");
  const Graph& body = *n.regions[1];
  require(static_cast<std::int64_t>(body.outputs.size()) == C,
          "the body returns " + std::to_string(body.outputs.size()) + " values for " + std::to_string(C) + " carries");
  for (std::int64_t i = 0; i < C; ++i) {
    const Type& t = body.node(body.outputs[static_cast<std::size_t>(i)]).type;
    require(t == in[static_cast<std::size_t>(i)], "the body returns carry " + std::to_string(i) + " as " + to_string(t) +
                                                      " but it enters as " + to_string(in[static_cast<std::size_t>(i)]) +
                                                      ": a carry keeps its type every step");
  }
}

std::string exceeded(std::int64_t max) {
  return "the condition still holds after max_steps = " + std::to_string(max) + " steps";
}

void kernel(const KernelArgs& k) {
  const std::size_t C = static_cast<std::size_t>(k.node.attrs.i64("num_carry"));
  const std::int64_t max = k.node.attrs.i64("max_steps");
  std::vector<Array> args;
  for (const Array* a : k.in) args.push_back(*a);
  for (std::int64_t step = 0;; ++step) {
    if ((*k.run_region)(0, args)[0].at(0) == 0) break;
    if (step == max) throw UserError(exceeded(max));
    std::vector<Array> next = (*k.run_region)(1, args);
    for (std::size_t i = 0; i < C; ++i) args[i] = std::move(next[i]);
  }
  const std::size_t e = size_of(k.out.dtype());
  std::int64_t off = 0;
  for (std::size_t i = 0; i < C; ++i) {
    if (args[i].nbytes() > 0)
      std::memcpy(static_cast<std::byte*>(k.out.raw()) + off * static_cast<std::int64_t>(e), args[i].raw(), args[i].nbytes());
    off += args[i].numel();
  }
}

std::int64_t own_scratch(const Node& n, std::span<const Type> in) {
  std::int64_t b = 64;  // the condition's flag
  for (std::int64_t i = 0; i < n.attrs.i64("num_carry"); ++i) b += 2 * ((in[static_cast<std::size_t>(i)].nbytes() + 63) / 64 * 64);
  return b;
}

// C99: carries in two scratch buffers each (swapped by pointer); the condition and the
// body written once inside one `for (;;)`.
void emit(const CLoopArgs& a) {
  const std::size_t C = static_cast<std::size_t>(a.node.attrs.i64("num_carry"));
  const std::int64_t max = a.node.attrs.i64("max_steps");
  const std::string go = a.w.fresh("mg_go"), step = a.w.fresh("mg_steps");
  a.w.line("uint8_t* const " + go + " = (uint8_t*)(" + a.scratch + ");");
  std::vector<std::string> cur(C), nxt(C);
  std::int64_t at = 64;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < C; ++i) {
      const std::string T = c_type(a.in_types[i].dtype);
      std::string& p = pass == 0 ? cur[i] : nxt[i];
      p = a.w.fresh(pass == 0 ? "mg_carry" : "mg_next");
      a.w.line(T + "* " + p + " = (" + T + "*)(" + a.scratch + " + " + std::to_string(at) + ");");
      at += (a.in_types[i].nbytes() + 63) / 64 * 64;
    }
  for (std::size_t i = 0; i < C; ++i) {
    if (a.in_types[i].numel() == 0) continue;
    a.w.open("for (int64_t i = 0; i < " + c_int(a.in_types[i].numel()) + "; ++i)");
    a.w.line(cur[i] + "[i] = " + a.in[i] + "[i];");
    a.w.close();
  }
  std::vector<std::string> args(cur);
  for (std::size_t i = C; i < a.in.size(); ++i) args.push_back(a.in[i]);
  a.w.open("for (int64_t " + step + " = 0;; ++" + step + ")");
  const std::vector<std::string> flag{go};
  (*a.region)(0, args, flag);
  a.w.line("if (!" + go + "[0]) break;");
  a.w.line("if (" + step + " == " + c_int(max) + ") " + a.fail);
  (*a.region)(1, args, nxt);
  for (std::size_t i = 0; i < C; ++i) {
    const std::string T = c_type(a.in_types[i].dtype);
    a.w.open("");
    a.w.line(T + "* const mg_swap = " + cur[i] + "; " + cur[i] + " = " + nxt[i] + "; " + nxt[i] + " = mg_swap;");
    a.w.close();
  }
  a.w.close();
  std::int64_t off = 0;
  for (std::size_t i = 0; i < C; ++i) {
    const std::int64_t m = a.in_types[i].numel();
    if (m > 0) {
      a.w.open("for (int64_t i = 0; i < " + c_int(m) + "; ++i)");
      a.w.line(a.out + "[" + c_int(off) + " + i] = " + cur[i] + "[i];");
      a.w.close();
    }
    off += m;
  }
}

// Registry test: carries (c f64[3], i f64[]), const k: while i < 5: (tanh(c * k), i + 1).
// i starts at 0.5, away from the step where a perturbed i would change the trip count.
void attach_test_regions(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  auto make = [&](bool cond) {
    auto r = std::make_unique<Graph>();
    Value c = r->add_input("c", g.node(n.inputs[0]).type);
    Value i = r->add_input("i", g.node(n.inputs[1]).type);
    Value k = r->add_input("k", g.node(n.inputs[2]).type);
    if (cond) r->outputs = {binary("lt", i, full_like(i, 5.0)).id};
    else r->outputs = {tanh(mul(c, k)).id, add_scalar(i, 1.0).id};
    return r;
  };
  auto cond = make(true);
  auto body = make(false);
  g.mutable_node(id).regions.push_back(std::move(cond));
  g.mutable_node(id).regions.push_back(std::move(body));
}

}  // namespace

std::vector<Value> while_loop(Graph& g, std::unique_ptr<Graph> cond, std::unique_ptr<Graph> body,
                              std::span<const Value> init, std::span<const Value> consts, std::int64_t max_steps) {
  std::vector<Value> in(init.begin(), init.end());
  in.insert(in.end(), consts.begin(), consts.end());
  const OpDef& def = op("while_loop");
  const Value v = make_op(g, def, in,
                          {{"num_carry", static_cast<std::int64_t>(init.size())},
                           {"max_steps", max_steps},
                           {"dtype", init.empty() ? DType::f32 : init[0].dtype()}});
  g.mutable_node(v.id).regions.push_back(std::move(cond));
  g.mutable_node(v.id).regions.push_back(std::move(body));
  std::vector<Type> types;
  for (const Value& x : in) types.push_back(x.type());
  try {
    def.check_regions(g.node(v.id), types);
  } catch (const TypeRuleError& e) {
    throw ShapeError("op 'while_loop': " + e.message, ambient_loc());
  }
  std::vector<Value> out;
  std::int64_t off = 0;
  for (const Value& c : init) {
    const std::int64_t m = c.type().numel();
    out.push_back(reshape(slice(v, {off}, {off + m}, {1}), c.shape()));
    off += m;
  }
  return out;
}

void register_while_loop_ops() {
  OpDef& d = define_op("while_loop");
  d.doc =
      "(carries..., consts...) -> the final carries packed flat in one dtype: region 0 (carries, consts) -> bool[] "
      "decides, region 1 (carries, consts) -> next carries (types kept) runs, at most `max_steps` times (a "
      "condition still true then is a run-time error); no gradient (wrap it in a custom_vjp)";
  d.arity = -1;
  d.attrs = {{"num_carry", AttrKind::i64, std::nullopt},
             {"max_steps", AttrKind::i64, std::nullopt},
             {"dtype", AttrKind::dtype, std::nullopt}};
  d.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const std::int64_t C = attrs.i64("num_carry");
    require(C >= 1 && C <= static_cast<std::int64_t>(in.size()), "num_carry must be between 1 and the input count");
    require(attrs.i64("max_steps") >= 0, "max_steps must be >= 0");
    const DType dt = attrs.dtype("dtype");
    for (std::int64_t i = 0; i < C; ++i)
      require(in[static_cast<std::size_t>(i)].dtype == dt,
              "carry " + std::to_string(i) + " is " + to_string(in[static_cast<std::size_t>(i)]) +
                  ": a loop's carries share one dtype, " + std::string(name_of(dt)));
    return Type{dt, {total_numel(in, C)}};
  };
  d.check_regions = check;
  d.kernel = kernel;
  d.runs_regions = true;
  d.not_differentiable =
      "reverse mode through a while_loop is not defined (its trip count depends on the data); give it a backward "
      "with mg::custom_vjp, or use a scan with a fixed trip count";
  d.invariant_operands = [](const Node& n) {
    std::vector<bool> inv(n.inputs.size(), true);
    for (std::int64_t i = 0; i < n.attrs.i64("num_carry"); ++i) inv[static_cast<std::size_t>(i)] = false;
    return inv;
  };
  d.add_invariants = [](const Node& n, std::size_t) { return std::pair{n.inputs.size(), n.attrs}; };
  d.emit_c = c_loops(emit);
  d.emit_c.scratch = own_scratch;
  d.emit_c.fail_what = "the condition still holds after max_steps steps";
  d.test.grad_order = 0;
  d.test.cases = {{{Type{f64, {3}}, Type{f64, {}}, Type{f64, {3}}},
                   {{"num_carry", std::int64_t{2}}, {"max_steps", std::int64_t{8}}, {"dtype", f64}}}};
  d.test.make_input = [](std::size_t input, const Type& t, std::uint64_t seed) {
    Array a(t);
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, input == 1 ? 0.5 : 0.1 * static_cast<double>((seed + i) % 7) - 0.3);
    return a;
  };
  d.test.attach_regions = attach_test_regions;
}

}  // namespace mg::ir
