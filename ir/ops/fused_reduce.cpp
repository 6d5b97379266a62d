// Kind "reduce" of the `fused` op: the region's elementwise body is evaluated window by
// window and folded straight into the outputs by the final reduction's `fold`, so the
// value reduced never gets a full-size buffer. Bit-identical to the unfused graph: the
// folds visit the elements in exactly the order and association of reduce_kernel.hpp's
// fold() (same view, lanes, segments and splits), and every window starts at a multiple
// of 64 elements and ends at one (or at the loop's end), so each body kernel vectorises
// each element exactly as it does over a whole buffer. Knows no op by name.
#include <algorithm>

#include "minigrad/ir/ops/fused_body.hpp"
#include "minigrad/ir/ops/fused_tasks.hpp"
#include "minigrad/ir/ops/reduce_c.hpp"
#include "minigrad/ir/ops/reduce_kernel.hpp"

namespace mg::ir {

namespace {

using namespace kernels;
using fused::BodyEval;
using fused::for_tasks;

constexpr std::int64_t kAlign = 64;                          // elements; a multiple of every SIMD width
constexpr std::int64_t kSpan = fused::kTile - 2 * kAlign;   // values asked for at once
constexpr int kLanes = kernels::kFoldLanes;                 // fold_run's lanes
static_assert(kSpan % kLanes == 0, "spans keep fold_run's lane of each element");

// The body's values at any run of loop indices.
template <class T>
class Source {
 public:
  Source(const BodyEval& e, std::int64_t total) : e_(e), total_(total) {}
  // Values at [s, s + len), len <= kSpan, computed over the enclosing aligned window.
  const T* at(BodyEval::Scratch& sc, std::int64_t s, std::int64_t len) const {
    const std::int64_t lo = s / kAlign * kAlign;
    const std::int64_t hi = std::min(total_, (s + len + kAlign - 1) / kAlign * kAlign);
    return static_cast<const T*>(e_.run(sc, lo, hi - lo, nullptr)) + (s - lo);
  }

 private:
  const BodyEval& e_;
  std::int64_t total_;
};

// fold_run<R, false>(acc, values at [start, start + n), n) of reduce_kernel.hpp, with the
// values computed kSpan at a time (spans are whole lanes, so lanes carry across them).
template <class R, class T>
typename R::Acc fold_piece(typename R::Acc acc, const Source<T>& src, BodyEval::Scratch& sc, std::int64_t start,
                           std::int64_t n) {
  using A = typename R::Acc;
  if (n < 2 * kLanes) {
    const T* p = src.at(sc, start, n);
    for (std::int64_t i = 0; i < n; ++i) acc = R::step(acc, static_cast<A>(p[i]));
    return acc;
  }
  A lane[kLanes];
  for (auto& l : lane) l = R::init();
  const std::int64_t main = n / kLanes * kLanes;
  for (std::int64_t c = 0; c < n; c += kSpan) {
    const std::int64_t len = std::min(kSpan, n - c), lanes_end = std::min(len, main - c);
    const T* p = src.at(sc, start + c, len);
    for (std::int64_t i = 0; i < lanes_end; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] = R::step(lane[j], static_cast<A>(p[i + j]));
    if (c + len == n) {
      for (auto l : lane) acc = R::combine(acc, l);
      for (std::int64_t i = lanes_end; i < len; ++i) acc = R::step(acc, static_cast<A>(p[i]));
    }
  }
  return acc;
}

// fold<R>() of reduce_kernel.hpp over the body's values: out[j] = fin(fold of output j).
template <class R, class T, class Fin>
void fold_fused(const BodyEval& eval, const Source<T>& src, const ReduceView& v, T* out, Fin fin) {
  using A = typename R::Acc;
  const std::int64_t n_out = v.num_out(), n_red = v.num_reduced();
  if (v.empty) {
    for (std::int64_t j = 0; j < n_out; ++j) out[j] = fin(R::init());
    return;
  }
  const bool par = n_out * n_red >= kReduceParallel;  // also decides fold()'s split
  if (v.inner == 1) {
    const std::int64_t split =
        par && n_out < kMaxSplit ? std::clamp<std::int64_t>(n_red / kSplitChunk, 1, kMaxSplit) : 1;
    std::vector<A> part(static_cast<std::size_t>(split > 1 ? n_out * split : 0));
    for_tasks(eval, n_out * split, par, [&](BodyEval::Scratch& sc, std::int64_t t) {
      const std::int64_t o = t / split, s = t % split, k1 = n_red * (s + 1) / split;
      A acc = R::init();
      for (std::int64_t k = n_red * s / split; k < k1;) {
        const std::int64_t r = k / v.run, l = k % v.run, len = std::min(v.run - l, k1 - k);
        acc = fold_piece<R>(acc, src, sc, v.outs[o] + v.rows[r] + l, len);
        k += len;
      }
      if (split == 1) out[o] = fin(acc);
      else part[static_cast<std::size_t>(t)] = acc;
    });
    for (std::int64_t o = 0; o < n_out && split > 1; ++o) {
      A acc = part[static_cast<std::size_t>(o * split)];
      for (std::int64_t s = 1; s < split; ++s) acc = R::combine(acc, part[static_cast<std::size_t>(o * split + s)]);
      out[o] = fin(acc);
    }
    return;
  }
  // inner > 1: each output folds its rows in order, one step each (fold()'s tiles only
  // group outputs), so blocks of outputs and batches of contiguous rows keep the bits.
  const std::int64_t block = std::min(v.inner, kSpan), nblocks = (v.inner + block - 1) / block;
  const bool contiguous = nblocks == 1 && v.rows.list.empty() && v.rows.stride == v.inner;
  const std::int64_t batch = contiguous ? std::max<std::int64_t>(1, kSpan / v.inner) : 1;
  for_tasks(eval, v.outs.count * nblocks, par, [&](BodyEval::Scratch& sc, std::int64_t t) {
    const std::int64_t o = t / nblocks, i0 = (t % nblocks) * block, len = std::min(block, v.inner - i0);
    std::vector<A> acc(static_cast<std::size_t>(len), R::init());
    for (std::int64_t r = 0; r < v.rows.count; r += batch) {
      const std::int64_t nb = std::min(batch, v.rows.count - r);
      const T* p = src.at(sc, v.outs[o] + i0 + v.rows[r], nb == 1 ? len : nb * v.inner);
      for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t i = 0; i < len; ++i)
          acc[static_cast<std::size_t>(i)] = R::step(acc[static_cast<std::size_t>(i)], static_cast<A>(p[b * v.inner + i]));
    }
    for (std::int64_t i = 0; i < len; ++i) out[o * v.inner + i0 + i] = fin(acc[static_cast<std::size_t>(i)]);
  });
}

// The reduction's fold in its kernel's accumulator type (fold_kernel in reduce.cpp:
// acc_t<T> for sums, means and products, T itself for max and min).
template <template <class> class R, bool Wide, class T>
void run_fold(const BodyEval& eval, const ReduceView& v, std::int64_t total, T* out, bool mean) {
  using A = std::conditional_t<Wide, acc_t<T>, T>;
  const double n = static_cast<double>(v.num_reduced());
  const Source<T> src(eval, total);
  if (mean) fold_fused<R<A>>(eval, src, v, out, [n](A acc) { return static_cast<T>(static_cast<double>(acc) / n); });
  else fold_fused<R<A>>(eval, src, v, out, [](A acc) { return static_cast<T>(acc); });
}

}  // namespace

void fused_reduce_kernel(const KernelArgs& k, const fused::BodyPlan& p) {
  const Node& red = k.node.regions[0]->node(p.reduce);
  const ReduceView v = view_reduction(p.loop.shape, red.attrs.list("axes"));
  const BodyEval eval(k.node, p, k.in, nullptr);
  const std::int64_t total = p.loop.numel();
  visit_numeric<true>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    T* out = k.out.data<T>();
    switch (red.op->fold) {
      case Fold::sum: return run_fold<SumOp, true>(eval, v, total, out, false);
      case Fold::mean: return run_fold<SumOp, true>(eval, v, total, out, true);
      case Fold::prod: return run_fold<ProdOp, true>(eval, v, total, out, false);
      case Fold::max: return run_fold<MaxOp, false>(eval, v, total, out, false);
      case Fold::min: return run_fold<MinOp, false>(eval, v, total, out, false);
      case Fold::none: break;
    }
    MG_ASSERT(false, "fused: the final reduction is not a plain fold");
  });
}

// C99: the reduction's loop nest (reduce_c.hpp) with each element computed by the body's
// expressions at its flat loop index instead of read from a buffer. The innermost loop is
// a simd reduction as the plain fold's (libm calls in the body vectorise through libmvec,
// see runtime/c99/module.cpp; LayerNorm's and softmax's backward row sums were scalar).
void fused_reduce_c(const CLoopArgs& a, const fused::BodyPlan& p) {
  const Graph& body = *a.node.regions[0];
  const Node& red = body.node(p.reduce);
  const fused::CBody c = fused::c_body(body, p, fused::c_names(body, a), "i");
  const CReduce r(p.loop.shape, red.attrs.list("axes"));
  const CFold f = c_fold_parts(red.op->fold, red.type.dtype, r.n_red);
  const std::string x = "      const " + c_type(p.loop.dtype) + " x = " + c.value[p.result] + ";";
  // (void)i: a body of splat broadcasts never reads its index.
  auto element = [&](const std::string& idx) { return "const int64_t i = " + idx + "; (void)i;\n" + c.code + x; };
  if (r.by_rows()) return r.emit_rows(a.w, element, f.acc_type, f.init, f.step, f.fin, a.out);
  r.emit(a.w, "    " + f.acc_type + " acc = " + f.init + ";\n" + r.pass(element, f.step, f.simd, "MG_OMP_GCC") + "    " + a.out + "[o] = " +
                  f.fin + ";\n");
}

}  // namespace mg::ir
