// Shape (ir/shape.hpp): a std::vector<std::int64_t> interface with inline dims. Every
// operation is compared with std::vector on the same inputs, on both sides of the inline
// capacity, and moves, copies and self-referencing inserts keep their values.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "minigrad/ir/type.hpp"

namespace mg {
namespace {

using Vec = std::vector<std::int64_t>;

Vec iota_vec(std::size_t n) {
  Vec v(n);
  std::iota(v.begin(), v.end(), 1);
  return v;
}

void expect_same(const Shape& s, const Vec& v) {
  ASSERT_EQ(s.size(), v.size());
  EXPECT_TRUE(std::equal(s.begin(), s.end(), v.begin())) << to_string(s);
  EXPECT_EQ(Vec(s), v);
}

TEST(Shape, MatchesVectorOnBothSidesOfTheInlineCapacity) {
  for (std::size_t n = 0; n <= 2 * Shape::kInline + 1; ++n) {
    SCOPED_TRACE(n);
    const Vec v = iota_vec(n);
    Shape s(v.begin(), v.end());
    expect_same(s, v);
    expect_same(Shape(v), v);

    Shape pushed;
    for (auto d : v) pushed.push_back(d);
    expect_same(pushed, v);
    EXPECT_EQ(pushed, s);

    for (std::size_t at = 0; at <= n; ++at) {
      Shape a = s;
      Vec b = v;
      a.insert(a.begin() + static_cast<std::ptrdiff_t>(at), 7);
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), 7);
      expect_same(a, b);
      a.insert(a.begin() + static_cast<std::ptrdiff_t>(at), 3, -1);
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), 3, -1);
      expect_same(a, b);
      a.erase(a.begin() + static_cast<std::ptrdiff_t>(at), a.begin() + static_cast<std::ptrdiff_t>(at + 2));
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + 2));
      expect_same(a, b);
    }
    Shape r = s;
    Vec w = v;
    r.resize(n + 3, 9);
    w.resize(n + 3, 9);
    expect_same(r, w);
    r.resize(n / 2);
    w.resize(n / 2);
    expect_same(r, w);
  }
}

TEST(Shape, SelfInsertCopiesBeforeTheGapOpens) {
  for (std::size_t n : {2u, 4u, 7u}) {
    Shape s(iota_vec(n));
    Vec v = iota_vec(n);
    s.insert(s.begin() + 1, s.begin(), s.end());
    const Vec copy = v;  // vector forbids a range of its own elements
    v.insert(v.begin() + 1, copy.begin(), copy.end());
    expect_same(s, v);
  }
}

TEST(Shape, CopiesAndMovesKeepValuesAndLeaveTheSourceValid) {
  for (std::size_t n : {0u, 3u, 4u, 5u, 12u}) {
    const Vec v = iota_vec(n);
    Shape a(v);
    Shape b = a;
    expect_same(b, v);
    Shape c = std::move(a);
    expect_same(c, v);
    EXPECT_TRUE(a.empty());  // NOLINT: moved-from is empty and reusable
    a.push_back(5);
    expect_same(a, {5});
    Shape d{1, 2, 3, 4, 5, 6};
    d = c;
    expect_same(d, v);
    d = std::move(b);
    expect_same(d, v);
    d = d;  // NOLINT: self-assignment
    expect_same(d, v);
  }
}

TEST(Shape, ComparesLikeVector) {
  EXPECT_EQ((Shape{2, 3}), (Shape{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{2, 3, 1}));
  EXPECT_LT((Shape{2, 3}), (Shape{2, 4}));
  EXPECT_LT((Shape{2, 3}), (Shape{2, 3, 0}));
  EXPECT_EQ((Shape{1, 2, 3, 4, 5, 6}), Shape(Vec{1, 2, 3, 4, 5, 6}));
  EXPECT_THROW((void)Shape({1, 2}).at(2), std::out_of_range);
  EXPECT_EQ(Shape(3, 4), (Shape{4, 4, 4}));
  EXPECT_EQ(Shape(3), (Shape{0, 0, 0}));
}

}  // namespace
}  // namespace mg
