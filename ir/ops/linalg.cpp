// Linear-algebra ops: matmul over equal batch dims (the DSL broadcasts batch dims and
// promotes 1-D operands with unsqueeze/squeeze before it gets here). Float kernels run our
// GEMM (the C99 backend's, compiled in) or OpenBLAS, by shape, once per batch matrix; i64 uses a plain row-parallel loop with wrapping
// arithmetic (no signed-overflow UB). Invariant: a k = 0 product is all zeros.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/c_kernels.hpp"
#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/gemv.hpp"
#include "minigrad/ir/ops/native_kernels.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

struct MatmulDims {
  std::int64_t batch, m, k, n;
};

// Which operands are read transposed (their buffers hold the [..., k, m] / [..., n, k]
// matrices: a transpose view the interpreter did not materialise).
struct Transposed {
  bool a = false, b = false;
};

// Dimensions from the operands' buffers; a transposed operand's buffer holds [..., k, m]
// (or [..., n, k]): the view node's operand.
MatmulDims matmul_dims(const Node& node, const Shape& as, const Shape& bs, Transposed t) {
  const std::size_t r = as.size();
  MatmulDims d{1, as[r - (t.a ? 1 : 2)], as[r - (t.a ? 2 : 1)], bs[r - (t.b ? 2 : 1)]};
  for (std::size_t i = 0; i + 2 < r; ++i) d.batch *= as[i];
  MG_ASSERT(d.m <= INT_MAX && d.k <= INT_MAX && d.n <= INT_MAX,
            node.op_name() + ": matrix dimension exceeds the BLAS integer range");
  return d;
}

// Ours or OpenBLAS, by shape, measured on one AVX-512 core (1 thread, the emitted text
// compiled -O3 -march=native, calls alternating with OpenBLAS's): ours/OpenBLAS in f32 at
// the MLP step's shapes is 1.24 (x @ W^T, 128x784x128), 1.04 (128x128x784), 0.97
// (x^T @ g, 784x128x128), 1.02 (128^3, A^T), 1.0-1.1 at 256-1024^3 (f64: 1.14, 1.03, 1.25,
// 1.16 at 256^3, 0.94 at 1024^3), but 0.78 / 0.68 with n or k = 10 (the logits layer: a
// 32-wide tile mostly padding, or too little k to amortise a tile's load and store of C);
// fewer than 8 rows is batch-1 work our unpacked path does (not compiled in here). But the
// choice must not depend on the product's orientation: `fuse` computes (a @ b).T as
// b.T @ a.T, bit for bit only when both run the same GEMM (ours sums each element alike
// either way; OpenBLAS's Haswell kernels, which it runs on AMD Zen, do not). So ours when
// both m and n reach 8 and one reaches 32, whatever k (on a Zen 5 core the MLP step's
// 128x128x10 and 128x10x128 products took the same time as OpenBLAS's: 9 us each).
bool ours_wins(const MatmulDims& d) { return std::min(d.m, d.n) >= 8 && std::max(d.m, d.n) >= 32; }

// B's packed panels: KC x roundup(n, NR) per thread (+ a cache line to align), so the
// threads split C by rows, each packing the B it reads (gemm_c99.cpp: threads on columns
// of the same rows slow each other down). Kept per calling thread up to 8 MiB (no
// allocation per call): fewer slices than threads when they would not fit (the rest split
// columns), and a B whose one slice is larger gets a buffer of its own for the call.
template <class T>
bool gemm_ours(const T* a, const T* b, T* c, const MatmulDims& d, Transposed t) {
  constexpr std::int64_t kKept = std::int64_t{8} << 20;
  const native::Kernels<T>* ours = native::kernels<T>();
  if (!ours || !ours_wins(d)) return false;
  const std::int64_t slice = gemm_c99::bpack_bytes(d.n, d.k, sizeof(T)) - gemm_c99::kAlign;
  const std::int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const std::int64_t slices = std::clamp<std::int64_t>((kKept - gemm_c99::kAlign) / slice, 1, std::max<std::int64_t>(threads, 1));
  const auto need = static_cast<std::size_t>((slice * slices + gemm_c99::kAlign + sizeof(T) - 1) / sizeof(T));
  thread_local std::vector<T> kept;
  std::vector<T> once;
  std::vector<T>& buf = static_cast<std::int64_t>(need * sizeof(T)) <= kKept ? kept : once;
  if (buf.size() < need) buf.resize(need);
  ours->gemm(d.m, d.n, d.k, a, t.a ? 1 : d.k, t.a ? d.m : 1, b, t.b ? 1 : d.n, t.b ? d.k : 1, c, buf.data(), slices);
  return true;
}
// C[m,n] = A[m,k] @ B[k,n], row-major, for one batch matrix.
void gemm(const float* a, const float* b, float* c, const MatmulDims& d, Transposed t) {
  if (gemm_ours(a, b, c, d, t)) return;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_sgemm(CblasRowMajor, t.a ? CblasTrans : CblasNoTrans, t.b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              t.a ? m : k, b, t.b ? k : n, 0.0f, c, n);
}
void gemm(const double* a, const double* b, double* c, const MatmulDims& d, Transposed t) {
  if (gemm_ours(a, b, c, d, t)) return;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_dgemm(CblasRowMajor, t.a ? CblasTrans : CblasNoTrans, t.b ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
              t.a ? m : k, b, t.b ? k : n, 0.0, c, n);
}
// i64: i-k-j order (contiguous inner loop over B's and C's rows); wraps on overflow. Reads
// no views (kernel_reads_view says so for integers).
void gemm(const std::int64_t* a, const std::int64_t* b, std::int64_t* c, const MatmulDims& d, Transposed) {
  const std::int64_t m = d.m, k = d.k, n = d.n;
#pragma omp parallel for schedule(static) if (m * n * k >= (1 << 16))
  for (std::int64_t i = 0; i < m; ++i) {
    auto* ci = reinterpret_cast<std::uint64_t*>(c + i * n);
    for (std::int64_t j = 0; j < n; ++j) ci[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      const auto aip = static_cast<std::uint64_t>(a[i * k + p]);
      const auto* bp = reinterpret_cast<const std::uint64_t*>(b + p * n);
      for (std::int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

// A view that reads a contiguous buffer with the last two axes swapped (a batch of
// transposed matrices, which BLAS reads in place); `shape` is the view's own.
bool is_matrix_transpose(const CView& v, const Shape& shape) {
  const std::size_t r = shape.size();
  if (r < 2 || v.offset != 0 || v.strides.size() != r) return false;
  if (v.strides[r - 2] != 1 || v.strides[r - 1] != shape[r - 2]) return false;
  std::int64_t s = shape[r - 2] * shape[r - 1];
  for (std::size_t i = r - 2; i-- > 0;) {
    if (shape[i] != 1 && v.strides[i] != s) return false;
    s *= shape[i];
  }
  return true;
}

bool matmul_reads_view(const Node&, std::size_t operand, const CView& v, std::span<const Type> in) {
  return operand < 2 && is_float(in[operand].dtype) && is_matrix_transpose(v, in[operand].shape);
}

void matmul_kernel(const KernelArgs& args) {
  const auto transposed = [&](std::size_t k) { return k < args.in_views.size() && !args.in_views[k].contiguous(); };
  const Transposed t{transposed(0), transposed(1)};
  const Array& a = *args.in[0];
  const Array& b = *args.in[1];
  const MatmulDims d = matmul_dims(args.node, a.shape(), b.shape(), t);
  if (args.out.numel() == 0) return;
  if (d.k == 0) {  // empty sum: BLAS rejects lda = 0, and the answer is zeros anyway
    std::memset(args.out.raw(), 0, args.out.nbytes());
    return;
  }
  visit_dtype(args.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      MG_ASSERT(false, "matmul: unsupported dtype bool");
    } else {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = args.out.data<T>();
      // One row (batch-1 inference): a pass over B at the cache's bandwidth (ops/gemv.hpp).
      constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
      // Many small matrices (attention's per-head [L, D] x [D, S]): one thread per matrix.
      // Inside, OpenBLAS and our GEMM see a parallel region and run on their thread alone;
      // split across threads, a 256x256x16 product spent more time in barriers than in FMAs.
      const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
      const bool per_matrix = threads > 1 && d.batch >= threads && d.m * d.n * d.k <= (std::int64_t{1} << 22);
      const auto product = [&](std::int64_t i) {
        if constexpr (kFloat) {
          if (d.m == 1) {
            gemv::gemv(pa + i * d.k, pb + i * d.k * d.n, t.b ? 1 : d.n, t.b ? d.k : 1, pc + i * d.n, d.n, d.k);
            return;
          }
        }
        gemm(pa + i * d.m * d.k, pb + i * d.k * d.n, pc + i * d.m * d.n, d, t);
      };
      // Only a region that runs in parallel: an inactive `if (false)` region around the GEMM
      // makes every parallel region inside it a nested team, which libgomp starts with new
      // threads each time (the MLP step's 2-thread time went 0.4 -> 4 ms).
      if (per_matrix) {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < d.batch; ++i) product(i);
      } else {
        for (std::int64_t i = 0; i < d.batch; ++i) product(i);
      }
    }
  });
}

Type matmul_infer(std::span<const Type> in, const Attrs&) {
  const Type& a = in[0];
  const Type& b = in[1];
  require(allowed(a.dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
  require(a.dtype == b.dtype, "expects operands of the same dtype");
  require(a.rank() >= 2 && b.rank() >= 2,
          "expects operands of rank >= 2 (the DSL promotes 1-D operands)");
  require(a.rank() == b.rank(), "expects operands of equal rank (broadcast batch dims explicitly)");
  const std::size_t r = a.shape.size();
  for (std::size_t i = 0; i + 2 < r; ++i)
    require(a.shape[i] == b.shape[i], "expects identical batch dims (broadcast explicitly)");
  require(a.shape[r - 1] == b.shape[r - 2],
          "expects a[..., m, k] and b[..., k, n] with matching k");
  Type out = a;
  out.shape[r - 1] = b.shape[r - 1];
  return out;
}

// ---- C99 emission ----------------------------------------------------------------------


// An operand as the GEMM reads it: batch matrix q at `base + offset(q)`, rows/cols strides.
struct GemmOperand {
  std::string base;    // C expression of matrix q's first element
  std::int64_t rs, cs;  // element strides of rows and columns
};

GemmOperand gemm_operand(const std::string& ptr, const Type& t, const CView& v) {
  const std::size_t r = t.shape.size();
  if (v.contiguous())
    return {ptr + " + q * " + std::to_string(t.shape[r - 2] * t.shape[r - 1]), t.shape[r - 1], 1};
  const Shape batch(t.shape.begin(), t.shape.end() - 2);
  const std::vector<std::int64_t> bs(v.strides.begin(), v.strides.end() - 2);
  std::string off = std::to_string(v.offset);
  if (!batch.empty()) off += " + " + c_offset("q", batch, bs);
  return {ptr + " + " + off, v.strides[r - 2], v.strides[r - 1]};
}

// B scratch slices a module plans for one product: a slice per row group of threads
// (gemm_c99.cpp) when the GEMM threads itself, else one. The extra slices, KC x n each, are
// at most a few times B's own bytes, and a GEMM too small to thread (a microcontroller
// model's) adds nothing to the arena.
std::int64_t bpack_slices(std::int64_t m, std::int64_t n, std::int64_t k) {
  return m * n * k >= gemm_c99::kThreadMin ? gemm_c99::kModuleSlices : 1;
}

// A batch of small products (attention's per-head GEMMs, each below the GEMM's own
// threading threshold, gemm_c99::kThreadMin): threads over the batch instead, each
// packing B on its own stack when there are several (the planned scratch is one).

bool threads_over_batch(DType t, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  return batch > 1 && is_float(t) && m >= gemm_c99::kSmallM && m * n * k < gemm_c99::kThreadMin &&
         batch * m * n * k >= gemm_c99::kThreadMin;
}

void matmul_c(const CLoopArgs& a) {
  const Shape& as = a.in_types[0].shape;
  const std::size_t r = as.size();
  const std::int64_t m = as[r - 2], k = as[r - 1], n = a.node.type.shape[r - 1];
  std::int64_t batch = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) batch *= as[i];
  const DType t = a.node.type.dtype;
  if (a.node.type.numel() == 0) return;
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  if (k == 0) {
    c_for(a.w, "i", a.node.type.numel(), a.node.type.numel(), true);
    a.w.line(a.out + "[i] = 0;");
    a.w.close();
    return;
  }
  const CView none;
  const GemmOperand A = gemm_operand(a.in[0], a.in_types[0], a.in_views.empty() ? none : a.in_views[0]);
  const GemmOperand B = gemm_operand(a.in[1], a.in_types[1], a.in_views.size() < 2 ? none : a.in_views[1]);
  const std::string C = a.out + " + q * " + std::to_string(m * n);
  const std::string strides_a = A.base + ", " + std::to_string(A.rs) + ", " + std::to_string(A.cs);
  const std::string strides_b = B.base + ", " + std::to_string(B.rs) + ", " + std::to_string(B.cs);
  const std::string T = c_type(t), S = std::string(name_of(t));
  const bool batch_threads = threads_over_batch(t, batch, m, n, k) && !a.scratch.empty();
  if (batch_threads) {
    // One thread (or no OpenMP) keeps the planned scratch: packing on the stack re-packs A
    // per column panel, 10% slower at 64 x 64 x 32.
    a.w.line("#ifdef _OPENMP");
    a.w.line(T + "* const mg_bs = omp_get_max_threads() > 1 ? 0 : (" + T + "*)" + a.scratch + ";");
    a.w.line("#else");
    a.w.line(T + "* const mg_bs = (" + T + "*)" + a.scratch + ";");
    a.w.line("#endif");
    a.w.line("MG_OMP(omp parallel for schedule(static))");
  }
  a.w.open("for (int64_t q = 0; q < " + std::to_string(batch) + "; ++q)");
  if (t == DType::i64) {  // wrapping i-k-j loop
    c_for(a.w, "i", m, m * n * k, false);
    a.w.line("uint64_t* ci = (uint64_t*)(" + C + ") + i * " + N + ";");
    a.w.line("int64_t j, p;");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] = 0;");
    a.w.open("for (p = 0; p < " + K + "; ++p)");
    a.w.line("const uint64_t aip = (uint64_t)(" + A.base + ")[i * " + std::to_string(A.rs) + " + p * " +
             std::to_string(A.cs) + "];");
    a.w.line("const int64_t* bp = " + B.base + " + p * " + std::to_string(B.rs) + ";");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] += aip * (uint64_t)bp[j * " + std::to_string(B.cs) + "];");
    a.w.close();
    a.w.close();
  } else if (m == 1 && gemv::applies(A.cs, B.rs, B.cs)) {
    // One row (batch-1 inference): the interpreter's loop nest (ops/gemv.hpp).
    a.support("mg_gemv_" + S, gemm_c99::substitute(gemv::kCText, t));
    a.w.line("mg_gemv_" + S + "(" + N + ", " + K + ", " + A.base + ", " + B.base + ", " + std::to_string(B.rs) + ", " +
             std::to_string(B.cs) + ", " + C + ");");
  } else if (m < gemm_c99::kSmallM) {
    // A few rows: our unpacked loops (batch-1 latency: no BLAS call overhead either).
    a.w.line(c_kernels::use_gemm(a, t, true) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ");");
  } else if (!a.scratch.empty()) {
    // Our packed GEMM (gemm_c99.cpp), in the JIT too: no BLAS call, transposes read in
    // place, and at the MLP's shapes 1.0-1.2x OpenBLAS on one AVX-512 core (bench/c99_bench (c)).
    a.w.line(c_kernels::use_gemm(a, t, false) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ", " +
             (batch_threads ? "mg_bs" : "(" + T + "*)" + a.scratch) + ", " + std::to_string(bpack_slices(m, n, k)) + ");");
  } else {
    // No planned scratch (a caller that plans none): B panels packed one at a time on the
    // stack (A re-packed per panel unless there is one panel).
    a.w.line(c_kernels::use_gemm(a, t, false) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ", 0, 1);");
  }
  a.w.close();
}

std::int64_t matmul_scratch(const Node& node, std::span<const Type> in) {
  const Shape& as = in[0].shape;
  const std::size_t r = as.size();
  const std::int64_t m = as[r - 2], k = as[r - 1], n = node.type.shape[r - 1];
  if (!is_float(node.type.dtype) || m < gemm_c99::kSmallM || k == 0 || node.type.numel() == 0) return 0;
  return gemm_c99::bpack_bytes(n, k, static_cast<std::int64_t>(size_of(node.type.dtype)), bpack_slices(m, n, k));
}

// x with its last two axes swapped. A transpose of a transpose (the backward of a
// Linear's x @ weight.T) is its operand, not a second node: the backward GEMM then reads
// the weight itself, and weight.T stays a view every GEMM reads in place; a materialised
// weight.T would otherwise live from the forward to the backward (a training step's
// planned peak growing with depth by the weights' bytes).
Value transposed(Value x) {
  const Node& n = x.node();
  if (n.kind == NodeKind::op && n.op == &defined_op("permute")) {
    const I64List& p = n.attrs.list("perm");
    const std::size_t r = p.size();
    bool swap_last2 = r >= 2 && p[r - 1] == static_cast<std::int64_t>(r - 2) && p[r - 2] == static_cast<std::int64_t>(r - 1);
    for (std::size_t i = 0; i + 2 < r; ++i) swap_last2 = swap_last2 && p[i] == static_cast<std::int64_t>(i);
    if (swap_last2) return Value{x.graph, n.inputs[0]};
  }
  return transpose_last2(x);
}

}  // namespace

void register_linalg_ops() {
  OpDef& mm = define_op("matmul");
  mm.doc =
      "a[...,m,k] @ b[...,k,n] -> [...,m,n]; rank >= 2, identical batch dims, same dtype "
      "(f32, f64, i64; i64 wraps on overflow); k = 0 gives zeros";
  mm.arity = 2;
  mm.infer = matmul_infer;
  mm.kernel = matmul_kernel;
  mm.kernel_reads_view = matmul_reads_view;  // transposes go to BLAS in place
  mm.emit_c = c_loops(matmul_c);
  mm.emit_c.reads_views = true;  // strided operands (transposes) go to the GEMM in place
  mm.emit_c.scratch = matmul_scratch;
  mm.vjp = [](const VjpArgs& a) {
    if (!is_float(a.out.dtype())) return grads({Value{}, Value{}});
    Value g = a.cotangent;
    return grads({matmul(g, transposed(a.in[1])), matmul(transposed(a.in[0]), g)});
  };
  mm.test.cases = {
      {{Type{f64, {2, 3}}, Type{f64, {3, 4}}}, {}},
      {{Type{f64, {2, 2, 3}}, Type{f64, {2, 3, 2}}}, {}},
      {{Type{f64, {1, 1}}, Type{f64, {1, 1}}}, {}},
  };
}

}  // namespace mg::ir
