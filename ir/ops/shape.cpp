// Shape ops: reshape, squeeze, unsqueeze, permute, broadcast_to, slice, pad, concat, flip.
// They move elements and never compute with them, so every op takes any dtype, every
// kernel is a memcpy or one strided_copy (byte-generic), and every VJP is another shape
// op (all are linear). Attributes arrive normalised (non-negative axes, full-length lists);
// the infer rules check that and reject anything else.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "minigrad/ir/checked.hpp"
#include "minigrad/ir/ops/rules.hpp"
#include "minigrad/ir/ops/strided_copy.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using kernels::StridedBox;
using kernels::strided_copy;

std::string str(const I64List& l) { return to_string(AttrValue{l}); }
std::string str(std::int64_t v) { return std::to_string(v); }

std::byte* bytes(Array& a) { return static_cast<std::byte*>(a.raw()); }
const std::byte* bytes(const Array& a) { return static_cast<const std::byte*>(a.raw()); }
std::size_t elem_size(const Array& a) { return size_of(a.dtype()); }

// Axes of a rank-`rank` tensor: each in [0, rank), no repeats. Returns them sorted.
I64List check_axes(const I64List& axes, std::int64_t rank) {
  for (auto a : axes)
    require(a >= 0 && a < rank, "axis " + str(a) + " out of range [0, " + str(rank) + ")");
  I64List s = axes;
  std::sort(s.begin(), s.end());
  require(std::adjacent_find(s.begin(), s.end()) == s.end(), "repeated axis in " + str(axes));
  return s;
}

// A list attribute with one entry per axis.
void require_per_axis(const Attrs& attrs, const char* name, int rank) {
  const I64List& l = attrs.list(name);
  require(static_cast<int>(l.size()) == rank,
          std::string(name) + " needs one entry per axis (" + str(rank) + "), got " + str(l));
}

void require_dims(const Shape& s) {
  for (auto d : s) require(d >= 0, "negative dimension in shape " + to_string(s));
}

// Same elements, new shape: the bytes do not move.
void copy_bytes(const KernelArgs& k) {
  if (k.out.nbytes() != 0 && k.out.raw() != k.in[0]->raw())
    std::memcpy(k.out.raw(), k.in[0]->raw(), k.out.nbytes());
}

// out[i] = in[offset + sum_k i_k * src_strides_k] over the whole output.
void gather_into_out(const KernelArgs& k, std::int64_t offset, std::vector<std::int64_t> src_strides) {
  if (k.out.numel() == 0) return;
  const Array& in = *k.in[0];
  StridedBox box{k.out.shape(), strides_of(k.out.shape()), std::move(src_strides)};
  strided_copy(bytes(k.out), bytes(in) + offset * static_cast<std::int64_t>(elem_size(in)),
               elem_size(in), box);
}

// The output dims of slicing `d` elements [start, stop) by `step`.
std::int64_t slice_len(std::int64_t start, std::int64_t stop, std::int64_t step) {
  return checked_add(checked_sub(stop, start), step - 1) / step;  // step >= 1
}
std::int64_t padded_len(std::int64_t d, std::int64_t low, std::int64_t high, std::int64_t interior) {
  return checked_add(checked_add(checked_add(low, high), d), checked_mul(std::max<std::int64_t>(d - 1, 0), interior));
}

Type with_shape(const Type& t, Shape s) { return Type{t.dtype, std::move(s)}; }

// ---- C99 emission ----------------------------------------------------------------------

// out[i] = in[i]: reshapes move no element. Their view is contiguous: consumers read the
// operand's buffer itself and the copy runs only where the value is a root.
EmitC c_copy() {
  EmitC e = c_loops([](const CLoopArgs& a) {
    const std::int64_t n = a.node.type.numel();
    if (n == 0) return;
    c_for(a.w, "i", n, n, true);
    a.w.line(a.out + "[i] = " + a.in[0] + "[i];");
    a.w.close();
  });
  e.view = [](const Node&, std::span<const Type>) -> std::optional<CView> { return CView{}; };
  return e;
}

// out (contiguous) = in read at `offset` with per-output-axis `src` strides.
void c_gather(const CLoopArgs& a, std::int64_t offset, const std::vector<std::int64_t>& src) {
  c_strided_copy(a.w, a.out, 0, strides_of(a.node.type.shape), a.in[0], offset, src, a.node.type.shape);
}

std::vector<std::int64_t> permuted_strides(const Node& node, const Shape& x) {
  const auto xs = strides_of(x);
  std::vector<std::int64_t> src;
  for (auto p : node.attrs.list("perm")) src.push_back(xs[static_cast<std::size_t>(p)]);
  return src;
}

EmitC c_permute() {
  EmitC e = c_loops([](const CLoopArgs& a) { c_gather(a, 0, permuted_strides(a.node, a.in_types[0].shape)); });
  // A strided view: a consumer that reads strided operands (matmul reading a Linear's
  // weight.T) uses the operand in place, so no transpose is copied per run.
  e.view = [](const Node& n, std::span<const Type> in) -> std::optional<CView> {
    return CView{0, permuted_strides(n, in[0].shape)};
  };
  return e;
}

using kernels::broadcast_strides;

EmitC c_broadcast() {
  EmitC e = c_loops([](const CLoopArgs& a) {
    c_gather(a, 0, broadcast_strides(a.in_types[0].shape, a.node.type.shape));
  });
  // A strided view (zero strides): elementwise loops and matmul read the operand in place
  // instead of a materialised copy (Adam's scalar step sizes over every weight, biases).
  e.view = [](const Node& n, std::span<const Type> in) -> std::optional<CView> {
    return CView{0, broadcast_strides(in[0].shape, n.type.shape)};
  };
  return e;
}

EmitC c_slice() {
  return c_loops([](const CLoopArgs& a) {
    const I64List &b = a.node.attrs.list("starts"), &st = a.node.attrs.list("steps");
    auto xs = strides_of(a.in_types[0].shape);
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      offset += b[i] * xs[i];
      xs[i] *= st[i];
    }
    c_gather(a, offset, xs);
  });
}

EmitC c_flip() {
  return c_loops([](const CLoopArgs& a) {
    const Shape& x = a.in_types[0].shape;
    auto xs = strides_of(x);
    std::int64_t offset = 0;
    for (auto ax : a.node.attrs.list("axes")) {
      if (x[ax] > 0) offset += (x[ax] - 1) * xs[ax];
      xs[ax] = -xs[ax];
    }
    c_gather(a, offset, xs);
  });
}

EmitC c_pad() {
  return c_loops([](const CLoopArgs& a) {
    const Shape& x = a.in_types[0].shape;
    const I64List &lo = a.node.attrs.list("low"), &it = a.node.attrs.list("interior");
    const std::int64_t n = a.node.type.numel();
    if (n != numel(x)) {
      c_for(a.w, "i", n, n, true);
      a.w.line(a.out + "[i] = " + c_lit(a.node.attrs.f64("value"), a.node.type.dtype) + ";");
      a.w.close();
    }
    auto os = strides_of(a.node.type.shape);
    std::int64_t offset = 0;
    std::vector<std::int64_t> ds(os.size());
    for (std::size_t i = 0; i < os.size(); ++i) {
      offset += lo[i] * os[i];
      ds[i] = os[i] * (it[i] + 1);
    }
    c_strided_copy(a.w, a.out, offset, ds, a.in[0], 0, strides_of(x), x);
  });
}

EmitC c_concat() {
  return c_loops([](const CLoopArgs& a) {
    const auto axis = static_cast<std::size_t>(a.node.attrs.i64("axis"));
    const auto os = strides_of(a.node.type.shape);
    std::int64_t at = 0;
    for (std::size_t k = 0; k < a.in.size(); ++k) {
      const Shape& s = a.in_types[k].shape;
      c_strided_copy(a.w, a.out, at * os[axis], os, a.in[k], 0, strides_of(s), s);
      at += s[axis];
    }
  });
}

void def_reshapes() {
  OpDef& reshape_op = define_op("reshape");
  reshape_op.doc = "same elements in row-major order, new shape; numel must match (no -1: the DSL resolves it)";
  reshape_op.attrs = {{"shape", AttrKind::i64_list, std::nullopt}};
  reshape_op.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const Shape& s = attrs.list("shape");
    require_dims(s);
    require(numel(s) == in[0].numel(), "a shape with " + str(in[0].numel()) + " elements, got " + to_string(s));
    return with_shape(in[0], s);
  };
  reshape_op.kernel = copy_bytes;
  reshape_op.traits.reinterprets = true;
  defined_op("reshape").emit_c = c_copy();
  reshape_op.vjp = [](const VjpArgs& a) { return grads({reshape(a.cotangent, a.in[0].shape())}); };
  reshape_op.test.cases = {
      {{Type{f64, {2, 3}}}, {{"shape", I64List{3, 2}}}},
      {{Type{f64, {}}}, {{"shape", I64List{1, 1}}}},
      {{Type{f64, {1, 4}}}, {{"shape", I64List{2, 1, 2}}}},
  };

  OpDef& sq = define_op("squeeze");
  sq.doc = "removes the listed axes, each of which must have size 1; empty list: unchanged";
  sq.attrs = {{"axes", AttrKind::i64_list, std::nullopt}};
  sq.infer = [](std::span<const Type> in, const Attrs& attrs) {
    I64List axes = check_axes(attrs.list("axes"), in[0].rank());
    Shape s;
    for (int k = 0; k < in[0].rank(); ++k) {
      bool drop = std::binary_search(axes.begin(), axes.end(), k);
      require(!drop || in[0].shape[k] == 1, "axis " + str(k) + " to squeeze has size " + str(in[0].shape[k]));
      if (!drop) s.push_back(in[0].shape[k]);
    }
    return with_shape(in[0], s);
  };
  sq.kernel = copy_bytes;
  sq.traits.reinterprets = true;
  defined_op("squeeze").emit_c = c_copy();
  sq.vjp = [](const VjpArgs& a) { return grads({reshape(a.cotangent, a.in[0].shape())}); };
  sq.test.cases = {
      {{Type{f64, {2, 1, 3, 1}}}, {{"axes", I64List{1, 3}}}},
      {{Type{f64, {1}}}, {{"axes", I64List{0}}}},
  };

  OpDef& usq = define_op("unsqueeze");
  usq.doc = "inserts size-1 axes; `axes` index the OUTPUT (rank + len(axes)), as torch.unsqueeze in sorted order";
  usq.attrs = {{"axes", AttrKind::i64_list, std::nullopt}};
  usq.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const auto out_rank = in[0].rank() + static_cast<std::int64_t>(attrs.list("axes").size());
    I64List axes = check_axes(attrs.list("axes"), out_rank);
    Shape s;
    std::size_t next = 0;
    for (std::int64_t k = 0; k < out_rank; ++k)
      s.push_back(std::binary_search(axes.begin(), axes.end(), k) ? 1 : in[0].shape[next++]);
    return with_shape(in[0], s);
  };
  usq.kernel = copy_bytes;
  usq.traits.reinterprets = true;
  defined_op("unsqueeze").emit_c = c_copy();
  usq.vjp = [](const VjpArgs& a) { return grads({reshape(a.cotangent, a.in[0].shape())}); };
  usq.test.cases = {
      {{Type{f64, {2, 3}}}, {{"axes", I64List{0, 3}}}},
      {{Type{f64, {}}}, {{"axes", I64List{0}}}},
  };
}

void def_permute_broadcast() {
  OpDef& perm = define_op("permute");
  perm.doc = "out.shape[i] = x.shape[perm[i]], out[..i..] = x[..i permuted back..]; perm is a permutation of 0..rank-1";
  perm.attrs = {{"perm", AttrKind::i64_list, std::nullopt}};
  perm.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const I64List& p = attrs.list("perm");
    require(static_cast<int>(p.size()) == in[0].rank(), "perm of length rank " + str(in[0].rank()) + ", got " + str(p));
    check_axes(p, in[0].rank());  // in range and distinct: a permutation
    Shape s;
    for (auto a : p) s.push_back(in[0].shape[a]);
    return with_shape(in[0], s);
  };
  perm.kernel = [](const KernelArgs& k) {
    const I64List& p = k.node.attrs.list("perm");
    auto in_strides = strides_of(k.in[0]->shape());
    std::vector<std::int64_t> src;
    for (auto a : p) src.push_back(in_strides[a]);
    gather_into_out(k, 0, std::move(src));
  };
  defined_op("permute").emit_c = c_permute();
  perm.vjp = [](const VjpArgs& a) {
    const I64List& p = a.node.attrs.list("perm");
    I64List inv(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<std::int64_t>(i);
    return grads({permute(a.cotangent, inv)});
  };
  perm.test.cases = {
      {{Type{f64, {2, 3, 4}}}, {{"perm", I64List{2, 0, 1}}}},
      {{Type{f64, {3, 1}}}, {{"perm", I64List{1, 0}}}},
      {{Type{f64, {2, 3}}}, {{"perm", I64List{1, 0}}}},
  };

  OpDef& bc = define_op("broadcast_to");
  bc.doc = "NumPy broadcasting to `shape`: axes aligned from the right, each input dim equals the target or is 1 (1 -> 0 allowed)";
  bc.attrs = {{"shape", AttrKind::i64_list, std::nullopt}};
  bc.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const Shape& s = attrs.list("shape");
    const Shape& x = in[0].shape;
    require_dims(s);
    require(x.size() <= s.size(), "a target rank >= the input rank, got " + to_string(s));
    const std::size_t lead = s.size() - x.size();
    for (std::size_t i = 0; i < x.size(); ++i)
      require(x[i] == s[lead + i] || x[i] == 1,
              "input dim " + str(x[i]) + " (axis " + str(static_cast<std::int64_t>(i)) +
                  ") to be 1 or equal to the target's " + str(s[lead + i]) + " in " + to_string(s));
    return with_shape(in[0], s);
  };
  bc.kernel = [](const KernelArgs& k) {
    const Shape& x = k.in[0]->shape();
    const Shape& s = k.out.shape();
    auto xs = strides_of(x);
    const std::size_t lead = s.size() - x.size();
    std::vector<std::int64_t> src(s.size(), 0);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] == s[lead + i]) src[lead + i] = xs[i];
    gather_into_out(k, 0, std::move(src));
  };
  defined_op("broadcast_to").emit_c = c_broadcast();
  bc.vjp = [](const VjpArgs& a) { return grads({sum_to(a.cotangent, a.in[0].shape())}); };
  bc.test.cases = {
      {{Type{f64, {3}}}, {{"shape", I64List{2, 3}}}},
      {{Type{f64, {}}}, {{"shape", I64List{2, 2}}}},
      {{Type{f64, {2, 1}}}, {{"shape", I64List{3, 2, 4}}}},
  };
}

void def_slice_pad() {
  OpDef& sl = define_op("slice");
  sl.doc = "x[start:stop:step] on every axis; 0 <= start <= stop <= dim, step >= 1 (negative steps: flip); "
           "out dim = ceil((stop-start)/step)";
  sl.attrs = {{"starts", AttrKind::i64_list, std::nullopt},
              {"stops", AttrKind::i64_list, std::nullopt},
              {"steps", AttrKind::i64_list, std::nullopt}};
  sl.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const int r = in[0].rank();
    for (const char* n : {"starts", "stops", "steps"}) require_per_axis(attrs, n, r);
    const I64List &b = attrs.list("starts"), &e = attrs.list("stops"), &st = attrs.list("steps");
    Shape s;
    for (int k = 0; k < r; ++k) {
      require(0 <= b[k] && b[k] <= e[k] && e[k] <= in[0].shape[k],
              "0 <= start <= stop <= dim on axis " + str(k) + ", got " + str(b[k]) + ":" + str(e[k]) +
                  " of " + str(in[0].shape[k]));
      require(st[k] >= 1, "step >= 1 on axis " + str(k) + ", got " + str(st[k]));
      s.push_back(slice_len(b[k], e[k], st[k]));
    }
    return with_shape(in[0], s);
  };
  sl.kernel = [](const KernelArgs& k) {
    const I64List &b = k.node.attrs.list("starts"), &st = k.node.attrs.list("steps");
    auto xs = strides_of(k.in[0]->shape());
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      offset += b[i] * xs[i];
      xs[i] *= st[i];
    }
    gather_into_out(k, offset, std::move(xs));
  };
  defined_op("slice").emit_c = c_slice();
  sl.vjp = [](const VjpArgs& a) {  // scatter back: pad with step-1 zeros between the picks
    const I64List &b = a.node.attrs.list("starts"), &st = a.node.attrs.list("steps");
    const Shape &x = a.in[0].shape(), &o = a.out.shape();
    I64List high, interior;
    for (std::size_t i = 0; i < x.size(); ++i) {
      interior.push_back(st[i] - 1);
      high.push_back(x[i] - padded_len(o[i], b[i], 0, st[i] - 1));
    }
    return grads({pad(a.cotangent, b, high, interior, 0.0)});
  };
  sl.test.cases = {
      {{Type{f64, {5, 4}}}, {{"starts", I64List{1, 0}}, {"stops", I64List{5, 3}}, {"steps", I64List{2, 1}}}},
      {{Type{f64, {6}}}, {{"starts", I64List{0}}, {"stops", I64List{6}}, {"steps", I64List{3}}}},
      {{Type{f64, {3, 1}}}, {{"starts", I64List{1, 0}}, {"stops", I64List{3, 1}}, {"steps", I64List{1, 1}}}},
  };

  OpDef& pd = define_op("pad");
  pd.doc = "XLA-style pad with `value`: per axis `low` before, `high` after, `interior` between neighbours "
           "(all >= 0); out dim = low + high + d + max(d-1,0)*interior";
  pd.attrs = {{"low", AttrKind::i64_list, std::nullopt},
              {"high", AttrKind::i64_list, std::nullopt},
              {"interior", AttrKind::i64_list, std::nullopt},
              {"value", AttrKind::f64, AttrValue{0.0}}};
  pd.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const int r = in[0].rank();
    for (const char* n : {"low", "high", "interior"}) require_per_axis(attrs, n, r);
    const I64List &lo = attrs.list("low"), &hi = attrs.list("high"), &it = attrs.list("interior");
    Shape s;
    for (int k = 0; k < r; ++k) {
      require(lo[k] >= 0 && hi[k] >= 0 && it[k] >= 0,
              "low, high, interior >= 0 on axis " + str(k) + ", got " + str(lo[k]) + ", " + str(hi[k]) +
                  ", " + str(it[k]));
      s.push_back(padded_len(in[0].shape[k], lo[k], hi[k], it[k]));
    }
    return with_shape(in[0], s);
  };
  pd.kernel = [](const KernelArgs& k) {
    const Array& x = *k.in[0];
    const I64List &lo = k.node.attrs.list("low"), &it = k.node.attrs.list("interior");
    const double value = k.node.attrs.f64("value");
    if (k.out.numel() != x.numel()) {  // some padding exists: fill, then place x
      std::byte v[8];
      visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T t{};
        if constexpr (std::is_same_v<T, std::uint8_t>) t = value != 0;  // bool
        else t = static_cast<T>(value);
        std::memcpy(v, &t, sizeof(T));
      });
      kernels::fill_elements(bytes(k.out), k.out.numel(), v, elem_size(x));
    }
    if (x.numel() == 0) return;
    auto os = strides_of(k.out.shape());
    std::int64_t offset = 0;
    StridedBox box{x.shape(), os, strides_of(x.shape())};
    for (std::size_t i = 0; i < os.size(); ++i) {
      offset += lo[i] * os[i];
      box.dst_strides[i] = os[i] * (it[i] + 1);
    }
    strided_copy(bytes(k.out) + offset * static_cast<std::int64_t>(elem_size(x)), bytes(x), elem_size(x), box);
  };
  defined_op("pad").emit_c = c_pad();
  pd.vjp = [](const VjpArgs& a) {  // pick the input's positions back out
    const I64List &lo = a.node.attrs.list("low"), &it = a.node.attrs.list("interior");
    const Shape& x = a.in[0].shape();
    I64List stops, steps;
    for (std::size_t i = 0; i < x.size(); ++i) {
      stops.push_back(lo[i] + x[i] + std::max<std::int64_t>(x[i] - 1, 0) * it[i]);
      steps.push_back(it[i] + 1);
    }
    return grads({slice(a.cotangent, lo, stops, steps)});
  };
  pd.test.cases = {
      {{Type{f64, {2, 3}}},
       {{"low", I64List{1, 0}}, {"high", I64List{0, 2}}, {"interior", I64List{1, 1}}, {"value", 0.5}}},
      {{Type{f64, {3}}}, {{"low", I64List{0}}, {"high", I64List{1}}, {"interior", I64List{0}}}},
      {{Type{f64, {2, 1}}}, {{"low", I64List{0, 1}}, {"high", I64List{1, 0}}, {"interior", I64List{2, 0}}}},
  };
}

void def_concat_flip() {
  OpDef& cat = define_op("concat");
  cat.doc = "joins the inputs (one or more, same dtype and rank >= 1) along `axis`; other dims must be equal";
  cat.arity = -1;
  cat.attrs = {{"axis", AttrKind::i64, std::nullopt}};
  cat.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const std::int64_t axis = attrs.i64("axis");
    const Type& t0 = in[0];
    require(t0.rank() >= 1, "inputs of rank >= 1");
    require(axis >= 0 && axis < t0.rank(), "axis " + str(axis) + " out of range [0, " + str(t0.rank()) + ")");
    Shape s = t0.shape;
    s[axis] = 0;
    for (const Type& t : in) {
      require(t.dtype == t0.dtype, "inputs of one dtype");
      bool same = t.rank() == t0.rank();
      for (int k = 0; same && k < t.rank(); ++k) same = k == axis || t.shape[k] == t0.shape[k];
      require(same, "inputs of equal shape except along axis " + str(axis));
      s[axis] += t.shape[axis];
    }
    return with_shape(t0, s);
  };
  cat.kernel = [](const KernelArgs& k) {
    const auto axis = static_cast<std::size_t>(k.node.attrs.i64("axis"));
    const auto os = strides_of(k.out.shape());
    const auto es = static_cast<std::int64_t>(elem_size(k.out));
    std::int64_t at = 0;
    if (k.out.numel() == 0) return;
    for (const Array* x : k.in) {
      StridedBox box{x->shape(), os, strides_of(x->shape())};
      strided_copy(bytes(k.out) + at * os[axis] * es, bytes(*x), elem_size(k.out), box);
      at += x->shape()[axis];
    }
  };
  defined_op("concat").emit_c = c_concat();
  cat.vjp = [](const VjpArgs& a) {
    const auto axis = static_cast<std::size_t>(a.node.attrs.i64("axis"));
    const Shape& o = a.out.shape();
    std::vector<Value> g;
    std::int64_t at = 0;
    for (const Value& x : a.in) {
      I64List starts(o.size(), 0), stops = o, steps(o.size(), 1);
      starts[axis] = at;
      stops[axis] = at += x.shape()[axis];
      g.push_back(slice(a.cotangent, starts, stops, steps));
    }
    return g;
  };
  cat.test.cases = {
      {{Type{f64, {2, 1}}, Type{f64, {2, 3}}, Type{f64, {2, 2}}}, {{"axis", std::int64_t{1}}}},
      {{Type{f64, {1, 2}}, Type{f64, {3, 2}}}, {{"axis", std::int64_t{0}}}},
  };

  OpDef& fl = define_op("flip");
  fl.doc = "reverses the order of elements along each listed axis; empty list: unchanged";
  fl.attrs = {{"axes", AttrKind::i64_list, std::nullopt}};
  fl.infer = [](std::span<const Type> in, const Attrs& attrs) {
    check_axes(attrs.list("axes"), in[0].rank());
    return in[0];
  };
  fl.kernel = [](const KernelArgs& k) {
    const Shape& x = k.in[0]->shape();
    auto xs = strides_of(x);
    std::int64_t offset = 0;
    for (auto a : k.node.attrs.list("axes")) {
      if (x[a] > 0) offset += (x[a] - 1) * xs[a];
      xs[a] = -xs[a];
    }
    gather_into_out(k, offset, std::move(xs));
  };
  defined_op("flip").emit_c = c_flip();
  fl.vjp = [](const VjpArgs& a) { return grads({flip(a.cotangent, a.node.attrs.list("axes"))}); };
  fl.test.cases = {
      {{Type{f64, {2, 3}}}, {{"axes", I64List{1}}}},
      {{Type{f64, {2, 3, 2}}}, {{"axes", I64List{0, 2}}}},
      {{Type{f64, {4}}}, {{"axes", I64List{0}}}},
  };
}

}  // namespace

void register_shape_ops() {
  def_reshapes();
  def_permute_broadcast();
  def_slice_pad();
  def_concat_flip();
}

}  // namespace mg::ir
