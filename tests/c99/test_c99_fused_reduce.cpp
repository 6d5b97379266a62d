// Two executors, one meaning, for reduction fusion: a graph fused by fuse_elementwise
// into `fused` nodes of kind "reduce" runs in the C99 JIT and agrees with the interpreter
// on the unfused graph (f64 to 1e-12, f32 to 16 ulp of the array's scale, i64 exactly),
// for every plain fold and the reduced-axes layouts the C loop nest distinguishes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/fuse.hpp"
#include "tests/passes/pass_test_util.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using testing::randn;

std::string compare(const Array& want, const Array& got) {
  if (want.type() != got.type()) return "type " + to_string(got.type()) + ", want " + to_string(want.type());
  const double rtol = want.dtype() == f32 ? 16 * 0x1p-23 : 1e-12;
  double scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i)
    if (std::isfinite(want.at(i))) scale = std::max(scale, std::fabs(want.at(i)));
  std::ostringstream os;
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.at(i), b = got.at(i);
    const bool ok = a == b || (std::isnan(a) && std::isnan(b)) ||
                    (want.dtype() != i64 && std::fabs(a - b) <= rtol * (std::fabs(a) + scale));
    if (!ok && bad++ < 5) os << "  [" << i << "] interpreter " << a << ", C99 " << b << "\n";
  }
  return os.str();
}

TEST(C99FusedReduce, AgreesWithTheUnfusedInterpreter) {
  struct Case {
    Shape shape;
    I64List axes;
    bool keepdim;
  };
  const Case cases[] = {{{300, 70}, {0, 1}, false}, {{37, 100}, {1}, false}, {{128, 30}, {0}, true},
                        {{4, 6, 5, 9}, {0, 2}, false}, {{2, 3}, {}, false}, {{0, 4}, {0}, false},
                        // leading axes (rows of 70 folded into blocks of 64 accumulators + a remainder)
                        {{6, 1, 5, 70}, {0, 1, 2}, false}};
  for (DType dt : {f64, f32, i64}) {
    ir::Graph g;
    rt::Bindings in;
    std::vector<std::string> what;
    int k = 0;
    for (const Case& c : cases) {
      const std::string a = "a" + std::to_string(k), b = "b" + std::to_string(k);
      ++k;
      ir::Value va = g.add_input(a, Type{dt, c.shape}), vb = g.add_input(b, Type{dt, c.shape});
      in[a] = randn(Type{dt, c.shape}, 2 * static_cast<std::uint64_t>(k));
      in[b] = randn(Type{dt, c.shape}, 2 * static_cast<std::uint64_t>(k) + 1);
      // A broadcast in the body too: b's maxima over axis 0, read at every row.
      ir::Value row = ir::broadcast_to(ir::reduce("reduce_max", vb, {0}, true), c.shape);
      const char* ops[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"};
      for (const char* op : ops) {
        if (dt == i64 && std::string(op) == "reduce_mean") continue;
        // each reduction reads its own producer (nothing else does), so each one fuses
        ir::Value p = dt == i64 ? ir::add(ir::mul(va, vb), row) : ir::add(ir::mul(ir::tanh(va), vb), row);
        g.outputs.push_back(ir::reduce(op, p, c.axes, c.keepdim).id);
        what.push_back(std::string(op) + " " + to_string(Type{dt, c.shape}) + " axes " + ir::format_attr(AttrValue{c.axes}));
      }
    }
    auto f = passes::fuse_elementwise(g);
    std::size_t fused = 0;
    for (ir::NodeId id = 0; id < f->size(); ++id)
      fused += f->node(id).op_name() == "fused" && f->node(id).attrs.str("kind") == "reduce";
    EXPECT_EQ(fused, g.outputs.size()) << ir::to_text(*f);
    const auto want = rt::compile(g, g.outputs).run(in);
    const auto got = rt::compile(*f, f->outputs, {}, rt::Backend::c99).run(in);
    ASSERT_EQ(want.size(), got.size());
    for (std::size_t o = 0; o < want.size(); ++o) {
      const std::string diff = compare(want[o], got[o]);
      EXPECT_TRUE(diff.empty()) << what[o] << ":\n" << diff;
    }
  }
}

// The plain reductions' row path (leading axes reduced: bias gradients) against the
// interpreter, unfused.
TEST(C99FusedReduce, LeadingAxesUnfusedAgree) {
  for (DType dt : {f64, f32, i64}) {
    ir::Graph g;
    const Type t{dt, {6, 1, 5, 70}};
    ir::Value x = g.add_input("x", t);
    std::vector<std::string> what;
    for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"}) {
      if (dt == i64 && std::string(op) == "reduce_mean") continue;
      for (const I64List& axes : {I64List{0}, I64List{0, 1, 2}}) {
        g.outputs.push_back(ir::reduce(op, x, axes, false).id);
        what.push_back(std::string(op) + " axes " + ir::format_attr(AttrValue{axes}));
      }
    }
    const rt::Bindings in{{"x", randn(t, 7)}};
    const auto want = rt::compile(g, g.outputs).run(in);
    const auto got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in);
    ASSERT_EQ(want.size(), got.size());
    for (std::size_t o = 0; o < want.size(); ++o) {
      const std::string diff = compare(want[o], got[o]);
      EXPECT_TRUE(diff.empty()) << to_string(t) << " " << what[o] << ":\n" << diff;
    }
  }
}

}  // namespace
}  // namespace mg
