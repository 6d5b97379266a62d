// i64 arithmetic wraps modulo 2^64 in both executors (signed overflow is undefined in C++
// and C; the kernels compute through uint64): the interpreter, the C99 backend and the
// two's-complement definition agree at INT64_MIN / INT64_MAX.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using i64 = std::int64_t;
using u64 = std::uint64_t;

TEST(IntWrap, InterpreterAndC99AgreeAtTheLimits) {
  constexpr i64 lo = std::numeric_limits<i64>::min(), hi = std::numeric_limits<i64>::max();
  const std::vector<i64> av{lo, hi, -1, 3037000500, lo, 7, hi};
  const std::vector<i64> bv{-1, 1, lo, 3037000500, lo, -9, hi};
  const i64 n = static_cast<i64>(av.size());
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{DType::i64, {n}}), b = g.add_input("b", Type{DType::i64, {n}});
  std::vector<ir::NodeId> outs = {ir::add(a, b).id,        ir::binary("sub", a, b).id, ir::mul(a, b).id,
                                  ir::unary("neg", a).id,  ir::unary("abs", a).id,     ir::unary("square", a).id};
  auto wrap = [](u64 v) { return static_cast<i64>(v); };
  std::vector<std::vector<i64>> want(outs.size());
  for (i64 i = 0; i < n; ++i) {
    const u64 x = static_cast<u64>(av[i]), y = static_cast<u64>(bv[i]);
    want[0].push_back(wrap(x + y));
    want[1].push_back(wrap(x - y));
    want[2].push_back(wrap(x * y));
    want[3].push_back(wrap(0 - x));
    want[4].push_back(av[i] < 0 ? wrap(0 - x) : av[i]);
    want[5].push_back(wrap(x * x));
  }
  rt::Bindings in;
  Array A(Type{DType::i64, {n}}), B(Type{DType::i64, {n}});
  for (i64 i = 0; i < n; ++i) A.data<i64>()[i] = av[i], B.data<i64>()[i] = bv[i];
  in.emplace("a", A);
  in.emplace("b", B);
  for (rt::Backend backend : {rt::Backend::interpreter, rt::Backend::c99}) {
    auto got = rt::compile(g, outs, {}, backend).run(in);
    for (std::size_t k = 0; k < outs.size(); ++k)
      for (i64 i = 0; i < n; ++i)
        EXPECT_EQ(got[k].data<i64>()[i], want[k][i])
            << g.node(outs[k]).op_name() << " at " << i << (backend == rt::Backend::c99 ? " (C99)" : " (interpreter)");
  }
}

}  // namespace
}  // namespace mg
