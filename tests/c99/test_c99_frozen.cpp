// nn::compile_frozen: parameters frozen in as constants, optimized, run by both backends.
// Results equal those with the parameters bound as inputs; what depends only on them is
// computed at compile time (no permute left); the C99 backend passes large constants by
// pointer (its source holds no weights, so recompiling after retraining hits the cache);
// later parameter changes are not seen.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg {
namespace {

struct TwoLayer {
  nn::Linear fc1{96, 80}, fc2{80, 5};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
};

}  // namespace
}  // namespace mg
BOOST_HANA_ADAPT_STRUCT(mg::TwoLayer, fc1, fc2);
namespace mg {
namespace {

Array ramp(Shape s, double scale) {
  Array a(Type{f32, std::move(s)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, scale * static_cast<double>((i * 37) % 101 - 50) / 50.0);
  return a;
}

TEST(Frozen, MatchesBoundParametersOnBothBackends) {
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    TwoLayer m;
    Graph g;
    nn::bind(m, g, 3);
    Tensor x = g.input("x", f32, {2, 96});
    Tensor y = m(x);
    const Array xv = ramp({2, 96}, 1.0);
    const Array want = nn::compile_with_parameters(g, {y}, m, b).run({{"x", xv}})[0];
    Executable frozen = nn::compile_frozen(g, {y}, m, b);
    EXPECT_EQ(frozen.ir_text().find("permute"), std::string::npos) << frozen.ir_text();
    const Array got = frozen.run({{"x", xv}})[0];
    ASSERT_EQ(got.type(), want.type());
    for (std::int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-5 * (1 + std::fabs(want.at(i))));

    m.fc2.bias.assign(Array::full(m.fc2.bias.value().type(), 100.0));  // not seen by the frozen executable
    const Array again = frozen.run({{"x", xv}})[0];
    EXPECT_EQ(again.to_doubles(), got.to_doubles());
  }
}

TEST(Frozen, C99SourceHoldsNoWeights) {
  TwoLayer m;
  Graph g;
  nn::bind(m, g, 5);
  Tensor x = g.input("x", f32, {1, 96});
  Executable a = nn::compile_frozen(g, {m(x)}, m, Backend::c99);
  m.fc1.weight.assign(ramp(m.fc1.weight.value().shape(), 0.1));  // retrained: same source, same module
  Executable b = nn::compile_frozen(g, {m(x)}, m, Backend::c99);
  const Array xv = ramp({1, 96}, 1.0);
  EXPECT_NE(a.run({{"x", xv}})[0].to_doubles(), b.run({{"x", xv}})[0].to_doubles());
  EXPECT_EQ(a.source_path(), b.source_path());
  std::ifstream f(a.source_path());
  std::stringstream src;
  src << f.rdbuf();
  EXPECT_NE(src.str().find("const_"), std::string::npos);  // the weights arrive by pointer
  EXPECT_LT(src.str().size(), 40000u);                        // 96*80 weights as text would not fit
}

TEST(Frozen, ParameterOfAnotherGraphIsAClearError) {
  TwoLayer m, other;
  Graph g, h;
  nn::bind(m, g);
  nn::bind(other, h);
  Tensor x = g.input("x", f32, {1, 96});
  EXPECT_THROW(nn::compile_frozen(g, {m(x)}, other), UserError);
}

}  // namespace
}  // namespace mg
