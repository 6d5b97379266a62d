// Arrays as users meet them: printing (NumPy/PyTorch style, summarised when large, with a
// dtype/shape trailer), item() and bounds-checked N-d element access.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg {
namespace {

template <class T>
std::string printed(const T& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

TEST(ArrayPrint, MatrixOfIntegralFloats) {
  Array a = Array::from<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(printed(a), "array([[1., 2.],\n       [3., 4.]], dtype=f32, shape=[2, 2])");
}

TEST(ArrayPrint, FixedPointFloatsRightAligned) {
  Array a = Array::from<double>({3}, {0.5, -12.25, 3});
  EXPECT_EQ(printed(a), "array([  0.5000, -12.2500,   3.0000], dtype=f64, shape=[3])");
}

TEST(ArrayPrint, ScientificWhenMagnitudesSpanMoreThanAThousand) {
  Array a = Array::from<double>({2}, {1e-5, 1.0});
  EXPECT_EQ(printed(a), "array([1.0000e-05, 1.0000e+00], dtype=f64, shape=[2])");
}

TEST(ArrayPrint, NonFiniteValues) {
  Array a = Array::from<double>({3}, {1.5, NAN, -INFINITY});
  EXPECT_EQ(printed(a), "array([1.5000,    nan,   -inf], dtype=f64, shape=[3])");
}

TEST(ArrayPrint, IntegersAndBools) {
  EXPECT_EQ(printed(Array::from<std::int64_t>({2, 2}, {1, -20, 300, 4})),
            "array([[  1, -20],\n       [300,   4]], dtype=i64, shape=[2, 2])");
  EXPECT_EQ(printed(Array::from<bool>({2}, {true, false})), "array([ true, false], dtype=bool, shape=[2])");
}

TEST(ArrayPrint, ScalarsAndEmptyArrays) {
  EXPECT_EQ(printed(Array::scalar(f64, 3.5)), "array(3.5000, dtype=f64, shape=[])");
  EXPECT_EQ(printed(Array::scalar(f32, 2)), "array(2., dtype=f32, shape=[])");
  EXPECT_EQ(printed(Array::scalar(i64, -7)), "array(-7, dtype=i64, shape=[])");
  EXPECT_EQ(printed(Array::zeros(Type{f32, {0, 3}})), "array([], dtype=f32, shape=[0, 3])");
}

TEST(ArrayPrint, ThreeAxesSeparateBlocksWithABlankLine) {
  Array a = Array::from<std::int64_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(printed(a),
            "array([[[0, 1],\n"
            "        [2, 3]],\n"
            "\n"
            "       [[4, 5],\n"
            "        [6, 7]]], dtype=i64, shape=[2, 2, 2])");
}

TEST(ArrayPrint, LargeArraysAreSummarisedPerAxis) {
  std::vector<std::int64_t> v(2000);
  std::iota(v.begin(), v.end(), 0);
  EXPECT_EQ(printed(Array::from_vector<std::int64_t>({2000}, v)),
            "array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=i64, shape=[2000])");
  // 1000 elements is not summarised; 1001 is.
  EXPECT_EQ(printed(Array::zeros(Type{i64, {1000}})).find("..."), std::string::npos);
  EXPECT_NE(printed(Array::zeros(Type{i64, {1001}})).find("..."), std::string::npos);

  Array m(Type{f64, {100, 100}});
  for (std::int64_t i = 0; i < m.numel(); ++i) m.set(i, static_cast<double>(i));
  auto lines = lines_of(printed(m));
  ASSERT_EQ(lines.size(), 7u) << printed(m);
  EXPECT_EQ(lines[0], "array([[   0.,    1.,    2., ...,   97.,   98.,   99.],");
  EXPECT_EQ(lines[1], "       [ 100.,  101.,  102., ...,  197.,  198.,  199.],");
  EXPECT_EQ(lines[3], "       ...,");
  EXPECT_EQ(lines[6], "       [9900., 9901., 9902., ..., 9997., 9998., 9999.]], dtype=f64, shape=[100, 100])");
}

TEST(ArrayPrint, LongRowsWrapAtEightyColumns) {
  Array a(Type{f64, {30}});
  for (std::int64_t i = 0; i < 30; ++i) a.set(i, i + 0.5);
  auto lines = lines_of(printed(a));
  ASSERT_GT(lines.size(), 1u);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) EXPECT_LE(lines[i].size(), 80u) << lines[i];
  for (std::size_t i = 1; i < lines.size(); ++i)  // continuation lines align under the first element
    EXPECT_EQ(lines[i].substr(0, 7), "       ") << lines[i];
  EXPECT_EQ(lines[0].rfind("array([ 0.5000,  1.5000,", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "        8.5000,  9.5000, 10.5000, 11.5000, 12.5000, 13.5000, 14.5000, 15.5000,");
}

TEST(ArrayPrint, TheStreamsFormatFlagsPlayNoPart) {
  std::ostringstream os;
  os.precision(2);
  os << std::scientific << Array::from<double>({2}, {0.5, 1.25});
  EXPECT_EQ(os.str(), "array([0.5000, 1.2500], dtype=f64, shape=[2])");
}

TEST(ArrayPrint, AListOfArraysPrintsEach) {
  std::vector<Array> out{Array::scalar(f32, 1), Array::from<float>({2, 2}, {1, 2, 3, 4})};
  EXPECT_EQ(printed(out),
            "[array(1., dtype=f32, shape=[]),\n"
            " array([[1., 2.],\n"
            "        [3., 4.]], dtype=f32, shape=[2, 2])]");
  EXPECT_EQ(printed(std::vector<Array>{}), "[]");
}

TEST(ArrayItem, OneElementArraysOnly) {
  EXPECT_EQ(Array::scalar(f64, 2.5).item(), 2.5);
  EXPECT_EQ(Array::from<std::int64_t>({1, 1}, {7}).item(), 7);
  EXPECT_EQ(Array::from<bool>({1}, {true}).item(), 1);
  try {
    (void)Array::zeros(Type{f32, {2, 3}}).item();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("f32[2,3]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("6 elements"), std::string::npos) << e.what();
  }
}

TEST(ArrayAt, NdIndexWithNegativeIndices) {
  Array a = Array::from<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(a.at({0, 0}), 1);
  EXPECT_EQ(a.at({1, 2}), 6);
  EXPECT_EQ(a.at({-1, 0}), 4);
  EXPECT_EQ(a.at({0, -1}), 3);
  EXPECT_EQ(a.at({-2, -3}), 1);
  std::vector<std::int64_t> idx{1, 1};
  EXPECT_EQ(a.at(idx), 5);
  EXPECT_EQ(Array::scalar(i64, 9).at({}), 9);
  EXPECT_EQ(a.at(4), 5);  // the flat overload is unchanged
  Array t = Array::from<std::int64_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(t.at({1, 0, 1}), 5);
}

TEST(ArrayAt, OutOfRangeAndWrongRankAreUserErrorsNamingIndexAndShape) {
  Array a = Array::from<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto message = [&](std::initializer_list<std::int64_t> idx) -> std::string {
    try {
      (void)a.at(idx);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  std::string m = message({2, 0});
  EXPECT_NE(m.find("index [2, 0]"), std::string::npos) << m;
  EXPECT_NE(m.find("f64[2,3]"), std::string::npos) << m;
  EXPECT_NE(m.find("axis 0 of size 2"), std::string::npos) << m;
  m = message({0, -4});
  EXPECT_NE(m.find("index [0, -4]"), std::string::npos) << m;
  EXPECT_NE(m.find("axis 1 of size 3"), std::string::npos) << m;
  m = message({1});
  EXPECT_NE(m.find("index [1]"), std::string::npos) << m;
  EXPECT_NE(m.find("needs 2 indices, got 1"), std::string::npos) << m;
}

}  // namespace
}  // namespace mg
