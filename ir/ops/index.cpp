// Index ops: gather / scatter_add, index_select / index_add (each pair is the other's
// VJP), one_hot and cumsum. Attributes arrive normalised (0 <= axis < rank). Index values
// are checked before any element is touched: an out-of-range index is a UserError naming
// the op, the value and the user's line, never undefined behaviour. i64 sums wrap.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

constexpr std::int64_t kInnerChunk = 1 << 12;
constexpr std::int64_t kParallelMin = 1 << 15;

// a + b; integers wrap (two's complement) instead of overflowing into UB.
template <class T>
inline T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else
    return a + b;
}

// Offsets (with `strides`) of every position of dims [lo, hi) of `shape`, row-major.
std::vector<std::int64_t> offsets(const Shape& shape, const std::vector<std::int64_t>& strides,
                                  int lo, int hi) {
  std::vector<std::int64_t> out{0};
  for (int d = lo; d < hi; ++d) {
    std::vector<std::int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(shape[d]));
    for (auto o : out)
      for (std::int64_t c = 0; c < shape[d]; ++c) next.push_back(o + c * strides[d]);
    out = std::move(next);
  }
  return out;
}

std::int64_t prod(const Shape& s, int lo, int hi) {
  std::int64_t n = 1;
  for (int d = lo; d < hi; ++d) n *= s[d];
  return n;
}

// Throws a UserError for the first index outside [0, bound).
// `what` says which dim the index addresses ("along axis 1").
void check_indices(const Node& node, const Array& index, std::int64_t bound, const std::string& what) {
  const std::int64_t* p = index.data<std::int64_t>();
  const std::int64_t n = index.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    if (p[i] >= 0 && p[i] < bound) continue;
    throw UserError(node.op_name() + ": index " + std::to_string(p[i]) + " (at flat position " +
                        std::to_string(i) + ") out of range [0, " + std::to_string(bound) +
                        ") " + what,
                    node.loc);
  }
}

std::string along(std::int64_t axis) { return "along axis " + std::to_string(axis); }

// f(row, i0, i1) over rows x [0, inner) in chunks of the inner range; parallel when big.
// Distinct (row, i) pairs never share an output element in the callers, so no races.
template <class F>
void for_blocks(std::int64_t rows, std::int64_t inner, F f) {
  if (rows == 0 || inner == 0) return;
  const std::int64_t chunks = (inner + kInnerChunk - 1) / kInnerChunk;
  const std::int64_t blocks = rows * chunks;
#pragma omp parallel for schedule(static) if (rows * inner >= kParallelMin && blocks > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t row = b / chunks, c = b % chunks;
    f(row, c * kInnerChunk, std::min(inner, (c + 1) * kInnerChunk));
  }
}

template <class F>
void visit_numeric(const Node& node, DType t, F&& f) {
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::uint8_t>)
      MG_ASSERT(false, node.op_name() + ": unsupported dtype bool");
    else
      f(tag);
  });
}

std::int64_t axis_of(const Attrs& attrs) { return attrs.i64("axis"); }

void require_axis(std::int64_t axis, int rank) {
  require(axis >= 0 && axis < rank, "axis " + std::to_string(axis) + " out of range for rank " +
                                        std::to_string(rank) + " (attributes must be normalised)");
}

// ---- gather / scatter_add ------------------------------------------------------------

// Index of rank(x) whose dims fit x on every axis but `axis`.
void require_fitting_index(const Type& x, const Type& index, std::int64_t axis, const char* what) {
  require(index.dtype == i64, "expects an i64 index");
  require(index.rank() == x.rank(), std::string("expects an index of the same rank as ") + what);
  for (int d = 0; d < x.rank(); ++d)
    require(d == axis || index.shape[d] <= x.shape[d],
            std::string("expects index dims <= ") + what + " dims on every axis but `axis`");
}

Type gather_infer(std::span<const Type> in, const Attrs& attrs) {
  const std::int64_t axis = axis_of(attrs);
  require_axis(axis, in[0].rank());
  require_fitting_index(in[0], in[1], axis, "x");
  return Type{in[0].dtype, in[1].shape};
}

void gather_kernel(const KernelArgs& k) {
  const Array& x = *k.in[0];
  const Array& index = *k.in[1];
  const int axis = static_cast<int>(axis_of(k.node.attrs)), r = x.rank();
  if (k.out.numel() == 0) return;
  check_indices(k.node, index, x.shape()[axis], along(axis));
  const auto xst = strides_of(x.shape());
  const auto outer = offsets(index.shape(), xst, 0, axis);
  const auto inner = offsets(index.shape(), xst, axis + 1, r);
  const std::int64_t J = index.shape()[axis], I = static_cast<std::int64_t>(inner.size());
  const std::int64_t step = xst[axis];
  const std::int64_t* idx = index.data<std::int64_t>();
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>();
    T* out = k.out.data<T>();
    for_blocks(static_cast<std::int64_t>(outer.size()) * J, I,
               [&](std::int64_t row, std::int64_t i0, std::int64_t i1) {
                 const std::int64_t base = outer[row / J], p = row * I;
                 for (std::int64_t i = i0; i < i1; ++i)
                   out[p + i] = src[base + idx[p + i] * step + inner[i]];
               });
  });
}

Type scatter_add_infer(std::span<const Type> in, const Attrs& attrs) {
  const std::int64_t axis = axis_of(attrs);
  require(allowed(in[0].dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
  require(in[2].dtype == in[0].dtype, "expects src of base's dtype");
  require_axis(axis, in[0].rank());
  require_fitting_index(in[0], in[1], axis, "base");
  require(in[2].shape == in[1].shape, "expects src of the index's shape");
  return in[0];
}

void scatter_add_kernel(const KernelArgs& k) {
  const Array& base = *k.in[0];
  const Array& index = *k.in[1];
  const Array& src = *k.in[2];
  const int axis = static_cast<int>(axis_of(k.node.attrs)), r = base.rank();
  if (base.nbytes()) std::memcpy(k.out.raw(), base.raw(), base.nbytes());
  if (index.numel() == 0) return;
  check_indices(k.node, index, base.shape()[axis], along(axis));
  const auto bst = strides_of(base.shape());
  const auto outer = offsets(index.shape(), bst, 0, axis);
  const auto inner = offsets(index.shape(), bst, axis + 1, r);
  const std::int64_t J = index.shape()[axis], I = static_cast<std::int64_t>(inner.size());
  const std::int64_t step = bst[axis];
  const std::int64_t* idx = index.data<std::int64_t>();
  visit_numeric(k.node, base.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = src.data<T>();
    T* out = k.out.data<T>();
    // Rows are outer positions; the j loop (the only one that can collide) stays serial.
    for_blocks(static_cast<std::int64_t>(outer.size()), I,
               [&](std::int64_t o, std::int64_t i0, std::int64_t i1) {
                 for (std::int64_t j = 0; j < J; ++j) {
                   const std::int64_t p = (o * J + j) * I;
                   for (std::int64_t i = i0; i < i1; ++i) {
                     T& dst = out[outer[o] + idx[p + i] * step + inner[i]];
                     dst = plus(dst, s[p + i]);
                   }
                 }
               });
  });
}

// ---- index_select / index_add --------------------------------------------------------

Type index_select_infer(std::span<const Type> in, const Attrs& attrs) {
  const std::int64_t axis = axis_of(attrs);
  require_axis(axis, in[0].rank());
  require(in[1].dtype == i64 && in[1].rank() == 1, "expects a 1-D i64 index");
  Type out = in[0];
  out.shape[axis] = in[1].shape[0];
  return out;
}

void index_select_kernel(const KernelArgs& k) {
  const Array& x = *k.in[0];
  const Array& index = *k.in[1];
  const int axis = static_cast<int>(axis_of(k.node.attrs));
  if (k.out.numel() == 0) return;
  const std::int64_t n = x.shape()[axis];
  check_indices(k.node, index, n, along(axis));
  const std::int64_t outer = prod(x.shape(), 0, axis), L = index.numel();
  const std::size_t row = static_cast<std::size_t>(prod(x.shape(), axis + 1, x.rank())) *
                          size_of(x.dtype());
  const std::int64_t* idx = index.data<std::int64_t>();
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* out = static_cast<std::byte*>(k.out.raw());
#pragma omp parallel for schedule(static) if (k.out.nbytes() >= (1u << 18))
  for (std::int64_t r = 0; r < outer * L; ++r) {
    const std::int64_t o = r / L, j = r % L;
    std::memcpy(out + static_cast<std::size_t>(r) * row,
                src + static_cast<std::size_t>(o * n + idx[j]) * row, row);
  }
}

Type index_add_infer(std::span<const Type> in, const Attrs& attrs) {
  const std::int64_t axis = axis_of(attrs);
  require(allowed(in[0].dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
  require_axis(axis, in[0].rank());
  require(in[1].dtype == i64 && in[1].rank() == 1, "expects a 1-D i64 index");
  Shape want = in[0].shape;
  want[axis] = in[1].shape[0];
  require(in[2] == Type{in[0].dtype, want},
          "expects src of base's dtype and shape, with dim `axis` = len(index)");
  return in[0];
}

void index_add_kernel(const KernelArgs& k) {
  const Array& base = *k.in[0];
  const Array& index = *k.in[1];
  const Array& src = *k.in[2];
  const int axis = static_cast<int>(axis_of(k.node.attrs));
  if (base.nbytes()) std::memcpy(k.out.raw(), base.raw(), base.nbytes());
  if (src.numel() == 0) return;
  const std::int64_t n = base.shape()[axis];
  check_indices(k.node, index, n, along(axis));
  const std::int64_t outer = prod(base.shape(), 0, axis), L = index.numel();
  const std::int64_t inner = prod(base.shape(), axis + 1, base.rank());
  const std::int64_t* idx = index.data<std::int64_t>();
  visit_numeric(k.node, base.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = src.data<T>();
    T* out = k.out.data<T>();
    for_blocks(outer, inner, [&](std::int64_t o, std::int64_t i0, std::int64_t i1) {
      for (std::int64_t j = 0; j < L; ++j) {
        T* dst = out + (o * n + idx[j]) * inner;
        const T* from = s + (o * L + j) * inner;
        for (std::int64_t i = i0; i < i1; ++i) dst[i] = plus(dst[i], from[i]);
      }
    });
  });
}

// ---- one_hot, cumsum -----------------------------------------------------------------

Type one_hot_infer(std::span<const Type> in, const Attrs& attrs) {
  require(in[0].dtype == i64, "expects an i64 input");
  const std::int64_t c = attrs.i64("num_classes");
  require(c >= 0, "expects num_classes >= 0");
  Type out{attrs.dtype("dtype"), in[0].shape};
  out.shape.push_back(c);
  return out;
}

void one_hot_kernel(const KernelArgs& k) {
  const Array& index = *k.in[0];
  const std::int64_t c = k.node.attrs.i64("num_classes");
  check_indices(k.node, index, c, "for num_classes = " + std::to_string(c));
  if (k.out.nbytes()) std::memset(k.out.raw(), 0, k.out.nbytes());
  const std::int64_t* idx = index.data<std::int64_t>();
  visit_dtype(k.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = k.out.data<T>();
    for (std::int64_t p = 0; p < index.numel(); ++p) out[p * c + idx[p]] = T(1);
  });
}

Type cumsum_infer(std::span<const Type> in, const Attrs& attrs) {
  require(allowed(in[0].dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
  require_axis(axis_of(attrs), in[0].rank());
  return in[0];
}

void cumsum_kernel(const KernelArgs& k) {
  const Array& x = *k.in[0];
  const int axis = static_cast<int>(axis_of(k.node.attrs));
  const std::int64_t outer = prod(x.shape(), 0, axis), n = x.shape()[axis];
  const std::int64_t inner = prod(x.shape(), axis + 1, x.rank());
  visit_numeric(k.node, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = x.data<T>();
    T* out = k.out.data<T>();
    if (n == 0) return;
    if (inner == 1) {  // scan along the contiguous last axis: one running sum per row
#pragma omp parallel for schedule(static) if (outer * n >= kParallelMin && outer > 1)
      for (std::int64_t o = 0; o < outer; ++o) {
        T acc{};
        for (std::int64_t j = 0; j < n; ++j) out[o * n + j] = acc = plus(acc, s[o * n + j]);
      }
      return;
    }
    for_blocks(outer, inner, [&](std::int64_t o, std::int64_t i0, std::int64_t i1) {
      const std::int64_t b = o * n * inner;
      for (std::int64_t i = i0; i < i1; ++i) out[b + i] = s[b + i];
      for (std::int64_t j = 1; j < n; ++j) {
        const std::int64_t p = b + j * inner;
        for (std::int64_t i = i0; i < i1; ++i) out[p + i] = plus(out[p - inner + i], s[p + i]);
      }
    });
  });
}

// ---- test inputs ---------------------------------------------------------------------

// Every index test case below has its indexed dim (x/base's dim `axis`, or num_classes)
// equal to kCaseBound, so generated indices are always in range.
constexpr std::int64_t kCaseBound = 3;

// i64 inputs: indices uniform in [0, kCaseBound); float inputs: standard normal.
Array index_test_input(std::size_t input, const Type& type, std::uint64_t seed) {
  std::mt19937_64 bits(seed * 0x9E3779B97F4A7C15ull + input + 1);
  Array a(type);
  if (type.dtype == i64) {
    for (std::int64_t i = 0; i < a.numel(); ++i)
      a.data<std::int64_t>()[i] = static_cast<std::int64_t>(bits() % kCaseBound);
    return a;
  }
  constexpr double kTwoPi = 6.28318530717958647692;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double u1 = (static_cast<double>(bits() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = static_cast<double>(bits() >> 11) * 0x1p-53;          // [0, 1)
    a.set(i, std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
  }
  return a;
}

OpDef& def_index_op(const char* name, const char* doc, int arity, InferFn infer, KernelFn kernel,
                    VjpFn vjp) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = arity;
  d.attrs = {{"axis", AttrKind::i64, std::nullopt}};
  d.infer = std::move(infer);
  d.kernel = std::move(kernel);
  d.vjp = std::move(vjp);
  d.test.make_input = index_test_input;
  return d;
}

// ---- C99 emission ----------------------------------------------------------------------

std::string c_add(DType t, const std::string& a, const std::string& b) {  // wrapping for i64
  if (t == i64) return "(int64_t)((uint64_t)(" + a + ") + (uint64_t)(" + b + "))";
  return a + " + " + b;
}

// Checks every index before any element moves: an index outside [0, bound) leaves the
// entry function with this node's error code.
void c_check_indices(const CLoopArgs& a, const std::string& idx, std::int64_t count, std::int64_t bound) {
  if (count == 0) return;
  a.w.open("for (int64_t p = 0; p < " + std::to_string(count) + "; ++p)");
  a.w.line("if (" + idx + "[p] < 0 || " + idx + "[p] >= " + std::to_string(bound) + ") " + a.fail);
  a.w.close();
}

void c_copy_input(const CLoopArgs& a, std::size_t k) {
  const std::int64_t n = a.node.type.numel();
  if (n == 0) return;
  c_for(a.w, "i", n, n, true);
  a.w.line(a.out + "[i] = " + a.in[k] + "[i];");
  a.w.close();
}

// gather / scatter_add: position p of the index reads/writes dim `axis` at index[p].
std::string c_indexed_offset(const Shape& index_shape, const Shape& x_shape, std::int64_t axis, const std::string& idx) {
  auto xs = strides_of(x_shape);
  const std::int64_t step = xs[static_cast<std::size_t>(axis)];
  xs[static_cast<std::size_t>(axis)] = 0;
  return c_offset("p", index_shape, xs) + " + " + idx + "[p] * " + std::to_string(step);
}

EmitC c_gather() {
  return c_loops([](const CLoopArgs& a) {
    const std::int64_t axis = axis_of(a.node.attrs), n = a.node.type.numel();
    const Shape& xs = a.in_types[0].shape;
    if (n == 0) return;
    c_check_indices(a, a.in[1], n, xs[static_cast<std::size_t>(axis)]);
    c_for(a.w, "p", n, n, false);
    a.w.line(a.out + "[p] = " + a.in[0] + "[" + c_indexed_offset(a.in_types[1].shape, xs, axis, a.in[1]) + "];");
    a.w.close();
  });
}

EmitC c_scatter_add() {
  return c_loops([](const CLoopArgs& a) {
    const std::int64_t axis = axis_of(a.node.attrs), n = a.in_types[1].numel();
    const Shape& bs = a.in_types[0].shape;
    c_copy_input(a, 0);
    if (n == 0) return;
    c_check_indices(a, a.in[1], n, bs[static_cast<std::size_t>(axis)]);
    a.w.open("for (int64_t p = 0; p < " + std::to_string(n) + "; ++p)");  // serial: duplicates collide
    const std::string dst = a.out + "[" + c_indexed_offset(a.in_types[1].shape, bs, axis, a.in[1]) + "]";
    a.w.line(dst + " = " + c_add(a.node.type.dtype, dst, a.in[2] + "[p]") + ";");
    a.w.close();
  });
}

struct OuterInner {
  std::int64_t outer = 1, n = 1, inner = 1;
};
OuterInner around(const Shape& s, std::int64_t axis) {
  OuterInner v;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(s.size()); ++d)
    (d < axis ? v.outer : d == axis ? v.n : v.inner) *= s[static_cast<std::size_t>(d)];
  return v;
}

EmitC c_index_select() {
  return c_loops([](const CLoopArgs& a) {
    const std::int64_t axis = axis_of(a.node.attrs), L = a.in_types[1].numel();
    const OuterInner v = around(a.in_types[0].shape, axis);
    if (a.node.type.numel() == 0) return;
    c_check_indices(a, a.in[1], L, v.n);
    const std::string I = std::to_string(v.inner), Ls = std::to_string(L);
    c_for(a.w, "r", v.outer * L, a.node.type.numel(), false);
    a.w.line("const int64_t src = ((r / " + Ls + ") * " + std::to_string(v.n) + " + " + a.in[1] + "[r % " + Ls + "]) * " + I + ";");
    a.w.line("MG_OMP(omp simd)");
    a.w.line("for (int64_t i = 0; i < " + I + "; ++i) " + a.out + "[r * " + I + " + i] = " + a.in[0] + "[src + i];");
    a.w.close();
  });
}

EmitC c_index_add() {
  return c_loops([](const CLoopArgs& a) {
    const std::int64_t axis = axis_of(a.node.attrs), L = a.in_types[1].numel();
    const OuterInner v = around(a.in_types[0].shape, axis);
    c_copy_input(a, 0);
    if (a.in_types[2].numel() == 0) return;
    c_check_indices(a, a.in[1], L, v.n);
    const std::string I = std::to_string(v.inner), Ls = std::to_string(L);
    c_for(a.w, "o", v.outer, v.outer * L * v.inner, false);  // rows of different o never collide
    a.w.open("for (int64_t j = 0; j < " + Ls + "; ++j)");
    a.w.line(c_type(a.node.type.dtype) + "* dst = " + a.out + " + (o * " + std::to_string(v.n) + " + " + a.in[1] + "[j]) * " + I + ";");
    a.w.line("const " + c_type(a.node.type.dtype) + "* from = " + a.in[2] + " + (o * " + Ls + " + j) * " + I + ";");
    a.w.line("for (int64_t i = 0; i < " + I + "; ++i) dst[i] = " + c_add(a.node.type.dtype, "dst[i]", "from[i]") + ";");
    a.w.close();
    a.w.close();
  });
}

EmitC c_one_hot() {
  return c_loops([](const CLoopArgs& a) {
    const std::int64_t c = a.node.attrs.i64("num_classes"), n = a.in_types[0].numel(), total = a.node.type.numel();
    c_check_indices(a, a.in[0], n, c);
    if (total == 0) return;
    c_for(a.w, "i", total, total, true);
    a.w.line(a.out + "[i] = 0;");
    a.w.close();
    a.w.line("for (int64_t p = 0; p < " + std::to_string(n) + "; ++p) " + a.out + "[p * " + std::to_string(c) + " + " +
             a.in[0] + "[p]] = 1;");
  });
}

EmitC c_cumsum() {
  return c_loops([](const CLoopArgs& a) {
    const OuterInner v = around(a.in_types[0].shape, axis_of(a.node.attrs));
    const DType t = a.node.type.dtype;
    if (a.node.type.numel() == 0) return;
    const std::string I = std::to_string(v.inner), N = std::to_string(v.n);
    c_for(a.w, "q", v.outer * v.inner, a.node.type.numel(), false);
    a.w.line("const int64_t b = (q / " + I + ") * " + std::to_string(v.n * v.inner) + " + q % " + I + ";");
    a.w.line(c_type(t) + " acc = 0;");
    a.w.line("for (int64_t j = 0; j < " + N + "; ++j) { acc = " + c_add(t, "acc", a.in[0] + "[b + j * " + I + "]") +
             "; " + a.out + "[b + j * " + I + "] = acc; }");
    a.w.close();
  });
}

}  // namespace

void register_index_ops() {
  const Type f64_34{f64, {3, 4}}, f64_23{f64, {2, 3}}, f64_232{f64, {2, 3, 2}};

  OpDef& ga = def_index_op(
      "gather",
      "(x, index i64 of x's rank) -> out[..i..] = x[..i with dim axis replaced by "
      "index[..i..]..] (torch.gather); index dims <= x dims off `axis`; out shape = index "
      "shape; index outside [0, x.shape[axis]) is a UserError at run time",
      2, gather_infer, gather_kernel, [](const VjpArgs& a) {
        const std::int64_t axis = axis_of(a.node.attrs);
        return grads({scatter_add(zeros_like(a.in[0]), a.in[1], a.cotangent, axis), Value{}});
      });
  defined_op("gather").emit_c = c_gather();
  ga.test.cases = {
      {{f64_34, Type{i64, {2, 4}}}, {{"axis", 0}}},
      {{f64_23, Type{i64, {2, 5}}}, {{"axis", 1}}},
      {{f64_232, Type{i64, {1, 4, 2}}}, {{"axis", 1}}},
      {{Type{f64, {3}}, Type{i64, {1}}}, {{"axis", 0}}},
  };

  OpDef& sa = def_index_op(
      "scatter_add",
      "(base, index i64, src of index's shape) -> base with src[..i..] added at "
      "[..i with dim axis replaced by index[..i..]..] (torch.scatter_add); index dims <= base "
      "dims off `axis`; duplicates accumulate; index outside [0, base.shape[axis]) is a "
      "UserError at run time",
      3, scatter_add_infer, scatter_add_kernel, [](const VjpArgs& a) {
        const std::int64_t axis = axis_of(a.node.attrs);
        return grads({a.cotangent, Value{}, gather(a.cotangent, a.in[1], axis)});
      });
  defined_op("scatter_add").emit_c = c_scatter_add();
  sa.test.cases = {
      {{f64_34, Type{i64, {2, 4}}, Type{f64, {2, 4}}}, {{"axis", 0}}},
      {{f64_23, Type{i64, {2, 5}}, Type{f64, {2, 5}}}, {{"axis", 1}}},
      {{f64_232, Type{i64, {1, 4, 2}}, Type{f64, {1, 4, 2}}}, {{"axis", 1}}},
  };

  OpDef& is = def_index_op(
      "index_select",
      "(x, index 1-D i64) -> x with dim axis replaced by len(index), slice j = x's slice "
      "index[j] (torch.index_select); index outside [0, x.shape[axis]) is a UserError at run "
      "time",
      2, index_select_infer, index_select_kernel, [](const VjpArgs& a) {
        const std::int64_t axis = axis_of(a.node.attrs);
        return grads({index_add(zeros_like(a.in[0]), a.in[1], a.cotangent, axis), Value{}});
      });
  defined_op("index_select").emit_c = c_index_select();
  is.test.cases = {
      {{f64_34, Type{i64, {5}}}, {{"axis", 0}}},
      {{f64_23, Type{i64, {2}}}, {{"axis", 1}}},
      {{f64_232, Type{i64, {1}}}, {{"axis", 1}}},
  };

  OpDef& ia = def_index_op(
      "index_add",
      "(base, index 1-D i64, src = base shape with dim axis = len(index)) -> base with src's "
      "slice j added to slice index[j] (torch.index_add); duplicates accumulate; index outside "
      "[0, base.shape[axis]) is a UserError at run time",
      3, index_add_infer, index_add_kernel, [](const VjpArgs& a) {
        const std::int64_t axis = axis_of(a.node.attrs);
        return grads({a.cotangent, Value{}, index_select(a.cotangent, a.in[1], axis)});
      });
  defined_op("index_add").emit_c = c_index_add();
  ia.test.cases = {
      {{f64_34, Type{i64, {5}}, Type{f64, {5, 4}}}, {{"axis", 0}}},
      {{f64_23, Type{i64, {2}}, Type{f64, {2, 2}}}, {{"axis", 1}}},
      {{f64_232, Type{i64, {4}}, Type{f64, {2, 4, 2}}}, {{"axis", 1}}},
  };

  OpDef& oh = define_op("one_hot");
  oh.doc =
      "i64 [...] -> [..., num_classes] in `dtype`, 1 at the index, else 0; an index outside "
      "[0, num_classes) is a UserError at run time";
  oh.attrs = {{"num_classes", AttrKind::i64, std::nullopt},
              {"dtype", AttrKind::dtype, AttrValue{DType::f32}}};
  oh.infer = one_hot_infer;
  oh.kernel = one_hot_kernel;
  defined_op("one_hot").emit_c = c_one_hot();
  oh.not_differentiable = "integer input";
  oh.test.grad_order = 0;
  oh.test.make_input = index_test_input;
  oh.test.cases = {
      {{Type{i64, {4}}}, {{"num_classes", kCaseBound}, {"dtype", f64}}},
      {{Type{i64, {2, 3}}}, {{"num_classes", kCaseBound}, {"dtype", f64}}},
      {{Type{i64, {}}}, {{"num_classes", kCaseBound}, {"dtype", f64}}},
  };

  OpDef& cs = define_op("cumsum");
  cs.doc = "inclusive cumulative sum along `axis` (f32, f64, i64; i64 wraps on overflow)";
  cs.attrs = {{"axis", AttrKind::i64, std::nullopt}};
  cs.infer = cumsum_infer;
  cs.kernel = cumsum_kernel;
  defined_op("cumsum").emit_c = c_cumsum();
  cs.vjp = [](const VjpArgs& a) {  // reversed cumsum of g
    const std::int64_t axis = axis_of(a.node.attrs);
    return grads({flip(cumsum(flip(a.cotangent, {axis}), axis), {axis})});
  };
  cs.test.cases = {
      {{Type{f64, {4}}}, {{"axis", 0}}},
      {{f64_23}, {{"axis", 1}}},
      {{Type{f64, {3, 2, 2}}}, {{"axis", 0}}},
  };
}

}  // namespace mg::ir
