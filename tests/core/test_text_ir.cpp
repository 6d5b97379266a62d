// Text IR round trips: for every registered op (built from its registry test spec), its
// gradient graph and its grad-of-grad graph, for constants of every dtype (special float
// values bit-exact), 0-d and empty shapes, attributes of every kind, named and unnamed
// outputs, odd names, locations, roles and regions: print(parse(print(g))) == print(g),
// and the parsed graph computes bit-identical results in the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <minigrad/minigrad.hpp>

#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg::ir {
namespace {

bool same_bits(const Array& a, const Array& b) {
  return a.type() == b.type() && (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

// Prints, parses, prints again; both texts must match. Returns the parsed graph.
std::unique_ptr<Graph> round_trip(const Graph& g, const std::string& what = "") {
  std::string t1 = to_text(g);
  std::unique_ptr<Graph> p;
  try {
    p = parse(t1, "roundtrip.mgir");
  } catch (const ParseError& e) {
    ADD_FAILURE() << what << ": " << e.what() << "\nin:\n" << t1;
    return nullptr;
  }
  std::string t2 = to_text(*p);
  EXPECT_EQ(t1, t2) << what;
  return p;
}

// Runs the outputs of `a` and `b` on the same inputs; results must be bit-identical.
void expect_same_results(Graph& a, Graph& b, const rt::Bindings& in, const std::string& what) {
  std::vector<Value> oa, ob;
  for (NodeId id : a.outputs) oa.push_back(a.value(id));
  for (NodeId id : b.outputs) ob.push_back(b.value(id));
  auto ra = rt::evaluate(oa, in);
  auto rb = rt::evaluate(ob, in);
  ASSERT_EQ(ra.size(), rb.size()) << what;
  for (std::size_t i = 0; i < ra.size(); ++i)
    EXPECT_TRUE(same_bits(ra[i], rb[i])) << what << ": output " << i << " " << to_string(ra[i]) << " vs "
                                         << to_string(rb[i]);
}

// The registry suite's default cases for elementwise ops without explicit ones.
std::vector<OpTestCase> cases_of(const OpDef& d) {
  if (!d.test.cases.empty() || !d.traits.elementwise) return d.test.cases;
  std::vector<OpTestCase> out;
  for (Shape s : {Shape{3, 4}, Shape{}, Shape{2, 1, 3}})
    out.push_back({std::vector<Type>(static_cast<std::size_t>(d.arity), Type{f64, s}), {}});
  return out;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef* d : all_ops())
    if (d->name.rfind("test_", 0) != 0) names.push_back(d->name);
  return names;
}

class EveryOp : public ::testing::TestWithParam<std::string> {};

// One graph per test case of the op: its output, and (when differentiable) the VJP with
// a cotangent input and the gradient of <grad, v> (second order); all as named outputs.
TEST_P(EveryOp, RoundTripsWithItsGradientsAndComputesTheSame) {
  const OpDef& d = op(GetParam());
  auto cases = cases_of(d);
  ASSERT_FALSE(cases.empty()) << d.name;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    std::string what = d.name + " case " + std::to_string(ci);
    Graph g;
    rt::Bindings in;
    std::vector<Value> inputs, wrt;
    for (std::size_t i = 0; i < cases[ci].inputs.size(); ++i) {
      const Type& t = cases[ci].inputs[i];
      Value v = g.add_input("in" + std::to_string(i), t, SourceLoc{"spec.cpp", static_cast<std::uint32_t>(i + 1), 3});
      inputs.push_back(v);
      in["in" + std::to_string(i)] = d.test.make_input ? d.test.make_input(i, t, 40 + i)
                                                       : testing::sample(t, d.test.domain, 40 + i);
      if (is_float(t.dtype)) wrt.push_back(v);
    }
    Value out = make_op(g, d, inputs, cases[ci].attrs);
    if (d.test.attach_regions) d.test.attach_regions(g, out.id);
    g.outputs = {out.id};
    g.output_names = {"y"};
    if (d.test.grad_order > 0 && is_float(out.dtype()) && !wrt.empty()) {
      Value cot = g.add_input("cotangent", out.type());
      in["cotangent"] = testing::sample(out.type(), Domain::any, 7);
      std::vector<Value> grads = passes::vjp(std::span<const Value>(&out, 1), std::span<const Value>(&cot, 1), wrt);
      for (std::size_t k = 0; k < grads.size(); ++k) {
        g.outputs.push_back(grads[k].id);
        g.output_names.push_back("grad_" + wrt[k].node().name);
      }
      if (d.test.grad_order > 1) {
        Value v = g.add_input("v", grads[0].type());
        in["v"] = testing::sample(grads[0].type(), Domain::any, 8);
        Value s = sum_to(mul(grads[0], v), Shape{});
        std::vector<Value> gg = passes::grad(s, wrt);
        for (std::size_t k = 0; k < gg.size(); ++k) {
          g.outputs.push_back(gg[k].id);
          g.output_names.push_back("hvp_" + wrt[k].node().name);
        }
      }
    }
    auto p = round_trip(g, what);
    ASSERT_TRUE(p) << what;
    expect_same_results(g, *p, in, what);
  }
}

auto param_name = [](const ::testing::TestParamInfo<std::string>& info) { return info.param; };
INSTANTIATE_TEST_SUITE_P(AllOps, EveryOp, ::testing::ValuesIn(op_names()), param_name);

TEST(TextIr, ConstantsOfEveryDtypeAreBitExact) {
  const double dinf = std::numeric_limits<double>::infinity();
  const float finf = std::numeric_limits<float>::infinity();
  Graph g;
  std::vector<Array> lits = {
      Array::from<double>({9}, {0.1, -0.0, dinf, -dinf, std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                                1e21, -1.0 / 3}),
      Array::from<float>({2, 3}, {0.1f, -0.0f, finf, -finf, std::numeric_limits<float>::denorm_min(), 16777217.0f}),
      Array::from<std::int64_t>({3}, {std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max(), 0}),
      Array::from<bool>({2, 2}, {true, false, false, true}),
      Array::scalar(f64, 2.5),                   // 0-d
      Array::full(Type{f32, {4, 5}}, -1.25),     // splat
      Array::zeros(Type{i64, {2, 0, 3}}),        // empty
      Array::full(Type{boolean, {3}}, 1),        // bool splat
      Array::from<double>({1}, {-std::numeric_limits<double>::quiet_NaN()}),
  };
  for (const Array& a : lits) g.outputs.push_back(g.add_constant(a).id);
  auto p = round_trip(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->outputs.size(), lits.size());
  for (std::size_t i = 0; i < lits.size(); ++i) {
    const Node& n = p->node(p->outputs[i]);
    ASSERT_EQ(n.kind, NodeKind::constant);
    EXPECT_TRUE(same_bits(*n.literal, lits[i]) ||
                (i == 0 && std::isnan(n.literal->at(4))))  // NaN payload bits are not kept
        << i << ": " << to_string(*n.literal);
  }
  EXPECT_TRUE(std::signbit(p->node(p->outputs.back()).literal->at(0)));  // -nan keeps its sign
  std::string t = to_text(g);
  EXPECT_NE(t.find("constant -1.25 : f32[4,5]"), std::string::npos) << t;
  EXPECT_NE(t.find("constant [] : i64[2,0,3]"), std::string::npos) << t;
  EXPECT_NE(t.find("constant 2.5 : f64[]"), std::string::npos) << t;
}

TEST(TextIr, AttributesOfEveryKindRoundTripExactly) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  const double specials[] = {0.1, -0.0, 1e-300, std::numeric_limits<double>::denorm_min(), 3.0};
  for (double a : specials) g.outputs.push_back(make_op(op("leaky_relu"), {x}, {{"alpha", a}}).id);
  const double inf = std::numeric_limits<double>::infinity();
  g.outputs.push_back(make_op(op("clamp"), {x}, {{"min", -inf}, {"max", inf}}).id);
  g.outputs.push_back(make_op(op("clamp"), {x}, {{"min", std::numeric_limits<double>::quiet_NaN()}}).id);
  g.outputs.push_back(reduce_sum(x, {0, 1}, true).id);                   // i64 list + bool
  g.outputs.push_back(cast(x, i64).id);                                  // dtype
  g.outputs.push_back(cumsum(x, 1).id);                                  // i64
  g.outputs.push_back(make_op(op("gelu"), {x}, {{"approximate", std::string("tanh")}}).id);  // string
  auto p = round_trip(g);
  ASSERT_TRUE(p);
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Attrs& a = g.node(g.outputs[i]).attrs;
    const Attrs& b = p->node(p->outputs[i]).attrs;
    ASSERT_EQ(a.items().size(), b.items().size());
    for (std::size_t k = 0; k < a.items().size(); ++k) {
      const AttrValue& va = a.items()[k].second;
      const AttrValue& vb = b.items()[k].second;
      ASSERT_EQ(va.index(), vb.index()) << i;
      if (auto* da = std::get_if<double>(&va)) {
        double db = std::get<double>(vb);
        EXPECT_TRUE(std::memcmp(da, &db, 8) == 0 || (std::isnan(*da) && std::isnan(db))) << *da << " " << db;
      } else {
        EXPECT_EQ(va, vb) << i;
      }
    }
  }
  std::string t = to_text(g);
  EXPECT_NE(t.find("{max = inf, min = -inf}"), std::string::npos) << t;
  EXPECT_NE(t.find("{alpha = 3.0}"), std::string::npos) << t;
  EXPECT_NE(t.find("{dtype = i64}"), std::string::npos) << t;
  EXPECT_NE(t.find("{approximate = \"tanh\"}"), std::string::npos) << t;
  rt::Bindings in{{"x", testing::sample(Type{f64, {2, 3}}, Domain::any, 3)}};
  expect_same_results(g, *p, in, "attrs");
}

TEST(TextIr, NamesLocationsRolesAndOutputs) {
  Graph g;
  Value a = g.add_input("layer1.weight", Type{f64, {2}}, SourceLoc{"m o\"d\\el.cpp", 3, 0});
  Value b = g.add_input("12", Type{f64, {2}});       // digits: printed quoted
  Value c = g.add_input("a b\n\x01é", Type{f64, {}});  // needs escapes
  g.mutable_node(c.id).role = Role::adjoint;
  Value s;
  {
    LocScope at(SourceLoc{"net.cpp", 7, 12}, true);
    s = add(a, b);
  }
  Value t;
  {
    RoleScope r(g, Role::adjoint);
    t = mul(s, broadcast_to(c, {2}));
  }
  g.outputs = {s.id, t.id, a.id, t.id, s.id};
  g.output_names = {"", "loss", "weird \"name\"", "loss"};  // shorter than outputs: last unnamed
  auto p = round_trip(g);
  ASSERT_TRUE(p);
  std::string text = to_text(g);
  EXPECT_NE(text.find("graph(%layer1.weight: f64[2]  loc(\"m o\\\"d\\\\el.cpp\":3), %\"12\": f64[2], "
                      "%\"a b\\n\\x01é\": f64[] grad)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%3 = add(%layer1.weight, %\"12\") : f64[2]  loc(\"net.cpp\":7:12)"), std::string::npos) << text;
  EXPECT_NE(text.find(": f64[2] grad\n"), std::string::npos) << text;
  EXPECT_NE(text.find("return out0 = %3, loss = %5, \"weird \\\"name\\\"\" = %layer1.weight, loss_1 = %5, "
                      "out4 = %3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(p->output_names, (std::vector<std::string>{"out0", "loss", "weird \"name\"", "loss_1", "out4"}));
  EXPECT_EQ(p->node(p->input("a b\n\x01é").id).role, Role::adjoint);
  EXPECT_EQ(p->node(p->outputs[1]).role, Role::adjoint);
  EXPECT_EQ(p->node(p->outputs[0]).role, Role::forward);
  SourceLoc l = p->node(p->outputs[0]).loc;
  EXPECT_EQ(std::string(l.file), "net.cpp");
  EXPECT_EQ(l.line, 7u);
  EXPECT_EQ(l.column, 12u);
  EXPECT_EQ(std::string(p->node(p->input("layer1.weight").id).loc.file), "m o\"d\\el.cpp");
  rt::Bindings in{{"layer1.weight", Array::from<double>({2}, {1, 2})},
                  {"12", Array::from<double>({2}, {3, 4})},
                  {"a b\n\x01é", Array::scalar(f64, 0.5)}};
  expect_same_results(g, *p, in, "names");
}

// Every role prints and parses back: `grad` (adjoint), `grad2` (second order), `update`.
TEST(TextIr, EveryRoleRoundTrips) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2}});
  Value m;
  {
    RoleScope r(g, Role::update);
    m = g.add_input("optim.x.m", Type{f64, {2}});
  }
  Value y = exp(x);
  Value a, b, c;
  {
    RoleScope r(g, Role::adjoint);
    a = mul(y, x);
  }
  {
    RoleScope r(g, Role::second_order);
    b = neg(a);
  }
  {
    RoleScope r(g, Role::update);
    c = sub(x, add(b, m));
  }
  g.outputs = {y.id, c.id};
  auto p = round_trip(g);
  ASSERT_TRUE(p);
  const std::string text = to_text(g);
  EXPECT_NE(text.find("%optim.x.m: f64[2] update)"), std::string::npos) << text;
  EXPECT_NE(text.find("= mul(%2, %x) : f64[2] grad\n"), std::string::npos) << text;
  EXPECT_NE(text.find("= neg(%3) : f64[2] grad2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("= sub(%x, %5) : f64[2] update\n"), std::string::npos) << text;
  EXPECT_EQ(p->node(p->input("optim.x.m").id).role, Role::update);
  EXPECT_EQ(p->node(p->outputs[0]).role, Role::forward);
  EXPECT_EQ(p->node(p->outputs[1]).role, Role::update);
  EXPECT_EQ(p->node(p->node(p->outputs[1]).inputs[1]).role, Role::update);
  EXPECT_EQ(p->node(p->node(p->node(p->outputs[1]).inputs[1]).inputs[0]).role, Role::second_order);
  // A misspelt role is a located error.
  EXPECT_THROW(parse("graph(%x: f64[] grad3) {\n  return %x\n}\n"), ParseError);
}

TEST(TextIr, PrintsOnlyLiveNodesOfExplicitOutputsAndRenumbers) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  exp(x);  // dead
  Value y = neg(x);
  Value z = g.add_input("late", Type{f64, {3}});  // an input added after ops
  Value w = add(y, z);
  std::vector<NodeId> outs{w.id};
  std::string t = to_text(g, outs);
  EXPECT_NE(t.find("graph(%x: f64[3], %late: f64[3])"), std::string::npos) << t;
  EXPECT_EQ(t.find("exp"), std::string::npos) << t;
  EXPECT_NE(t.find("%2 = neg(%x)"), std::string::npos) << t;
  EXPECT_NE(t.find("%3 = add(%2, %late)"), std::string::npos) << t;
  auto p = parse(t);
  EXPECT_EQ(to_text(*p), t);
  EXPECT_EQ(value_name(*p, p->outputs[0]), "%3");  // parsed ids match the printed numbers
}

TEST(TextIr, HandWrittenTextWithCommentsAndFreeNames) {
  const char* text = R"(// a hand-written graph
graph(%x: f64[2,2], %w: f64[2,2]) {
  %h = matmul(%x, %w) : f64[2,2]   // any names, any spacing
  %one = constant 1.0 : f64[2,2]
  %"sum!" = add(%h, %one) : f64[2,2] loc("hand.mgir":4)
  %s = reduce_sum(%"sum!") {keepdim = false, axes = [0, 1]} : f64[]
  %l = leaky_relu(%s) {alpha = 1} : f64[]  // an integer widens to f64
  return loss = %l, "h" = %h
})";
  auto p = parse(text, "hand.mgir");
  EXPECT_EQ(p->output_names, (std::vector<std::string>{"loss", "h"}));
  std::vector<Value> outs{p->value(p->outputs[0])};
  auto r = rt::evaluate(outs, {{"x", Array::from<double>({2, 2}, {1, 0, 0, 1})},
                               {"w", Array::from<double>({2, 2}, {1, 2, 3, 4})}});
  EXPECT_DOUBLE_EQ(r[0].at(0), 14.0);
  std::string t = to_text(*p);
  EXPECT_NE(t.find("%4 = add(%2, %3) : f64[2,2]  loc(\"hand.mgir\":4)"), std::string::npos) << t;
  EXPECT_NE(t.find("{alpha = 1.0}"), std::string::npos) << t;
  EXPECT_EQ(to_text(*parse(t)), t);
}

// A test-only op owning one region, applied to its input (like the interpreter's test).
const OpDef& region_op() {
  static const OpDef& def = []() -> const OpDef& {
    op("exp");  // registers the real families first
    OpDef& d = define_op("test_text_apply_region");
    d.doc = "applies region 0 to the input (test only)";
    d.infer = [](std::span<const Type> in, const Attrs&) { return in[0]; };
    d.kernel = [](const KernelArgs& k) {
      std::vector<Array> args{*k.in[0]};
      std::vector<Array> r = (*k.run_region)(0, args);
      std::memcpy(k.out.raw(), r.at(0).raw(), k.out.nbytes());
    };
    d.check_regions = [](const Node& n, std::span<const Type>) {  // it owns one region
      if (n.regions.size() != 1) throw TypeRuleError{"expects one region"};
    };
    d.not_differentiable = "test op";
    d.test.grad_order = 0;
    return d;
  }();
  return def;
}

std::unique_ptr<Graph> square_plus_one_body(int depth) {
  auto body = std::make_unique<Graph>();
  Value a = body->add_input("a", Type{f64, {2}});
  Value r = add_scalar(square(a), 1.0);
  if (depth > 0) {
    Value inner = make_op(region_op(), {r});
    body->mutable_node(inner.id).regions.push_back(square_plus_one_body(depth - 1));
    r = inner;
  }
  body->outputs = {r.id};
  if (depth % 2) body->output_names = {"named"};
  return body;
}

TEST(TextIr, RegionsNestAndRunTheSame) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2}});
  Value y = make_op(region_op(), {x});
  g.mutable_node(y.id).regions.push_back(square_plus_one_body(2));
  g.outputs = {y.id};
  auto p = round_trip(g);
  ASSERT_TRUE(p);
  std::string t = to_text(g);
  EXPECT_NE(t.find("    region(%a: f64[2]) {\n"), std::string::npos) << t;
  EXPECT_NE(t.find("return named = %"), std::string::npos) << t;
  ASSERT_EQ(p->node(p->outputs[0]).regions.size(), 1u);
  expect_same_results(g, *p, {{"x", Array::from<double>({2}, {0.5, -1})}}, "regions");
}

TEST(TextIr, ParseFileReadsAndReportsUnreadableFiles) {
  EXPECT_THROW(parse_file("/nonexistent/dir/x.mgir"), UserError);
  EXPECT_THROW(parse_file("/tmp"), UserError);
  std::string path = ::testing::TempDir() + "mg_text_ir_test.mgir";
  {
    Graph g;
    Value x = g.add_input("x", Type{f32, {}});
    g.outputs = {exp(x).id};
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::string t = to_text(g);
    std::fwrite(t.data(), 1, t.size(), f);
    std::fclose(f);
  }
  auto p = parse_file(path);
  EXPECT_EQ(p->output_names, std::vector<std::string>{"out0"});
  std::remove(path.c_str());
}

}  // namespace
}  // namespace mg::ir

namespace mg {
namespace {

TEST(TextIr, DslGraphWithGradientsRoundTrips) {
  Graph g;
  Tensor x = g.input("x", f64, {4, 3});
  Tensor w = g.input("w", f64, {3, 2});
  Tensor b = g.input("b", f64, {2});
  Tensor y = (tanh(matmul(x, w) + b) * 0.5).sum();
  auto [dw, db] = grad(y, {w, b});
  auto [ddw] = grad((dw * dw).sum(), {w});
  ir::Graph& ig = g.ir();
  ig.outputs = {y.value().id, dw.value().id, db.value().id, ddw.value().id};
  ig.output_names = {"loss", "dw", "db", "ddw"};
  auto p = ir::round_trip(ig, "dsl");
  ASSERT_TRUE(p);
  EXPECT_NE(ir::to_text(ig).find(" grad  loc(\""), std::string::npos);
  rt::Bindings in{{"x", testing::sample(Type{f64, {4, 3}}, ir::Domain::any, 1)},
                  {"w", testing::sample(Type{f64, {3, 2}}, ir::Domain::any, 2)},
                  {"b", testing::sample(Type{f64, {2}}, ir::Domain::any, 3)}};
  ir::expect_same_results(ig, *p, in, "dsl");
}

}  // namespace
}  // namespace mg
