// Two executors, one meaning (DESIGN invariant 6), registry-driven: for every op, all of
// its test cases (the registry's test spec) in one graph, plus every gradient-check graph
// (first-order gradients of <out, u> and Hessian-vector products, as tests/ops/gradcheck
// builds them), run through the interpreter and the C99 JIT. Results agree: f64 to 1e-12
// and f32 to 16 ulp, both relative to the array's scale (max |reference|); integers, bools
// and the random ops' draws (random_normal, random_uniform, dropout_mask) exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

std::vector<ir::OpTestCase> cases_of(const ir::OpDef& d) {
  if (!d.test.cases.empty() || !d.traits.elementwise) return d.test.cases;
  std::vector<ir::OpTestCase> out;
  for (Shape s : {Shape{3, 4}, Shape{}, Shape{2, 1, 3}})
    out.push_back({std::vector<Type>(static_cast<std::size_t>(d.arity), Type{f64, s}), {}});
  return out;
}

// The case with every f64 (input types, `dtype` attribute) replaced by f32.
ir::OpTestCase as_f32(ir::OpTestCase c) {
  for (auto& t : c.inputs)
    if (t.dtype == f64) t.dtype = f32;
  if (const AttrValue* v = c.attrs.find("dtype"); v && std::get<DType>(*v) == f64) c.attrs.set("dtype", f32);
  return c;
}

struct Program {
  std::unique_ptr<ir::Graph> g = std::make_unique<ir::Graph>();
  rt::Bindings inputs;
  std::vector<ir::NodeId> outputs;
  std::vector<std::string> what;  // per output, for messages
};

// All cases of `d` added to p's graph (input names start with `prefix`); with `grads`, also
// their first- and second-order gradient-check graphs.
void add_cases(Program& p, const ir::OpDef& d, bool f32_cases, bool grads, const std::string& prefix = "") {
  auto cases = cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const ir::OpTestCase c = f32_cases ? as_f32(cases[ci]) : cases[ci];
    std::vector<ir::Value> ins;
    std::vector<ir::Value> wrt;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      const std::string name = prefix + "c" + std::to_string(ci) + "_in" + std::to_string(i);
      ir::Value in = p.g->add_input(name, c.inputs[i]);
      ins.push_back(in);
      const std::uint64_t seed = 1000 + ci + i;
      Array v = d.test.make_input ? d.test.make_input(i, c.inputs[i], seed)
                                  : testing::sample(Type{f64, c.inputs[i].shape}, d.test.domain, seed).cast(c.inputs[i].dtype);
      p.inputs[name] = v;
      if (is_float(c.inputs[i].dtype)) wrt.push_back(in);
    }
    ir::Value out = ir::make_op(*p.g, d, ins, c.attrs);
    if (d.test.attach_regions) d.test.attach_regions(*p.g, out.id);
    p.outputs.push_back(out.id);
    p.what.push_back("case " + std::to_string(ci));
    if (!grads || d.test.grad_order == 0 || wrt.empty() || !is_float(out.dtype())) continue;
    I64List all(static_cast<std::size_t>(out.rank()));
    for (int k = 0; k < out.rank(); ++k) all[static_cast<std::size_t>(k)] = k;
    ir::Value u = p.g->add_constant(testing::sample(Type{f64, out.shape()}, ir::Domain::any, 77 + ci).cast(out.dtype()));
    ir::Value loss = ir::reduce_sum(ir::mul(out, u), all, false);
    std::vector<ir::Value> g1 = passes::grad(loss, wrt);
    for (std::size_t k = 0; k < g1.size(); ++k) {
      p.outputs.push_back(g1[k].id);
      p.what.push_back("case " + std::to_string(ci) + " gradient " + std::to_string(k));
    }
    if (d.test.grad_order < 2) continue;
    ir::Value G;
    for (std::size_t k = 0; k < wrt.size(); ++k) {
      ir::Value v = p.g->add_constant(testing::sample(Type{f64, wrt[k].shape()}, ir::Domain::any, 94 + k).cast(wrt[k].dtype()));
      I64List axes(static_cast<std::size_t>(wrt[k].rank()));
      for (int a = 0; a < wrt[k].rank(); ++a) axes[static_cast<std::size_t>(a)] = a;
      ir::Value term = ir::reduce_sum(ir::mul(g1[k], v), axes, false);
      G = G.valid() ? ir::add(G, term) : term;
    }
    std::vector<ir::Value> hv = passes::grad(G, wrt);
    for (std::size_t k = 0; k < hv.size(); ++k) {
      p.outputs.push_back(hv[k].id);
      p.what.push_back("case " + std::to_string(ci) + " Hessian-vector " + std::to_string(k));
    }
  }
}

// Element i agrees within rtol of the array's scale; NaN matches NaN, inf the same inf.
std::string compare(const Array& want, const Array& got, double rtol) {
  std::ostringstream os;
  if (want.type() != got.type()) return "type " + to_string(got.type()) + ", want " + to_string(want.type());
  double scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i)
    if (std::isfinite(want.at(i))) scale = std::max(scale, std::fabs(want.at(i)));
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.at(i), b = got.at(i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
    else if (std::isinf(a) || std::isinf(b)) ok = a == b;
    else if (!is_float(want.dtype())) ok = a == b;
    else ok = std::fabs(a - b) <= rtol * (std::fabs(a) + scale);
    if (!ok && bad++ < 5) os << "  [" << i << "] interpreter " << a << ", C99 " << b << "\n";
  }
  return os.str();
}

double rtol_of(DType t) { return t == f32 ? 16 * 0x1p-23 : 1e-12; }

void expect_agree(const ir::OpDef& d, bool f32_cases, const std::vector<Array>& want, const std::vector<Array>& got,
                  const std::vector<std::string>& what) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    // Random ops draw the same bits in both executors: their outputs must be identical.
    const double rtol = d.traits.random ? 0.0 : rtol_of(want[k].dtype());
    const std::string diff = compare(want[k], got[k], rtol);
    EXPECT_TRUE(diff.empty()) << d.name << (f32_cases ? " (f32) " : " ") << what[k] << " "
                              << to_string(want[k].type()) << ":\n" << diff;
  }
}

// One op's programs in a graph of their own, through both executors.
void check_alone(const ir::OpDef& d, bool f32_cases) {
  Program p;
  add_cases(p, d, f32_cases, true);
  const auto want = rt::compile(*p.g, p.outputs).run(p.inputs);
  const auto got = rt::compile(*p.g, p.outputs, {}, rt::Backend::c99).run(p.inputs);
  expect_agree(d, f32_cases, want, got, p.what);
}

// The programs of every op this process tests (gtest's filter and shard) of one kind (f64
// with gradients, or f32) in one graph, run once per executor: on a cold JIT cache ~180
// one-op modules were ~60 s of cc, a module per kind a few seconds. Should the batch fail
// (cc, or a run-time error), each op is checked alone, so a verdict is always the op's own.
struct Batch {
  Program p;
  std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> range;  // op -> [first, last) output
  std::vector<Array> want, got;
  bool ok = false;
};

bool converts_to_f32(const ir::OpDef& d) {
  for (auto& c : cases_of(d)) {
    for (auto& t : c.inputs)
      if (t.dtype == f64) return true;
    if (const AttrValue* v = c.attrs.find("dtype"); v && std::get<DType>(*v) == f64) return true;
  }
  return false;
}

const Batch& batch(bool f32_cases) {
  static std::map<bool, Batch> made;
  if (auto it = made.find(f32_cases); it != made.end()) return it->second;
  Batch& b = made[f32_cases];
  const std::string test = f32_cases ? "InterpreterAndC99AgreeInF32/" : "InterpreterAndC99AgreeWithGradients/";
  const ::testing::UnitTest& ut = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *ut.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& t = *suite.GetTestInfo(j);
      const std::string name = t.name();
      if (!t.should_run() || name.rfind(test, 0) != 0) continue;
      const ir::OpDef& d = ir::op(name.substr(test.size()));
      if (d.emit_c.empty() || (f32_cases && !converts_to_f32(d))) continue;
      const std::size_t first = b.p.outputs.size();
      add_cases(b.p, d, f32_cases, true, d.name + "_");
      b.range[d.name] = {first, b.p.outputs.size()};
    }
  }
  if (b.p.outputs.empty()) return b;
  try {
    b.want = rt::compile(*b.p.g, b.p.outputs).run(b.p.inputs);
    b.got = rt::compile(*b.p.g, b.p.outputs, {}, rt::Backend::c99).run(b.p.inputs);
    b.ok = true;
  } catch (const std::exception& e) {
    std::cout << "[ c99 ] the batch of " << b.range.size() << " ops failed, each op runs alone: " << e.what() << "\n";
  }
  return b;
}

void check_both_executors(const ir::OpDef& d, bool f32_cases) {
  const Batch& b = batch(f32_cases);
  const auto r = b.range.find(d.name);
  if (!b.ok || r == b.range.end()) return check_alone(d, f32_cases);
  const auto slice = [&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    return V(v.begin() + static_cast<std::ptrdiff_t>(r->second.first), v.begin() + static_cast<std::ptrdiff_t>(r->second.second));
  };
  expect_agree(d, f32_cases, slice(b.want), slice(b.got), slice(b.p.what));
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const ir::OpDef* d : ir::all_ops()) names.push_back(d->name);
  return names;
}

class C99Op : public ::testing::TestWithParam<std::string> {};

TEST_P(C99Op, HasCEmissionOrAReason) {
  const ir::OpDef& d = ir::op(GetParam());
  EXPECT_TRUE(!d.emit_c.empty() || !d.emit_c.none.empty()) << d.name << ": no C99 emission and no reason why";
}

TEST_P(C99Op, InterpreterAndC99AgreeWithGradients) {
  const ir::OpDef& d = ir::op(GetParam());
  if (d.emit_c.empty()) GTEST_SKIP() << d.name << " has no C emission: " << d.emit_c.none;
  check_both_executors(d, false);
}

TEST_P(C99Op, InterpreterAndC99AgreeInF32) {
  const ir::OpDef& d = ir::op(GetParam());
  if (d.emit_c.empty()) GTEST_SKIP() << d.name << " has no C emission: " << d.emit_c.none;
  if (!converts_to_f32(d)) GTEST_SKIP() << d.name << ": no float case to convert";
  check_both_executors(d, true);
}

INSTANTIATE_TEST_SUITE_P(AllOps, C99Op, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The registry walk: which ops still lack a C column, listed in one message.
TEST(C99Registry, ReportsOpsWithoutEmission) {
  std::string missing, without_reason;
  for (const ir::OpDef* d : ir::all_ops()) {
    if (!d->emit_c.empty()) continue;
    (d->emit_c.none.empty() ? without_reason : missing) += " " + d->name;
  }
  if (!missing.empty()) std::cout << "[ c99 ] ops without C emission (with a reason):" << missing << "\n";
  EXPECT_TRUE(without_reason.empty()) << "ops without C emission and without a reason:" << without_reason;
}

// Several 65536-element chunks (one engine per chunk, chunks in parallel): still the
// interpreter's bits.
TEST(C99Runtime, RandomOpsOverManyChunksAreBitIdentical) {
  ir::Graph g;
  ir::Value step = g.add_input("step", Type{i64, {}});
  ir::Value n = ir::make_op(g, ir::op("random_normal"), {},
                            {{"shape", I64List{3, 70001}}, {"dtype", f32}, {"seed", std::int64_t{11}}, {"std", 2.0}});
  ir::Value u = ir::make_op(g, ir::op("random_uniform"), {},
                            {{"shape", I64List{140001}}, {"dtype", f64}, {"seed", std::int64_t{-5}}, {"low", -1.0}});
  ir::Value m = ir::make_op(g, ir::op("dropout_mask"), {step},
                            {{"shape", I64List{200, 1001}}, {"dtype", f32}, {"seed", std::int64_t{3}}, {"p", 0.3}});
  const std::vector<ir::NodeId> outs{n.id, u.id, m.id};
  rt::Bindings b{{"step", Array::scalar(i64, 42)}};
  const auto want = rt::compile(g, outs).run(b);
  const auto got = rt::compile(g, outs, {}, rt::Backend::c99).run(b);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    ASSERT_EQ(want[k].nbytes(), got[k].nbytes());
    EXPECT_EQ(std::memcmp(want[k].raw(), got[k].raw(), want[k].nbytes()), 0) << "output " << k;
  }
}

// Transposes large enough for the emitter's 32 x 32 tiles (partial tiles included).
TEST(C99Runtime, TiledTransposesMatchTheInterpreter) {
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{f32, {40, 50}});
  ir::Value b = g.add_input("b", Type{f64, {3, 33, 70}});
  const std::vector<ir::NodeId> outs{ir::permute(a, {1, 0}).id, ir::permute(b, {2, 0, 1}).id, ir::permute(b, {0, 2, 1}).id,
                                     ir::flip(ir::permute(a, {1, 0}), {1}).id};
  rt::Bindings in{{"a", testing::sample(Type{f64, {40, 50}}, ir::Domain::any, 1).cast(f32)},
                  {"b", testing::sample(Type{f64, {3, 33, 70}}, ir::Domain::any, 2)}};
  const auto want = rt::compile(g, outs).run(in);
  const auto got = rt::compile(g, outs, {}, rt::Backend::c99).run(in);
  for (std::size_t k = 0; k < outs.size(); ++k) {
    ASSERT_EQ(want[k].type(), got[k].type());
    EXPECT_EQ(std::memcmp(want[k].raw(), got[k].raw(), want[k].nbytes()), 0) << "output " << k;
  }
}

TEST(C99Runtime, IndexOutOfRangeIsAUserErrorNamingTheOp) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value idx = g.add_input("idx", Type{i64, {2}});
  ir::Value y = ir::make_op(g, ir::op("index_select"), {x, idx}, {{"axis", std::int64_t{0}}});
  rt::Executable c99 = rt::compile(g, {y.id}, {}, rt::Backend::c99);
  rt::Bindings b{{"x", Array::from<double>({3}, {1, 2, 3})}, {"idx", Array::from<std::int64_t>({2}, {0, 3})}};
  try {
    c99.run(b);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index_select"), std::string::npos) << e.what();
  }
  b["idx"] = Array::from<std::int64_t>({2}, {2, 0});
  EXPECT_EQ(c99.run(b)[0].to_doubles(), (std::vector<double>{3, 1}));
}

}  // namespace
}  // namespace mg
