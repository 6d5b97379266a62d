// PyTorch as the oracle for pooling: max_pool2d and avg_pool2d outputs and input gradients
// (f64, to 1e-12) on ~140 geometries that torch 1.13 computed (tests/ops/gen_pool_goldens.py
// wrote pool_torch_goldens.inc: kernel, stride, padding, dilation, ceil_mode,
// count_include_pad, divisor_override, ties, odd sizes), through the interpreter and the
// C99 JIT, and every geometry PyTorch rejects rejected here too. The gradient is
// passes::grad of sum(y * g), so the VJPs' attributes are checked as well.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

struct PoolGolden {
  const char* op;
  std::int64_t shape[4];
  std::int64_t kernel[2], stride[2], padding[2], dilation[2];
  bool ceil_mode, count_include_pad;
  std::int64_t divisor_override;  // 0: none
  bool ties, rejected;
  std::vector<std::int64_t> out_hw;
  std::vector<double> y, dx;
};

#include "tests/ops/pool_torch_goldens.inc"

// The generator's input formulas (exact in f64).
Array x_of(const PoolGolden& c) {
  Array a(Type{f64, {c.shape[0], c.shape[1], c.shape[2], c.shape[3]}});
  const std::int64_t n = a.numel();
  for (std::int64_t i = 0; i < n; ++i)
    a.set(i, c.ties ? static_cast<double>((i * 7919) % n / 3) / 2 : static_cast<double>((i * 7919) % n - n / 2) / 4);
  return a;
}
Array g_of(const Shape& s) {
  Array a(Type{f64, s});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, static_cast<double>((i * 31) % 17 - 8) / 8);
  return a;
}

I64List pair(const std::int64_t (&v)[2]) { return {v[0], v[1]}; }

ir::Value pool(const PoolGolden& c, ir::Value x) {
  if (std::string(c.op) == "max_pool2d")
    return ir::max_pool2d(x, {.kernel_size = pair(c.kernel), .stride = pair(c.stride), .padding = pair(c.padding),
                              .dilation = pair(c.dilation), .ceil_mode = c.ceil_mode});
  return ir::avg_pool2d(x, {.kernel_size = pair(c.kernel), .stride = pair(c.stride), .padding = pair(c.padding),
                            .ceil_mode = c.ceil_mode, .count_include_pad = c.count_include_pad,
                            .divisor_override = c.divisor_override});
}

std::string describe(const PoolGolden& c) {
  std::ostringstream os;
  os << c.op << " x[" << c.shape[0] << "," << c.shape[1] << "," << c.shape[2] << "," << c.shape[3] << "] kernel "
     << c.kernel[0] << "x" << c.kernel[1] << " stride " << c.stride[0] << "," << c.stride[1] << " padding "
     << c.padding[0] << "," << c.padding[1] << " dilation " << c.dilation[0] << "," << c.dilation[1]
     << (c.ceil_mode ? " ceil_mode" : "") << (c.count_include_pad ? "" : " !count_include_pad")
     << (c.divisor_override ? " divisor_override " + std::to_string(c.divisor_override) : "")
     << (c.ties ? " ties" : "");
  return os.str();
}

void expect_close(const Array& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size())) << what;
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double a = got.at(static_cast<std::int64_t>(i)), b = want[i];
    if (std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b))) continue;
    ADD_FAILURE() << what << " [" << i << "]: " << a << ", PyTorch " << b;
    if (++bad == 5) return;
  }
}

// The accepted geometries in one graph (one JIT compile): all of them, or (`sparse`, for the
// C99 JIT, whose -O3 compile of every case took 15 s of CPU) the hand-picked edges at the
// top of the file and every third one after them; C99 = interpreter on the registry's
// pooling cases is checked by tests/c99 besides.
void check(rt::Backend backend, bool sparse) {
  ir::Graph g;
  rt::Bindings feeds;
  std::vector<ir::NodeId> outs;
  std::vector<const PoolGolden*> cases;
  std::size_t index = 0;
  for (const PoolGolden& c : kPoolGoldens) {
    if (c.rejected || (sparse && index++ >= 20 && index % 3 != 0)) continue;
    const std::string name = "x" + std::to_string(cases.size());
    const Array xv = x_of(c);
    ir::Value x = g.add_input(name, xv.type());
    feeds[name] = xv;
    ir::Value y = pool(c, x);
    ASSERT_EQ(y.shape(), (Shape{c.shape[0], c.shape[1], c.out_hw[0], c.out_hw[1]})) << describe(c);
    ir::Value loss = ir::reduce_sum(ir::mul(y, g.add_constant(g_of(y.shape()))), {0, 1, 2, 3}, false);
    const std::vector<ir::Value> wrt{x};
    outs.push_back(y.id);
    outs.push_back(passes::grad(loss, wrt).at(0).id);
    cases.push_back(&c);
  }
  ASSERT_GE(cases.size(), sparse ? 50u : 100u);
  const std::string exec = backend == rt::Backend::c99 ? " (C99)" : " (interpreter)";
  const std::vector<Array> r = rt::compile(g, outs, {}, backend).run(feeds);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    expect_close(r[2 * k], cases[k]->y, describe(*cases[k]) + exec + " y");
    expect_close(r[2 * k + 1], cases[k]->dx, describe(*cases[k]) + exec + " dx");
  }
}

TEST(PoolOracle, InterpreterMatchesPyTorchForwardAndGradient) { check(rt::Backend::interpreter, false); }
TEST(PoolOracle, C99MatchesPyTorchForwardAndGradient) { check(rt::Backend::c99, true); }

TEST(PoolOracle, RejectsWhatPyTorchRejects) {
  int rejected = 0;
  for (const PoolGolden& c : kPoolGoldens) {
    if (!c.rejected) continue;
    ++rejected;
    ir::Graph g;
    ir::Value x = g.add_input("x", Type{f64, {c.shape[0], c.shape[1], c.shape[2], c.shape[3]}});
    EXPECT_THROW(pool(c, x), ShapeError) << describe(c);
  }
  EXPECT_GE(rejected, 10);
}

}  // namespace
}  // namespace mg
