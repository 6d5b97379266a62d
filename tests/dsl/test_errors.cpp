// Errors a user can make while building or running a graph: each is a UserError subtype
// whose message names the op, what was expected, the types involved and the USER's
// file:line (this file), never a library line.
#include <gtest/gtest.h>

#include <functional>

#include <minigrad/minigrad.hpp>

namespace mg {
namespace {

// Runs `f`, expects an exception of type E whose message contains every `needle` and
// this file's name with `line`.
template <class E>
void expect_error(const std::function<void()>& f, int line, std::vector<std::string> needles) {
  try {
    f();
    FAIL() << "no exception";
  } catch (const E& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("test_errors.cpp:" + std::to_string(line)), std::string::npos) << m;
    for (auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "missing '" << n << "' in: " << m;
  } catch (const std::exception& e) {
    FAIL() << "wrong exception type: " << e.what();
  }
}

TEST(Errors, BroadcastMismatchNamesOpTypesAndLine) {
  Graph g;
  Tensor a = g.input("a", f64, {3, 4});
  Tensor b = g.input("b", f64, {5});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor c2 = a + b;
  }, __LINE__ - 1, {"'add'", "f64[3,4]", "f64[5]", "broadcast"});
}

TEST(Errors, DtypeMismatch) {
  Graph g;
  Tensor a = g.input("a", f64, {3});
  Tensor b = g.input("b", f32, {3});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor c2 = a * b;
  }, __LINE__ - 1, {"'mul'", "f64[3]", "f32[3]", "cast"});
}

TEST(Errors, ExpressionUsedByAReductionReportsThatLine) {
  Graph g;
  Tensor a = g.input("a", f64, {3});
  Tensor b = g.input("b", f64, {2});
  expect_error<ShapeError>([&] {
    (a - b).sum();
  }, __LINE__ - 1, {"'sub'"});
}

TEST(Errors, MatmulInnerDimensions) {
  Graph g;
  Tensor a = g.input("a", f64, {3, 4});
  Tensor b = g.input("b", f64, {5, 2});
  expect_error<ShapeError>([&] {
    matmul(a, b);
  }, __LINE__ - 1, {"'matmul'", "f64[3,4] @ f64[5,2]", "inner"});
}

TEST(Errors, BadAxes) {
  Graph g;
  Tensor a = g.input("a", f64, {3, 4});
  expect_error<ShapeError>([&] {
    a.sum(2);
  }, __LINE__ - 1, {"'reduce_sum'", "axis 2", "rank 2"});
  expect_error<ShapeError>([&] {
    softmax(a, -3);
  }, __LINE__ - 1, {"'softmax'"});
  expect_error<ShapeError>([&] {
    a.sum({0, 0});
  }, __LINE__ - 1, {"repeated"});
}

TEST(Errors, BadReshapeAndSqueeze) {
  Graph g;
  Tensor a = g.input("a", f64, {3, 4});
  expect_error<ShapeError>([&] {
    a.reshape({5, -1});
  }, __LINE__ - 1, {"'reshape'", "f64[3,4]"});
  expect_error<ShapeError>([&] {
    a.squeeze(0);
  }, __LINE__ - 1, {"'squeeze'", "size 1"});
}

TEST(Errors, WrongDtypeForOp) {
  Graph g;
  Tensor i = g.input("i", i64, {3});
  Tensor m = g.input("m", boolean, {3});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor e = exp(i);
  }, __LINE__ - 1, {"'exp'", "float", "i64[3]"});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor e = i * 0.5;
  }, __LINE__ - 1, {"'mul'", "i64"});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor e = where(i, i, i);
  }, __LINE__ - 1, {"'where'", "bool"});
  Tensor ok = where(m, i, 0);
  EXPECT_EQ(ok.dtype(), i64);
}

TEST(Errors, GradWithRespectToInteger) {
  Graph g;
  Tensor i = g.input("steps", i64, {3});
  Tensor y = cast(i, f64).sum();
  expect_error<GradError>([&] {
    grad(y, {i});
  }, __LINE__ - 1, {"steps", "i64[3]", "f32/f64"});
}

TEST(Errors, RunWithWrongInputs) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 2});
  Executable exe = compile(g, {exp(x)});
  try {
    exe.run({{"x", Array::zeros(Type{f64, {2, 3}})}});
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("input 'x'"), std::string::npos) << m;
    EXPECT_NE(m.find("expected f64[2,2], got f64[2,3]"), std::string::npos) << m;
  }
  EXPECT_THROW(exe.run({{"y", Array::zeros(Type{f64, {2, 2}})}}), UserError);
}

TEST(Errors, MixingGraphs) {
  Graph g1, g2;
  Tensor a = g1.input("a", f64, {2});
  Tensor b = g2.input("b", f64, {2});
  expect_error<ShapeError>([&] {
    [[maybe_unused]] Tensor c2 = a + b;
  }, __LINE__ - 1, {"different graphs"});
}

}  // namespace
}  // namespace mg
