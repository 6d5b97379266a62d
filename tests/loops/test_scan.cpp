// scan (issue 14): a tanh RNN over T steps is one loop node whatever T is; its gradients
// equal the unrolled graph's and finite differences, to second order; interpreter == C99;
// text IR and DOT show the body; bad bodies are clear errors naming the user's line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <minigrad/minigrad.hpp>

#include "minigrad/ir/dot.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "tests/loops/rnn_fixture.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/scratch_dir.hpp"

namespace mg {
namespace {

// Hidden width 4, weights in [-0.5, 0.5].
struct Rnn : testing::Rnn {
  explicit Rnn(std::int64_t T) : testing::Rnn(T, 4, 0.5) {}
  Tensor loss_scan() const { return loss(); }
};
std::vector<Feed> feeds(const Rnn& m) { return m.feeds(); }
constexpr std::int64_t B = testing::Rnn::B, H = 4;

std::size_t op_nodes(const ir::Graph& g) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) n += g.node(id).kind == ir::NodeKind::op;
  return n;
}

TEST(Scan, RnnGraphSizeDoesNotDependOnTheTripCount) {
  std::vector<std::size_t> sizes;
  for (std::int64_t T : {10, 100, 1000}) {
    Rnn m(T);
    Tensor loss = m.loss_scan();
    auto d = grad(loss, m.params());
    sizes.push_back(op_nodes(m.g.ir()));
  }
  EXPECT_EQ(sizes[0], sizes[1]);
  EXPECT_EQ(sizes[0], sizes[2]);
  EXPECT_LT(sizes[0], 80u);  // forward, saving forward and reverse loop, a few slices
}

// Same model, built with the loop and unrolled: values and gradients agree to 1e-12.
TEST(Scan, RnnGradientsEqualTheUnrolledGraphs) {
  for (std::int64_t T : {10, 100, 1000}) {
    Rnn m(T);
    Tensor ls = m.loss_scan(), lu = m.loss_unrolled();
    auto ds = grad(ls, m.params());
    auto du = grad(lu, m.params());
    std::vector<Tensor> outs{ls};
    outs.insert(outs.end(), ds.begin(), ds.end());
    outs.push_back(lu);
    outs.insert(outs.end(), du.begin(), du.end());
    auto r = compile(m.g, outs).run(feeds(m));
    const std::size_t n = 1 + ds.size();
    for (std::size_t k = 0; k < n; ++k)
      for (std::int64_t i = 0; i < r[k].numel(); ++i)
        ASSERT_NEAR(r[k].at(i), r[n + k].at(i), 1e-12 * (1 + std::abs(r[n + k].at(i)))) << "T=" << T << " output " << k << " element " << i;
  }
}

TEST(Scan, RnnGradientsMatchFiniteDifferencesToSecondOrder) {
  Rnn m(10);
  Tensor loss = m.loss_scan();
  std::vector<ir::Value> inputs;
  std::vector<Array> values;
  for (const Feed& f : feeds(m)) {
    inputs.push_back(m.g.ir().input(f.name));
    values.push_back(f.value);
  }
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 11);
  EXPECT_TRUE(r.ok) << r.report;
}

// Grad of grad through the loop: d/dW of |dL/dW|^2, against the unrolled graph's.
TEST(Scan, GradOfGradEqualsTheUnrolledGraphs) {
  Rnn m(10);
  auto [gs] = grad(m.loss_scan(), {m.W});
  auto [gu] = grad(m.loss_unrolled(), {m.W});
  auto [hs] = grad((gs * gs).sum(), {m.W});
  auto [hu] = grad((gu * gu).sum(), {m.W});
  auto r = compile(m.g, {hs, hu}).run(feeds(m));
  for (std::int64_t i = 0; i < r[0].numel(); ++i) EXPECT_NEAR(r[0].at(i), r[1].at(i), 1e-12 * (1 + std::abs(r[1].at(i))));
}

TEST(Scan, SmallLoopAndItsGradientInterpreterEqualsC99) {
  Graph g;
  Tensor xs = g.input("xs", f64, {3});
  Tensor w = g.input("w", f64, {});
  auto [c, ys] = scan([&](const Tensor& c, const Tensor& x) {
    Tensor c2 = tanh(c * w + x);
    return std::pair{c2, c2};
  }, g.scalar(0.5, f64), xs);
  Tensor loss = c + ys.sum();
  auto [dw] = grad(loss, {w});
  std::vector<Feed> f{{"xs", Array::from_vector({3}, std::vector<double>{0.1, 0.2, 0.3})},
                      {"w", Array::from_vector({}, std::vector<double>{0.7})}};
  auto a = compile(g, {loss, dw}).run(f);
  auto e = compile(g, {loss, dw}, Backend::c99);
  auto b = e.run(f);
  EXPECT_NEAR(a[0].at(0), b[0].at(0), 1e-14) << e.source_path();
  EXPECT_NEAR(a[1].at(0), b[1].at(0), 1e-14) << e.source_path();
}

TEST(Scan, InterpreterEqualsC99) {
  Rnn m(100);
  Tensor loss = m.loss_scan();
  auto d = grad(loss, m.params());
  std::vector<Tensor> outs{loss};
  outs.insert(outs.end(), d.begin(), d.end());
  auto a = compile(m.g, outs).run(feeds(m));
  auto e = compile(m.g, outs, Backend::c99);
  auto c = e.run(feeds(m));
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i)
      ASSERT_NEAR(a[k].at(i), c[k].at(i), 1e-12 * (1 + std::abs(a[k].at(i))))
          << "output " << k << " element " << i << " of " << e.source_path();
}

// The standalone export writes the body once inside a for loop (no unrolling, no malloc);
// compiled -std=c99 -pedantic -Werror and run from a C driver it computes the
// interpreter's loss.
TEST(Scan, StandaloneC99HasOneLoopPerScanAndComputesTheLoss) {
  Rnn m(1000);
  Tensor loss = m.loss_scan();
  m.g.ir().outputs = {loss.value().id};
  rt::c99::Options o;
  o.standalone = true;
  const auto mod = rt::c99::emit_module(m.g.ir(), m.g.ir().outputs, {}, o);
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = mod.source.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  EXPECT_EQ(count("for (int64_t mg_t"), 1u);
  EXPECT_EQ(count("tanh(("), 1u);  // the body's tanh, once
  EXPECT_EQ(count("malloc"), 0u);

  testing::ScratchDir dir("mg_scan_export_");
  const auto f = feeds(m);
  std::string driver = "#include <stdio.h>\n#include \"model.h\"\n";
  std::string call;
  for (const auto& a : mod.args) {
    if (a.kind == rt::c99::ArgKind::input) {
      const Array* v = nullptr;
      for (const Feed& x : f) v = x.name == a.name ? &x.value : v;
      driver += ir::c_array(a.c_name, *v);
    } else {
      driver += "static double " + a.c_name + "[" + std::to_string(a.type.numel()) + "];\n";
    }
    call += (call.empty() ? "" : ", ") + a.c_name;
  }
  driver += "int main(void) {\n  if (model_run(" + call + ")) return 1;\n  printf(\"%.17g\\n\", out_out0[0]);\n  return 0;\n}\n";
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* fp = std::fopen((dir / name).c_str(), "w");
    ASSERT_TRUE(fp);
    std::fputs(text.c_str(), fp);
    std::fclose(fp);
  };
  write("model.c", mod.source);
  write("model.h", mod.header);
  write("main.c", driver);
  const std::string exe = (dir / "a.out").string();
  ASSERT_EQ(std::system(("cc -std=c99 -Wall -Wextra -pedantic -Werror -O2 " + (dir / "model.c").string() + " " +
                         (dir / "main.c").string() + " -lm -o " + exe).c_str()),
            0);
  FILE* p = popen(exe.c_str(), "r");
  ASSERT_TRUE(p);
  double got = 0;
  ASSERT_EQ(std::fscanf(p, "%lf", &got), 1);
  pclose(p);
  const double want = compile(m.g, {loss}).run(f)[0].at(0);
  EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want)));
}

// The body is planned once: a loop that keeps only its carry has the same planned peak
// for any trip count (interpreter and C99 arena alike), and that peak includes the body's.
TEST(Scan, ALoopsPeakBytesDoNotDependOnTheTripCount) {
  std::vector<std::size_t> interp, c99;
  for (std::int64_t T : {10, 1000}) {
    Rnn m(T);
    auto [c, ys] = scan([&](const Tensors& h, const Tensors& x) {
      return std::pair{Tensors{m.cell(h[0], x[0])}, Tensors{}};
    }, Tensors{m.h0}, Tensors{m.xs});
    Tensor loss = c[0].sum();
    interp.push_back(compile(m.g, {loss}).peak_bytes());
    rt::c99::Options o;
    c99.push_back(rt::c99::emit_module(m.g.ir(), {loss.value().id}, {}, o).peak_bytes);
  }
  EXPECT_EQ(interp[0], interp[1]);
  EXPECT_EQ(c99[0], c99[1]);
  // The body's three [2,4] f64 temporaries (two products, their sum) and its result.
  EXPECT_GE(interp[0], 4u * B * H * 8);
}

TEST(Scan, ReverseRunsTheStepsBackwards) {
  Graph g;
  Tensor xs = g.input("xs", f64, {4});
  auto body = [](const Tensor& c, const Tensor& x) {
    Tensor c2 = c * 10.0 + x;
    return std::pair{c2, c2};
  };
  auto [f, fs] = scan(body, g.scalar(0.0, f64), xs);
  auto [r, rs] = scan(body, g.scalar(0.0, f64), xs, {.reverse = true});
  auto out = compile(g, {f, fs, r, rs}).run({{"xs", Array::from_vector({4}, std::vector<double>{1, 2, 3, 4})}});
  EXPECT_EQ(out[0].at(0), 1234);
  EXPECT_EQ(out[2].at(0), 4321);
  EXPECT_EQ(out[3].at(0), 4321);  // ys sit at their step's index
  EXPECT_EQ(out[3].at(3), 4);
}

// A trip count without scanned inputs, several carries: Fibonacci.
TEST(Scan, StaticTripCountAndSeveralCarries) {
  Graph g;
  auto [c, ys] = scan([](const Tensors& c, const Tensors&) {
    return std::pair{Tensors{c[1], c[0] + c[1]}, Tensors{c[0]}};
  }, Tensors{g.scalar(0.0, f64), g.scalar(1.0, f64)}, Tensors{}, {.length = 10});
  auto out = compile(g, {c[0], ys[0]}).run({});
  EXPECT_EQ(out[0].at(0), 55);
  EXPECT_EQ(out[1].at(9), 34);
}

TEST(Scan, TextIrRoundTripsAndDotDrawsTheBody) {
  Rnn m(10);
  Tensor loss = m.loss_scan();
  auto d = grad(loss, {m.W});
  m.g.ir().outputs = {loss.value().id, d[0].value().id};
  const std::string text = ir::to_text(m.g.ir());
  auto parsed = ir::parse(text, "rnn.mgir");
  EXPECT_EQ(ir::to_text(*parsed), text);
  EXPECT_NE(text.find("scan("), std::string::npos);
  auto a = compile(m.g, {loss, d[0]}).run(feeds(m));
  rt::Bindings b;
  for (const Feed& f : feeds(m)) b.emplace(f.name, f.value);
  auto c = rt::compile(*parsed, parsed->outputs).run(b);
  EXPECT_EQ(a[0].at(0), c[0].at(0));
  for (std::int64_t i = 0; i < a[1].numel(); ++i) EXPECT_EQ(a[1].at(i), c[1].at(i));
  const std::string dot = ir::to_dot(m.g.ir());
  EXPECT_NE(dot.find("scan region 0"), std::string::npos);
}

TEST(Scan, ACarryThatChangesTypeNamesTheUsersLine) {
  Graph g;
  Tensor h = g.input("h", f64, {3});
  Tensor xs = g.input("xs", f64, {5, 3});
  const int line = __LINE__ + 1;
  auto bad = [&] { return scan([](const Tensor& h, const Tensor& x) { return std::pair{(h + x).sum(), h}; }, h, xs); };
  try {
    bad();
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("carry 0 as f64[]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("keeps its type"), std::string::npos) << e.what();
  }
}

TEST(Scan, AnErrorInsideTheBodyNamesTheLambdasLine) {
  Graph g;
  Tensor h = g.input("h", f64, {3});
  Tensor xs = g.input("xs", f64, {5, 3});
  Tensor W = g.input("W", f64, {4, 4});
  int line = 0;
  try {
    scan([&](const Tensor& h, const Tensor& x) {
      line = __LINE__ + 1;
      Tensor h2 = matmul(h.reshape({1, 3}), W).reshape({3}) + x;
      return std::pair{h2, h2};
    }, h, xs);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("matmul"), std::string::npos) << e.what();
  }
}

// An expression the body returns unbound is bound at the scan's own line (the user's file),
// never at a line of the library's header that called the body.
TEST(Scan, AnUnboundExpressionReturnedByTheBodyNamesTheScansLine) {
  Graph g;
  Tensor h = g.input("h", f64, {2, 3});
  Tensor xs = g.input("xs", f64, {5, 2, 4});
  const int line = __LINE__ + 2;
  try {
    scan([&](const Tensor& h, const Tensor& x) { return std::pair{h + x, h}; }, h, xs);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("test_scan.cpp"), std::string::npos) << e.what();
  }
}

// A scan inside a scan body: both loops stay loops; gradients match finite differences.
TEST(Scan, NestedScansDifferentiate) {
  Graph g;
  Tensor xs = g.input("xs", f64, {3, 4});
  Tensor w = g.input("w", f64, {});
  auto [c, ys] = scan([&](const Tensor& c, const Tensor& row) {
    auto [s, partial] = scan([&](const Tensor& a, const Tensor& x) {
      Tensor a2 = tanh(a * w + x);
      return std::pair{a2, a2};
    }, c, row);
    return std::pair{s, partial.sum()};
  }, g.scalar(0.5, f64), xs);
  Tensor loss = c + ys.sum();
  std::vector<ir::Value> inputs{xs.value(), w.value()};
  std::vector<Array> values{testing::sample(xs.type(), ir::Domain::any, 3), Array::from_vector({}, std::vector<double>{0.7})};
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 5);
  EXPECT_TRUE(r.ok) << r.report;
  auto [dw] = grad(loss, {w});
  auto a = compile(g, {loss, dw}).run({{"xs", values[0]}, {"w", values[1]}});
  auto b = compile(g, {loss, dw}, Backend::c99).run({{"xs", values[0]}, {"w", values[1]}});
  EXPECT_NEAR(a[0].at(0), b[0].at(0), 1e-12);
  EXPECT_NEAR(a[1].at(0), b[1].at(0), 1e-12);
}

}  // namespace
}  // namespace mg
