// Strided reduction kernels for the reduce family (reduce.cpp, softmax.cpp). Any set of
// reduced axes is viewed, without copying, as outputs (output offsets x a contiguous kept
// run `inner`) times reduced rows (row offsets x a contiguous reduced run `run`), so the
// innermost loop is always contiguous. Deterministic: how work is split depends on shapes
// only, never on the thread count. Light: no xtensor.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/attrs.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::ir::kernels {

inline constexpr std::int64_t kReduceBlock = 128;        // kept elements per tile
inline constexpr std::int64_t kReduceParallel = 1 << 15;  // elements before OpenMP pays
inline constexpr std::int64_t kSplitChunk = 1 << 14;      // reduced elements per partial fold
inline constexpr std::int64_t kMaxSplit = 64;

// Offsets of a row-major walk over some (size, stride) dims: i * stride for at most one
// dim, else listed.
struct Offsets {
  std::int64_t count = 1, stride = 0;
  std::vector<std::int64_t> list;
  std::int64_t operator[](std::int64_t i) const {
    return list.empty() ? i * stride : list[static_cast<std::size_t>(i)];
  }
};

struct DimRun {
  std::int64_t size, stride;
};

inline Offsets walk(const std::vector<DimRun>& dims) {
  Offsets o;
  if (dims.empty()) return o;
  if (dims.size() == 1) return {dims[0].size, dims[0].stride, {}};
  for (auto& d : dims) o.count *= d.size;
  o.list.resize(static_cast<std::size_t>(o.count));
  std::vector<std::int64_t> idx(dims.size(), 0);
  std::int64_t off = 0;
  for (std::int64_t k = 0; k < o.count; ++k) {
    o.list[static_cast<std::size_t>(k)] = off;
    for (std::size_t d = dims.size(); d-- > 0;) {
      off += dims[d].stride;
      if (++idx[d] < dims[d].size) break;
      off -= dims[d].stride * dims[d].size;
      idx[d] = 0;
    }
  }
  return o;
}

// x reduced over some axes: output j = o * inner + i (o < outs.count, i < inner) folds
// x[outs[o] + rows[r] + l + i] over r < rows.count, l < run. `inner` and `run` are the
// innermost dim group (kept or reduced), so at most one of them exceeds 1. Outputs are in
// row-major order of the kept dims, which is the layout of the result.
struct ReduceView {
  Offsets outs, rows;
  std::int64_t inner = 1, run = 1;
  bool empty = false;  // x has no elements: every output folds nothing (offsets unused)
  std::int64_t num_out() const { return outs.count * inner; }
  std::int64_t num_reduced() const { return rows.count * run; }
};

// `axes` normalised (sorted, unique, in range). Size-1 dims are dropped and neighbouring
// dims of the same kind merged before the view is built.
inline ReduceView view_reduction(const Shape& shape, const I64List& axes) {
  std::vector<bool> red(shape.size(), false);
  for (auto a : axes) red[static_cast<std::size_t>(a)] = true;
  ReduceView v;
  if (numel(shape) == 0) {
    v.empty = true;
    for (std::size_t d = 0; d < shape.size(); ++d) (red[d] ? v.rows.count : v.outs.count) *= shape[d];
    return v;
  }
  struct Group {
    DimRun dim;
    bool reduced;
  };
  std::vector<Group> groups;
  const auto strides = strides_of(shape);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == red[d]) {
      groups.back().dim = {groups.back().dim.size * shape[d], strides[d]};
    } else {
      groups.push_back({{shape[d], strides[d]}, red[d]});
    }
  }
  if (!groups.empty()) {
    (groups.back().reduced ? v.run : v.inner) = groups.back().dim.size;
    groups.pop_back();
  }
  std::vector<DimRun> kept, reduced;
  for (auto& g : groups) (g.reduced ? reduced : kept).push_back(g.dim);
  v.outs = walk(kept);
  v.rows = walk(reduced);
  return v;
}

// Accumulator type: f64 for floats (f32 sums accumulate in double), i64 for i64.
template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, T>;

// i64 arithmetic wraps (two's complement) instead of overflowing.
template <class A>
A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else
    return a + b;
}
template <class A>
A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else
    return a * b;
}

// Reducers: init, step (fold one value in), combine (merge two partial folds).
template <class A>
struct SumOp {
  using Acc = A;
  static A init() { return A(0); }
  static A step(A a, A x) { return wrap_add(a, x); }
  static A combine(A a, A b) { return wrap_add(a, b); }
};
template <class A>
struct ProdOp {
  using Acc = A;
  static A init() { return A(1); }
  static A step(A a, A x) { return wrap_mul(a, x); }
  static A combine(A a, A b) { return wrap_mul(a, b); }
};
template <class A>
struct MaxOp {  // NaN propagates
  using Acc = A;
  static A init() {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  static A step(A a, A x) { return ((x > a) | (x != x)) ? x : a; }  // | vectorises
  static A combine(A a, A b) { return step(a, b); }
};
template <class A>
struct MinOp {  // NaN propagates
  using Acc = A;
  static A init() {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  static A step(A a, A x) { return ((x < a) | (x != x)) ? x : a; }
  static A combine(A a, A b) { return step(a, b); }
};
template <class A>
struct SumSquaresOp {
  using Acc = A;
  static A init() { return A(0); }
  static A step(A a, A x) { return a + x * x; }
  static A combine(A a, A b) { return a + b; }
};
// Sums map(x): Map::apply(A* v, n) rewrites a block of (shifted) values in place, so a
// transcendental can run vectorised over a buffer instead of one call per element.
template <class A, class Map>
struct MapSumOp {
  using Acc = A;
  static A init() { return A(0); }
  static A step(A a, A x) { return a + x; }
  static A combine(A a, A b) { return a + b; }
  static void map(A* v, std::int64_t n) { Map::apply(v, n); }
};
template <class R>
concept MappedReducer = requires(typename R::Acc* v) { R::map(v, std::int64_t{}); };

namespace detail {

// The value folded for element x of an output whose center is c.
template <bool Centered, class A, class T>
A shifted(T x, A c) {
  if constexpr (Centered) return static_cast<A>(x) - c;
  else return static_cast<A>(x);
}

}  // namespace detail

inline constexpr std::int64_t kMapBlock = 256;
inline constexpr int kFoldLanes = 16;  // fold_run's lanes (fused_reduce.cpp keeps each element's)

// Folds the n contiguous elements at p (each shifted by -c when Centered) into acc, in 16
// independent lanes: vectorisable, and a shorter dependency chain for sums (two vectors
// of doubles at AVX-512: a conv bias gradient's runs of 784 floats summed in 0.7 of the
// time 8 lanes took; 32 lanes were slower). A mapped reducer maps blocks of values first.
template <class R, bool Centered, class T>
typename R::Acc fold_run(typename R::Acc acc, const T* p, std::int64_t n, typename R::Acc c) {
  using A = typename R::Acc;
  if constexpr (MappedReducer<R>) {
    A buf[kMapBlock];
    for (std::int64_t i0 = 0; i0 < n; i0 += kMapBlock) {
      const std::int64_t len = std::min(kMapBlock, n - i0);
      for (std::int64_t i = 0; i < len; ++i) buf[i] = detail::shifted<Centered>(p[i0 + i], c);
      R::map(buf, len);
      acc = fold_run<SumOp<A>, false>(acc, buf, len, A(0));
    }
    return acc;
  }
  constexpr int kLanes = kFoldLanes;
  std::int64_t i = 0;
  if (n >= 2 * kLanes) {
    A lane[kLanes];
    for (auto& l : lane) l = R::init();
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] = R::step(lane[j], detail::shifted<Centered>(p[i + j], c));
    for (auto l : lane) acc = R::combine(acc, l);
  }
  for (; i < n; ++i) acc = R::step(acc, detail::shifted<Centered>(p[i], c));
  return acc;
}

// out[j] = fin(fold of R over the reduced elements of output j, c_j) for every output j of
// `v`. Centered: each element is first shifted by -c_j, c_j = center[j] (else c_j = 0).
template <class R, bool Centered = false, class T, class Out, class Fin>
void fold(const T* x, const ReduceView& v, const typename R::Acc* center, Out* out, Fin fin) {
  using A = typename R::Acc;
  const std::int64_t n_out = v.num_out(), n_red = v.num_reduced();
  auto center_of = [center](std::int64_t j) {
    if constexpr (Centered) return center[j];
    else return A(0);
  };
  if (v.empty) {
    for (std::int64_t j = 0; j < n_out; ++j) out[j] = fin(R::init(), center_of(j));
    return;
  }
  const bool par = n_out * n_red >= kReduceParallel;
  if (v.inner == 1) {
    // Few outputs with long folds (a full reduction): split each fold into segments.
    const std::int64_t split =
        par && n_out < kMaxSplit ? std::clamp<std::int64_t>(n_red / kSplitChunk, 1, kMaxSplit) : 1;
    // Folds the reduced elements [k0, k1) of output o.
    auto segment = [&](std::int64_t o, std::int64_t k0, std::int64_t k1) {
      A acc = R::init();
      const T* base = x + v.outs[o];
      const A c = center_of(o);
      for (std::int64_t k = k0; k < k1;) {
        const std::int64_t r = k / v.run, l = k % v.run, len = std::min(v.run - l, k1 - k);
        acc = fold_run<R, Centered>(acc, base + v.rows[r] + l, len, c);
        k += len;
      }
      return acc;
    };
    if (split == 1) {
#pragma omp parallel for schedule(static) if (par)
      for (std::int64_t o = 0; o < n_out; ++o) out[o] = fin(segment(o, 0, n_red), center_of(o));
      return;
    }
    std::vector<A> part(static_cast<std::size_t>(n_out * split));
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < n_out * split; ++t) {
      const std::int64_t o = t / split, s = t % split;
      part[static_cast<std::size_t>(t)] = segment(o, n_red * s / split, n_red * (s + 1) / split);
    }
    for (std::int64_t o = 0; o < n_out; ++o) {
      A acc = part[static_cast<std::size_t>(o * split)];
      for (std::int64_t s = 1; s < split; ++s)
        acc = R::combine(acc, part[static_cast<std::size_t>(o * split + s)]);
      out[o] = fin(acc, center_of(o));
    }
    return;
  }
  // inner > 1 (so run == 1): a tile is kReduceBlock contiguous outputs; every reduced row
  // adds one contiguous block to it.
  const std::int64_t nblocks = (v.inner + kReduceBlock - 1) / kReduceBlock;
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t t = 0; t < v.outs.count * nblocks; ++t) {
    const std::int64_t o = t / nblocks, i0 = (t % nblocks) * kReduceBlock;
    const std::int64_t len = std::min(kReduceBlock, v.inner - i0), j0 = o * v.inner + i0;
    A acc[kReduceBlock], c[kReduceBlock];
    for (std::int64_t i = 0; i < len; ++i) {
      acc[i] = R::init();
      c[i] = center_of(j0 + i);
    }
    const T* base = x + v.outs[o] + i0;
    for (std::int64_t r = 0; r < v.rows.count; ++r) {
      const T* p = base + v.rows[r];
      if constexpr (MappedReducer<R>) {
        A buf[kReduceBlock];
        for (std::int64_t i = 0; i < len; ++i) buf[i] = detail::shifted<Centered>(p[i], c[i]);
        R::map(buf, len);
        for (std::int64_t i = 0; i < len; ++i) acc[i] = R::step(acc[i], buf[i]);
      } else {
        for (std::int64_t i = 0; i < len; ++i)
          acc[i] = R::step(acc[i], detail::shifted<Centered>(p[i], c[i]));
      }
    }
    for (std::int64_t i = 0; i < len; ++i) out[j0 + i] = fin(acc[i], c[i]);
  }
}

// Calls f(T{}) with T the C++ element type of `t`: f32/f64, and i64 when WithInt.
template <bool WithInt, class F>
void visit_numeric(DType t, const std::string& op, F&& f) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || (WithInt && std::is_same_v<T, std::int64_t>))
      f(T{});
    else
      MG_ASSERT(false, "kernel: unsupported dtype for " + op);
  });
}

}  // namespace mg::ir::kernels
