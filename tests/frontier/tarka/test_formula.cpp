// Formulas as text: the parser (precedence, associativity, round trips through print,
// line:column errors) and grounding (against the same formula built with Truth operators
// and against the axiom helpers; errors at the formula's position).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <minigrad/frontier/tarka.hpp>
#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"

namespace {

using namespace mg;
namespace tk = mg::frontier::tarka;

std::string canon(const std::string& text) { return tk::print(*tk::parse_formula(text)); }

TEST(Parser, PrecedenceAndAssociativity) {
  EXPECT_EQ(canon("A(x) & B(x) | C(x)"), "A(x) & B(x) | C(x)");
  EXPECT_EQ(canon("A(x) & (B(x) | C(x))"), "A(x) & (B(x) | C(x))");
  EXPECT_EQ(canon("((A(x) & B(x)) & C(x))"), "A(x) & B(x) & C(x)");
  EXPECT_EQ(canon("A(x) & (B(x) & C(x))"), "A(x) & (B(x) & C(x))");
  EXPECT_EQ(canon("A(x) -> B(x) -> C(x)"), "A(x) -> B(x) -> C(x)");  // right-associative
  EXPECT_EQ(canon("(A(x) -> B(x)) -> C(x)"), "(A(x) -> B(x)) -> C(x)");
  EXPECT_EQ(canon("~~A(x)"), "~~A(x)");
  EXPECT_EQ(canon("~(A(x) & B(x))"), "~(A(x) & B(x))");
  EXPECT_EQ(canon("A(x) <-> B(x) -> C(x)"), "A(x) <-> B(x) -> C(x)");
  auto f = tk::parse_formula("A(x) -> B(x) -> C(x)");
  ASSERT_EQ(f->kind, tk::FormulaKind::implication);
  EXPECT_EQ(f->operands[1]->kind, tk::FormulaKind::implication);
  auto g = tk::parse_formula("A(x) | B(x) & C(x)");
  ASSERT_EQ(g->kind, tk::FormulaKind::disjunction);
  EXPECT_EQ(g->operands[1]->kind, tk::FormulaKind::conjunction);
}

TEST(Parser, QuantifiersAndTheIssuesExample) {
  auto f = tk::parse_formula("forall x, y, z: R(x, y) & R(y, z) -> R(x, z)");
  ASSERT_EQ(f->kind, tk::FormulaKind::forall);
  EXPECT_EQ(f->terms, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(f->operands[0]->kind, tk::FormulaKind::implication);
  EXPECT_EQ(tk::print(*f), "forall x, y, z: R(x, y) & R(y, z) -> R(x, z)");
  EXPECT_EQ(canon("exists[p=6] y:P(y)"), "exists[p=6] y: P(y)");
  EXPECT_EQ(canon("P(a) & (forall x: Q(x)) | R(a)"), "P(a) & (forall x: Q(x)) | R(a)");
  EXPECT_EQ(canon("P(a) & forall x: Q(x) | R(a)"), "P(a) & (forall x: Q(x) | R(a))");  // the body runs right
  EXPECT_EQ(canon("~forall x: P(x)"), "~(forall x: P(x))");
  EXPECT_EQ(canon("forall x: exists y: Likes(x, y)"), "forall x: exists y: Likes(x, y)");
}

// Random trees: print, parse, compare structurally; print again: the same text.
tk::FormulaPtr random_formula(std::mt19937& rng, int depth) {
  auto f = std::make_shared<tk::Formula>();
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 0 : 7);
  const char* vars[] = {"x", "y", "z"};
  int k = pick(rng);
  if (k == 0) {
    f->kind = tk::FormulaKind::atom;
    f->name = std::string(1, static_cast<char>('P' + rng() % 3));
    for (unsigned i = 0; i <= rng() % 3; ++i) f->terms.push_back(vars[rng() % 3]);
  } else if (k == 1) {
    f->kind = tk::FormulaKind::negation;
    f->operands = {random_formula(rng, depth - 1)};
  } else if (k <= 5) {
    f->kind = std::array{tk::FormulaKind::conjunction, tk::FormulaKind::disjunction, tk::FormulaKind::implication,
                         tk::FormulaKind::equivalence}[k - 2];
    f->operands = {random_formula(rng, depth - 1), random_formula(rng, depth - 1)};
  } else {
    f->kind = k == 6 ? tk::FormulaKind::forall : tk::FormulaKind::exists;
    f->terms = {vars[rng() % 3]};
    if (rng() % 2) f->p = 0.5 * (1 + rng() % 12);
    f->operands = {random_formula(rng, depth - 1)};
  }
  return f;
}

TEST(Parser, PrintParseRoundTripsRandomFormulas) {
  std::mt19937 rng(4);
  for (int i = 0; i < 500; ++i) {
    auto f = random_formula(rng, 5);
    std::string text = tk::print(*f);
    auto back = tk::parse_formula(text);
    ASSERT_TRUE(tk::same_formula(*f, *back)) << text << "\nreparsed: " << tk::print(*back);
    EXPECT_EQ(tk::print(*back), text);
  }
}

void expect_error(const std::string& text, std::uint32_t line, std::uint32_t column, const std::string& what) {
  try {
    tk::parse_formula(text, "kb.logic");
    ADD_FAILURE() << "no error for: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kb.logic:"), std::string::npos) << e.what();
  }
}

TEST(Parser, ErrorsGiveLineColumnAndWhatWasExpected) {
  expect_error("forall x R(x)", 1, 10, "expected ',' or ':', got 'R'");
  expect_error("R(x) &", 1, 7, "expected a formula");
  expect_error("R(x,)", 1, 5, "expected a name, got ')'");
  expect_error("forall x:\n  R(x) & & S(x)", 2, 10, "expected a formula");
  expect_error("R(x) S(x)", 1, 6, "expected an operator");
  expect_error("(R(x)", 1, 6, "expected ')'");
  expect_error("", 1, 1, "expected a formula");
  expect_error("forall: R(x)", 1, 7, "expected a name");
  expect_error("exists[q=2] x: R(x)", 1, 8, "expected 'p'");
  expect_error(std::string(300, '(') + "R(x)" + std::string(300, ')'), 1, 201, "nested deeper");
  expect_error(std::string(5000, '~') + "R(x)", 1, 201, "nested deeper");
}

// ---- grounding ---------------------------------------------------------------------------

struct World {
  Graph g;
  Tensor e = g.input("e", f64, {5, 2});  // five individuals with two features
  Tensor w = g.input("w", f64, {4});
  tk::Bindings b;
  World() {
    // R(a, b) = sigmoid(w . [a, b]); P(a) = sigmoid(a0 - a1)
    Tensor wv = w;
    b.predicates["R"] = [wv](const std::vector<Tensor>& args) {
      return Tensor(sigmoid(matmul(concat({args[0], args[1]}, 1), reshape(wv, {4, 1})))).reshape({-1});
    };
    b.predicates["P"] = [](const std::vector<Tensor>& args) {
      Tensor a = args[0];
      return Tensor(sigmoid(slice(a, 1, 0, 1) - slice(a, 1, 1, 2)));  // [N, 1] is accepted
    };
    b.predicates["Bad"] = [](const std::vector<Tensor>& args) { return args[0]; };  // [N, 2]: not truths
    for (const char* v : {"x", "y", "z"}) b.domains[v] = e;
  }
  Array E() const { return Array::from_vector<double>({5, 2}, {0.1, -0.4, 0.8, 0.3, -0.5, 0.9, 0.2, 0.2, -0.7, -0.1}); }
  Array W() const { return Array::from_vector<double>({4}, {0.7, -1.1, 0.4, 0.9}); }
};

TEST(Grounding, TransitivityTextEqualsTheAxiomHelperAndTheOperators) {
  World wd;
  tk::Truth text = tk::ground("forall x, y, z: R(x, y) & R(y, z) -> R(x, z)", wd.b);
  // R over every pair, densely, then the helper and the hand-written operator form.
  tk::Truth r(tk::ground("forall x: R(x, x)", wd.b));  // (only to use ground twice)
  std::vector<Tensor> rows{reshape(broadcast_to(reshape(wd.e, {5, 1, 2}), {5, 5, 2}), {25, 2}),
                           reshape(broadcast_to(reshape(wd.e, {1, 5, 2}), {5, 5, 2}), {25, 2})};
  tk::Truth dense(reshape(wd.b.predicates["R"](rows), {5, 5}));
  tk::Truth helper = tk::transitivity(dense);
  tk::Truth xy(reshape(dense.tensor(), {5, 5, 1})), yz(reshape(dense.tensor(), {1, 5, 5})),
      xz(reshape(dense.tensor(), {5, 1, 5}));
  tk::Truth by_hand = tk::forall((xy & yz) >> xz);
  auto res = compile(wd.g, {text.tensor(), helper.tensor(), by_hand.tensor(), r.tensor()})
                 .run({{"e", wd.E()}, {"w", wd.W()}});
  EXPECT_EQ(text.tensor().rank(), 0);
  EXPECT_NEAR(res[0].item(), res[1].item(), 1e-15);
  EXPECT_NEAR(res[0].item(), res[2].item(), 1e-15);
  EXPECT_GT(res[0].item(), 0);
  EXPECT_LT(res[0].item(), 1);
}

TEST(Grounding, AtomsAreEvaluatedOnTheirOwnVariablesInAnyArgumentOrder) {
  World wd;
  // forall x, y: R(y, x) must equal forall over the transposed dense relation; P(x) with an
  // extra quantified y that it does not depend on keeps its value.
  tk::Truth a = tk::ground("forall x, y: R(y, x)", wd.b);
  tk::Truth b = tk::ground("forall x, y: R(x, y)", wd.b);  // the same set of pairs
  tk::Truth c = tk::ground("forall x: exists y: P(x) | R(x, y)", wd.b);
  tk::Truth d = tk::ground("forall[p=4] x: P(x)", wd.b);
  tk::Truth e = tk::ground("forall x: R(x, x)", wd.b);
  std::vector<Tensor> rows{reshape(broadcast_to(reshape(wd.e, {5, 1, 2}), {5, 5, 2}), {25, 2}),
                           reshape(broadcast_to(reshape(wd.e, {1, 5, 2}), {5, 5, 2}), {25, 2})};
  Tensor dense = reshape(wd.b.predicates["R"](rows), {5, 5});
  Tensor p = reshape(wd.b.predicates["P"]({wd.e}), {5});
  Tensor c_ref = tk::pmean_error(tk::pmean(tk::or_prob_sum(reshape(p, {5, 1}), dense), {1}));
  Tensor d_ref = tk::pmean_error(p, {}, 4);
  Tensor e_ref = tk::pmean_error(sum(dense * wd.g.eye(5, 5, f64), 1));
  auto res = compile(wd.g, {a.tensor(), b.tensor(), c.tensor(), c_ref, d.tensor(), d_ref, e.tensor(), e_ref})
                 .run({{"e", wd.E()}, {"w", wd.W()}});
  EXPECT_NEAR(res[0].item(), res[1].item(), 1e-15);
  EXPECT_NEAR(res[2].item(), res[3].item(), 1e-15);
  EXPECT_NEAR(res[4].item(), res[5].item(), 1e-15);
  EXPECT_NEAR(res[6].item(), res[7].item(), 1e-15);
}

TEST(Grounding, ConstantsAndGradients) {
  World wd;
  wd.b.constants["alice"] = reshape(slice(wd.e, 0, 0, 1), {2});
  tk::Truth t = tk::ground("forall y: R(alice, y) -> ~R(y, alice)", wd.b);
  auto [dw] = grad(t.tensor(), {wd.w});
  auto res = compile(wd.g, {t.tensor(), dw}).run({{"e", wd.E()}, {"w", wd.W()}});
  EXPECT_GT(res[0].item(), 0);
  auto r = mg::testing::check_gradients(t.tensor().value(), {wd.e.value(), wd.w.value()}, {wd.E(), wd.W()}, 2, 1e-6, 9);
  EXPECT_TRUE(r.ok) << r.report;
}

void expect_ground_error(const std::string& text, std::uint32_t column, const std::string& what) {
  World wd;
  try {
    tk::ground(text, wd.b);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test_formula.cpp"), std::string::npos) << e.what();  // the ground() call
  }
}

TEST(Grounding, ErrorsNameTheFormulaPositionAndTheCall) {
  expect_ground_error("forall x: Q(x)", 11, "unknown predicate 'Q'");
  expect_ground_error("forall x: R(x, w)", 11, "'w' in R(...) is neither a quantified variable nor a constant");
  expect_ground_error("forall q: P(q)", 1, "no domain for variable 'q'");
  expect_ground_error("forall x, x: P(x)", 1, "bound twice");
  expect_ground_error("forall x: exists[p=0.5] y: R(x, y)", 11, "exponent p >= 1");
  expect_ground_error("forall x: P(x) & Bad(x)", 18, "predicate 'Bad' returned f64[5,2], expected [5] truths");
  expect_ground_error("forall x: R(x, x", 17, "expected ',' or ')'");  // syntax errors name the call too
}

}  // namespace

namespace {

// The README's TARKA snippet, run (the readme test only compiles it).
TEST(Readme, SnippetRunsAndGivesTruths) {
  using namespace mg::frontier;
  mg::Graph g;
  mg::Tensor emb = g.input("emb", mg::f32, {10, 4});
  mg::Tensor w = g.input("w", mg::f32, {8, 1});
  auto R = [w](const std::vector<mg::Tensor>& a) {
    return mg::Tensor(mg::sigmoid(mg::matmul(mg::concat({a[0], a[1]}, 1), w))).reshape({-1});
  };
  tarka::Truth p(mg::sigmoid(emb.sum(1)));
  tarka::Truth q(mg::sigmoid(emb.mean(1)));
  tarka::Truth some = tarka::exists(p & ~q);
  tarka::Truth all = tarka::forall(p >> q);
  tarka::Bindings kb;
  kb.predicates["R"] = R;
  for (const char* v : {"x", "y", "z"}) kb.domains[v] = emb;
  tarka::Truth trans = tarka::ground("forall x, y, z: R(x, y) & R(y, z) -> R(x, z)", kb);
  tarka::Truth asym = tarka::ground("forall x, y: R(x, y) -> ~R(y, x)", kb);
  mg::Tensor loss = tarka::SemanticLoss{}({trans, asym, all});
  auto [dw] = mg::grad(loss, {w});
  std::vector<float> e(40), wv(8);
  for (int i = 0; i < 40; ++i) e[i] = static_cast<float>(std::sin(i * 0.7));
  for (int i = 0; i < 8; ++i) wv[i] = static_cast<float>(std::cos(i * 1.3));
  auto out = mg::compile(g, {some.tensor(), loss, dw})
                 .run({{"emb", mg::Array::from_vector<float>({10, 4}, e)}, {"w", mg::Array::from_vector<float>({8, 1}, wv)}});
  EXPECT_GT(out[0].item(), 0);
  EXPECT_LT(out[0].item(), 1);
  EXPECT_GT(out[1].item(), 0);
  EXPECT_LT(out[1].item(), 1);
  EXPECT_EQ(out[2].numel(), 8);
  EXPECT_TRUE(std::isfinite(out[2].at(0)));
}

}  // namespace

namespace {

// A grounded knowledge base and its gradients: the C99 backend agrees with the interpreter.
TEST(Grounding, C99AgreesWithTheInterpreter) {
  World wd;
  wd.b.logic = {.implication = tk::Implication::goguen, .p_forall = 3};
  std::vector<tk::Truth> kb{tk::ground("forall x, y, z: R(x, y) & R(y, z) -> R(x, z)", wd.b),
                            tk::ground("forall x: exists y: P(x) <-> R(x, y)", wd.b),
                            tk::ground("forall x, y: ~(R(x, y) & R(y, x)) | P(y)", wd.b)};
  Tensor loss = tk::SemanticLoss{}(kb);
  auto [de, dw] = grad(loss, {wd.e, wd.w});
  std::vector<Feed> feeds{{"e", wd.E()}, {"w", wd.W()}};
  auto a = compile(wd.g, {loss, de, dw}, Backend::interpreter).run(feeds);
  auto b = compile(wd.g, {loss, de, dw}, Backend::c99).run(feeds);
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i) EXPECT_NEAR(a[k].at(i), b[k].at(i), 1e-12) << "output " << k;
  EXPECT_GT(a[0].item(), 0);
}

}  // namespace
