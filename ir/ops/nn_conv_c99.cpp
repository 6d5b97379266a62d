// C99 emission of the convolutions: im2col into the step's arena scratch (the export stays
// malloc-free), then our packed GEMM's text (gemm_c99.cpp, the kernel matmul emits); col2im
// for the input gradient. The direct loop nests (one output element per iteration) were
// 6x slower than the interpreter on example 05's CNN: scalar, a bounds test per MAC.
// Small GEMMs (under mg_gemm's own threading threshold) run in one OpenMP loop over the
// (sample, group) pairs with B packed on the stack; larger ones thread themselves with B's
// panels in the scratch. Columns are bounded per chunk of the batch (kColBudget).
#include "minigrad/ir/ops/nn_conv_c99.hpp"

#include <algorithm>

#include "minigrad/ir/ops/c_kernels.hpp"
#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/nn_conv_c99_text.hpp"
#include "minigrad/ir/ops/nn_rules.hpp"

namespace mg::ir::nn {

namespace {

using conv_c99::kCol2im;
using conv_c99::kIm2col;

constexpr std::int64_t kColBudget = 1 << 21;      // elements of im2col columns per chunk
constexpr std::int64_t kParallel = kCParallelWork;
constexpr std::int64_t kSmallRows = 16;
constexpr std::int64_t kSmallB = 256 * 1024;  // bytes of B the unpacked GEMM re-reads per row

std::string S(std::int64_t v) { return std::to_string(v); }

// The shared dimensions of one emission.
struct Plan {
  ConvGeom g;
  std::int64_t R, K, L, Og, nb;  // im2col rows, rows per group, columns per sample, O/G, samples per chunk
};
Plan plan_of(const ConvGeom& g) {
  const std::int64_t R = g.C * g.kh * g.kw, L = g.Ho * g.Wo;
  const std::int64_t nb = std::clamp<std::int64_t>(kColBudget / std::max<std::int64_t>(1, R * L), 1, std::max<std::int64_t>(1, g.N));
  return {g, R, R / g.G, L, g.O / g.G, nb};
}
// Degenerate sizes (an empty dimension): the direct loops handle them.
bool degenerate(const Plan& p) { return p.g.N == 0 || p.R == 0 || p.L == 0 || p.Og == 0; }

std::int64_t align(std::int64_t bytes) { return (bytes + 63) / 64 * 64; }

// The GEMM of one (sample, group) task, m x n x k: small ones share one parallel loop.
bool outer_parallel(std::int64_t tasks, std::int64_t m, std::int64_t n, std::int64_t k) {
  return tasks > 1 && m * n * k < gemm_c99::kThreadMin && tasks * m * n * k >= kParallel;
}

std::string geometry_args(const ConvGeom& g) {
  return S(g.H) + ", " + S(g.W) + ", " + S(g.Ho) + ", " + S(g.Wo) + ", " + S(g.kh) + ", " + S(g.kw) + ", " + S(g.sh) +
         ", " + S(g.sw) + ", " + S(g.ph) + ", " + S(g.pw) + ", " + S(g.dh) + ", " + S(g.dw);
}

std::string use(const CLoopArgs& a, const char* what) {
  const DType t = a.node.type.dtype;
  const std::string s(name_of(t)), name = std::string("mg_conv_") + what + "_" + s;
  a.support(name, gemm_c99::substitute(what == std::string("im2col") ? kIm2col : kCol2im, t));
  return name;
}
void pragma_if(CWriter& w, const std::string& cond) { w.line("MG_OMP(omp parallel for schedule(static) if (" + cond + "))"); }

// Few rows (a conv's output channels per group: 8-16 in small CNNs) and B within L2: the
// unpacked GEMM, one row of C per OpenMP iteration (it streams B once per row anyway).
// Packing B for 8 or 16 rows of A cost as much as the tiles (perf, example 05's convs).
bool small_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t sz) {
  return m <= kSmallRows && n * k * sz <= kSmallB;
}

// The GEMMs of `tasks` tasks (a C expression; at most max_tasks), m x n x k each (k at
// most kmax): task tt's operands are the C expressions A, B, C over what `vars` defines
// from tt; strides are C expressions too.
struct GemmLoop {
  std::string tasks;
  std::int64_t max_tasks, m, n;
  std::string k;
  std::int64_t kmax;
  std::string vars, A, ars, acs, B, brs, bcs, C;
};
// Whether the GEMMs of a loop take the blocks of dot products (kDots): A's and B^T's rows
// contiguous along k, each task's GEMM below mg_gemm's threading size or one the unpacked
// GEMM would take (a weight gradient's segments of the batch).
bool dots(const GemmLoop& q, std::int64_t sz) {
  return q.acs == "1" && q.brs == "1" && (q.m * q.n * q.kmax < gemm_c99::kThreadMin || small_gemm(q.m, q.n, q.kmax, sz));
}
// Whether they take the in-place tiles (kTiles): B's rows contiguous, and each task's GEMM
// below the size from which mg_gemm threads itself (the loop over tasks and blocks of rows
// is the threading).
bool tiled(const GemmLoop& q) { return q.bcs == "1" && q.m * q.n * q.kmax < gemm_c99::kThreadMin; }

// The call of the tiles for rows [row, row + rows) of task tt's GEMM (C expressions).
std::string tile_call(const CLoopArgs& a, const GemmLoop& q, const std::string& rows, const std::string& row) {
  return c_kernels::use(a, c_kernels::Kernel::conv_tiles, a.node.type.dtype) + "(" + rows + ", " + S(q.n) + ", " + q.k +
         ", " + q.A + " + " + row + " * " + q.ars + ", " + q.ars + ", " + q.acs + ", " + q.B + ", " + q.brs + ", " + q.C +
         " + " + row + " * " + S(q.n) + ");";
}
// Tiled GEMMs of many tasks (a batch of samples): each task's im2col (or col2im) beside its
// GEMM in one OpenMP iteration, the columns still in L2 (64 samples' columns, 3.6 MB on
// example 05, went to L3 and back between the two loops).
constexpr std::int64_t kMergeTasks = 16;
bool merged(const GemmLoop& q) { return tiled(q) && q.max_tasks >= kMergeTasks; }

void emit_gemms(const CLoopArgs& a, const GemmLoop& q, std::int64_t bp_at) {
  const DType t = a.node.type.dtype;
  const std::string s(name_of(t)), T = c_type(t);
  c_kernels::use_macros(a, t);
  if (dots(q, static_cast<std::int64_t>(size_of(t)))) {
    const std::string dots_fn = c_kernels::use(a, c_kernels::Kernel::conv_dots, t);
    const std::string RB = "MG_DOTS_RB", rb = "((" + S(q.m) + " + " + RB + " - 1) / " + RB + ")";
    pragma_if(a.w, "(" + q.tasks + ") * " + S(q.m * q.n * q.kmax) + " >= " + S(kParallel));
    a.w.open("for (int64_t t = 0; t < (" + q.tasks + ") * " + rb + "; ++t)");
    a.w.line("const int64_t tt = t / " + rb + ", row = t % " + rb + " * " + RB + ";");
    a.w.line(q.vars);
    a.w.line(dots_fn + "(" + S(q.m) + " - row < " + RB + " ? " + S(q.m) + " - row : " + RB + ", " +
             S(q.n) + ", " + q.k + ", " + q.A + " + row * " + q.ars + ", " + q.ars + ", " + q.B + ", " + q.bcs + ", " +
             q.C + " + row * " + S(q.n) + ");");
    a.w.close();
    return;
  }
  if (tiled(q)) {
    // One block of MR rows per iteration (MR: the compiling machine's, a C constant).
    const std::string MR = "MG_GEMM_MR_" + s, rb = "((" + S(q.m) + " + " + MR + " - 1) / " + MR + ")";
    pragma_if(a.w, "(" + q.tasks + ") * " + S(q.m * q.n * q.kmax) + " >= " + S(kParallel));
    a.w.open("for (int64_t t = 0; t < (" + q.tasks + ") * " + rb + "; ++t)");
    a.w.line("const int64_t tt = t / " + rb + ", row = t % " + rb + " * " + MR + ";");
    a.w.line(q.vars);
    a.w.line(tile_call(a, q, S(q.m) + " - row < " + MR + " ? " + S(q.m) + " - row : " + MR, "row"));
    a.w.close();
    return;
  }
  const bool small = small_gemm(q.m, q.n, q.kmax, static_cast<std::int64_t>(size_of(t)));
  const std::string fn = c_kernels::use_gemm(a, t, small);
  const std::string dims = S(q.n) + ", " + q.k + ", ";
  const std::string b = q.B + ", " + q.brs + ", " + q.bcs + ", ";
  if (small) {
    pragma_if(a.w, "(" + q.tasks + ") * " + S(q.m * q.n * q.kmax) + " >= " + S(kParallel));
    a.w.open("for (int64_t t = 0; t < (" + q.tasks + ") * " + S(q.m) + "; ++t)");
    a.w.line("const int64_t tt = t / " + S(q.m) + ", row = t % " + S(q.m) + ";");
    a.w.line(q.vars);
    a.w.line(fn + "(1, " + dims + q.A + " + row * " + q.ars + ", " + q.ars + ", " + q.acs + ", " + b + q.C + " + row * " +
             S(q.n) + ");");
    a.w.close();
    return;
  }
  const bool par = outer_parallel(q.max_tasks, q.m, q.n, q.kmax);
  const std::string bp = par ? "0" : "(" + T + "*)(" + a.scratch + " + " + S(bp_at) + ")";
  if (par) pragma_if(a.w, "(" + q.tasks + ") > 1");
  a.w.open("for (int64_t tt = 0; tt < " + q.tasks + "; ++tt)");
  a.w.line(q.vars);
  a.w.line(fn + "(" + S(q.m) + ", " + dims + q.A + ", " + q.ars + ", " + q.acs + ", " + b + q.C + ", " + bp + ", 1);");
  a.w.close();
}

// The weight gradient's GEMM sums over the chunk's samples (k = nb*L): when B is too big
// for the unpacked GEMM but its rows are few, the samples split into `segments` runs, each
// summed by the unpacked GEMM into a partial dw of its own, the partials added in segment
// order (the same sums whatever the thread count). 1: no split.
std::int64_t segments(const Plan& p, std::int64_t sz) {
  if (p.Og > kSmallRows || small_gemm(p.Og, p.K, p.nb * p.L, sz)) return 1;
  for (std::int64_t s = 2; s <= 2 * p.nb; s *= 2) {
    const std::int64_t per = (p.nb + s - 1) / s;
    if (small_gemm(p.Og, p.K, per * p.L, sz)) return s;
  }
  return 1;
}

// Scratch: columns of one chunk, then (weight grad) the packed dy and a partial dw, then
// B's panels when the GEMMs thread themselves.
struct Layout {
  std::int64_t col = 0, dyp = 0, tmp = 0, seg = 0, bpack = 0, total = 0;
};
Layout layout_of(const Plan& p, ConvOp op, std::int64_t sz) {
  Layout l;
  const ConvGeom& g = p.g;
  std::int64_t at = align(p.nb * p.R * p.L * sz);
  std::int64_t m = p.Og, n = p.L, k = p.K, tasks = p.nb * g.G;
  if (op == ConvOp::input_grad) m = p.K, k = p.Og;
  if (op == ConvOp::weight_grad) {
    if (p.nb > 1) l.dyp = at, at += align(g.O * p.nb * p.L * sz);
    if (p.nb < g.N) l.tmp = at, at += align(g.O * p.K * sz);
    n = p.K, k = p.nb * p.L, tasks = g.G;
    if (const std::int64_t sg = segments(p, sz); sg > 1) {
      l.seg = at, at += align(sg * g.O * p.K * sz);
      k = (p.nb + sg - 1) / sg * p.L;  // small: no B panels
    }
  }
  if (!small_gemm(m, n, k, sz) && !outer_parallel(tasks, m, n, k)) l.bpack = at, at += gemm_c99::bpack_bytes(n, k, sz);
  l.total = at;
  return l;
}

ConvGeom geom_of(ConvOp op, const Node& node, std::span<const Type> in) {
  const Shape& o = node.type.shape;
  if (op == ConvOp::forward) return conv_geom(in[0].shape, in[1].shape, o, node.attrs);
  if (op == ConvOp::input_grad) return conv_geom(o, in[1].shape, in[0].shape, node.attrs);
  return conv_geom(in[0].shape, o, in[1].shape, node.attrs);
}

void emit_forward(const CLoopArgs& a, const Plan& p, const Layout& l) {
  const ConvGeom& g = p.g;
  const std::string T = c_type(a.node.type.dtype), X = a.in[0], Wt = a.in[1], Y = a.out;
  a.w.line(T + "* col = (" + T + "*)" + a.scratch + ";");
  a.w.open("for (int64_t n0 = 0; n0 < " + S(g.N) + "; n0 += " + S(p.nb) + ")");
  a.w.line("const int64_t nb = " + S(g.N) + " - n0 < " + S(p.nb) + " ? " + S(g.N) + " - n0 : " + S(p.nb) + ";");
  const std::string vars = "const int64_t n = tt / " + S(g.G) + ", gi = tt % " + S(g.G) + ";";
  const GemmLoop q{"nb * " + S(g.G), p.nb * g.G, p.Og, p.L, S(p.K), p.K, vars, Wt + " + gi * " + S(p.Og * p.K), S(p.K),
                   "1", "col + (n * " + S(p.R) + " + gi * " + S(p.K) + ") * " + S(p.L), S(p.L), "1",
                   Y + " + ((n0 + n) * " + S(g.O) + " + gi * " + S(p.Og) + ") * " + S(p.L)};
  if (merged(q)) {
    pragma_if(a.w, "nb * " + S(g.G * p.Og * p.L * p.K) + " >= " + S(kParallel));
    a.w.open("for (int64_t tt = 0; tt < nb * " + S(g.G) + "; ++tt)");
    a.w.line(vars);
    a.w.open("for (int64_t r = gi * " + S(p.K) + "; r < (gi + 1) * " + S(p.K) + "; ++r)");
    a.w.line(use(a, "im2col") + "(" + X + " + (n0 + n) * " + S(g.C * g.H * g.W) + ", r, col + (n * " + S(p.R) +
             " + r) * " + S(p.L) + ", " + geometry_args(g) + ");");
    a.w.close();
    a.w.line(tile_call(a, q, S(p.Og), "0"));
    a.w.close();
    a.w.close();
    return;
  }
  pragma_if(a.w, "nb * " + S(p.R * p.L) + " >= " + S(kParallel));
  a.w.open("for (int64_t t = 0; t < nb * " + S(p.R) + "; ++t)");
  a.w.line(use(a, "im2col") + "(" + X + " + (n0 + t / " + S(p.R) + ") * " + S(g.C * g.H * g.W) + ", t % " + S(p.R) +
           ", col + t * " + S(p.L) + ", " + geometry_args(g) + ");");
  a.w.close();
  emit_gemms(a, q, l.bpack);
  a.w.close();
}

void emit_input_grad(const CLoopArgs& a, const Plan& p, const Layout& l) {
  const ConvGeom& g = p.g;
  const std::string T = c_type(a.node.type.dtype), DY = a.in[0], Wt = a.in[1], DX = a.out;
  a.w.line(T + "* col = (" + T + "*)" + a.scratch + ";");
  a.w.open("for (int64_t n0 = 0; n0 < " + S(g.N) + "; n0 += " + S(p.nb) + ")");
  a.w.line("const int64_t nb = " + S(g.N) + " - n0 < " + S(p.nb) + " ? " + S(g.N) + " - n0 : " + S(p.nb) + ";");
  // col[g*K + k, l] = sum_o w[g*Og + o, k] dy[n, g*Og + o, l]: A = w_g^T, read in place.
  const std::string vars = "const int64_t n = tt / " + S(g.G) + ", gi = tt % " + S(g.G) + ";";
  const GemmLoop q{"nb * " + S(g.G), p.nb * g.G, p.K, p.L, S(p.Og), p.Og, vars, Wt + " + gi * " + S(p.Og * p.K), "1",
                   S(p.K), DY + " + ((n0 + n) * " + S(g.O) + " + gi * " + S(p.Og) + ") * " + S(p.L), S(p.L), "1",
                   "col + (n * " + S(p.R) + " + gi * " + S(p.K) + ") * " + S(p.L)};
  if (merged(q)) {
    const std::int64_t Cg = g.C / g.G;
    pragma_if(a.w, "nb * " + S(g.G * p.Og * p.L * p.K) + " >= " + S(kParallel));
    a.w.open("for (int64_t tt = 0; tt < nb * " + S(g.G) + "; ++tt)");
    a.w.line(vars);
    a.w.line(tile_call(a, q, S(p.K), "0"));
    a.w.open("for (int64_t c = gi * " + S(Cg) + "; c < (gi + 1) * " + S(Cg) + "; ++c)");
    a.w.line(use(a, "col2im") + "(col + (n * " + S(g.C) + " + c) * " + S(g.kh * g.kw * p.L) + ", " + S(p.L) + ", " + DX +
             " + ((n0 + n) * " + S(g.C) + " + c) * " + S(g.H * g.W) + ", " + geometry_args(g) + ");");
    a.w.close();
    a.w.close();
    a.w.close();
    return;
  }
  emit_gemms(a, q, l.bpack);
  pragma_if(a.w, "nb * " + S(p.R * p.L) + " >= " + S(kParallel));
  a.w.open("for (int64_t t = 0; t < nb * " + S(g.C) + "; ++t)");
  a.w.line(use(a, "col2im") + "(col + t * " + S(g.kh * g.kw * p.L) + ", " + S(p.L) + ", " + DX + " + (n0 * " + S(g.C) +
           " + t) * " + S(g.H * g.W) + ", " + geometry_args(g) + ");");
  a.w.close();
  a.w.close();
}

void emit_weight_grad(const CLoopArgs& a, const Plan& p, const Layout& l) {
  const ConvGeom& g = p.g;
  const std::string T = c_type(a.node.type.dtype), X = a.in[0], DY = a.in[1], DW = a.out;
  const std::string NL = "nb * " + S(p.L);
  // Columns of the chunk side by side: col[r][n*L + l], so one GEMM per group sums over
  // the chunk's samples (k = nb*L); dy packed the same way, [O][n*L + l].
  a.w.line(T + "* col = (" + T + "*)" + a.scratch + ";");
  if (p.nb > 1) a.w.line(T + "* dyp = (" + T + "*)(" + a.scratch + " + " + S(l.dyp) + ");");
  if (p.nb < g.N) a.w.line(T + "* part = (" + T + "*)(" + a.scratch + " + " + S(l.tmp) + ");");
  a.w.open("for (int64_t n0 = 0; n0 < " + S(g.N) + "; n0 += " + S(p.nb) + ")");
  a.w.line("const int64_t nb = " + S(g.N) + " - n0 < " + S(p.nb) + " ? " + S(g.N) + " - n0 : " + S(p.nb) + ";");
  const std::int64_t sg = segments(p, static_cast<std::int64_t>(size_of(a.node.type.dtype)));
  // Blocks of dot products (kDots) per group, or per group and segment of the batch: each
  // iteration writes its columns and reads them back while they are in L2 (the chunk's,
  // 3.6 MB in example 05's step, went to L3 and back between two loops). Small groups:
  // per-sample gradients under vmap, one sample, a group per sample.
  const bool merged = sg > 1 || p.Og * p.K * p.nb * p.L < gemm_c99::kThreadMin;
  const std::string im2col = use(a, "im2col") + "(" + X + " + (n0 + n) * " + S(g.C * g.H * g.W) + ", r, col + r * " +
                             NL + " + n * " + S(p.L) + ", " + geometry_args(g) + ");";
  if (!merged) {
    pragma_if(a.w, "nb * " + S(p.R * p.L) + " >= " + S(kParallel));
    a.w.open("for (int64_t t = 0; t < nb * " + S(p.R) + "; ++t)");
    a.w.line("const int64_t r = t / nb, n = t % nb;");
    a.w.line(im2col);
    a.w.close();
  }
  std::string A = DY + " + n0 * " + S(g.O * p.L);
  if (p.nb > 1) {
    pragma_if(a.w, "nb * " + S(g.O * p.L) + " >= " + S(kParallel));
    a.w.open("for (int64_t t = 0; t < nb * " + S(g.O) + "; ++t)");
    a.w.line("const int64_t o = t / nb, n = t % nb;");
    a.w.line("const " + T + "* src = " + DY + " + ((n0 + n) * " + S(g.O) + " + o) * " + S(p.L) + ";");
    a.w.line(T + "* dst = dyp + o * " + NL + " + n * " + S(p.L) + ";");
    a.w.line("for (int64_t e = 0; e < " + S(p.L) + "; ++e) dst[e] = src[e];");
    a.w.close();
    A = "dyp";
  }
  a.w.line(T + "* dst = " + (p.nb < g.N ? "n0 == 0 ? " + DW + " : part" : DW) + ";");
  // dw_g[Og, K] = dy_g[Og, nb*L] @ col_g[K, nb*L]^T: B = col_g^T, read in place.
  if (merged) {
    const std::int64_t per = (p.nb + sg - 1) / sg, OK = g.O * p.K;
    const std::string dots_fn = c_kernels::use(a, c_kernels::Kernel::conv_dots, a.node.type.dtype);
    if (sg > 1) a.w.line(T + "* seg = (" + T + "*)(" + a.scratch + " + " + S(l.seg) + ");");
    pragma_if(a.w, "nb * " + S(p.R * p.L * p.Og) + " >= " + S(kParallel));
    a.w.open("for (int64_t tt = 0; tt < " + S(sg * g.G) + "; ++tt)");
    a.w.line("const int64_t s = tt / " + S(g.G) + ", gi = tt % " + S(g.G) + ", s0 = s * " + S(per) + " < nb ? s * " +
             S(per) + " : nb, s1 = (s + 1) * " + S(per) + " < nb ? (s + 1) * " + S(per) + " : nb;");
    a.w.line(T + "* out = " + (sg > 1 ? "seg + s * " + S(OK) : std::string("dst")) + " + gi * " + S(p.Og * p.K) + ";");
    a.w.open("for (int64_t n = s0; n < s1; ++n)");
    a.w.open("for (int64_t r = gi * " + S(p.K) + "; r < (gi + 1) * " + S(p.K) + "; ++r)");
    a.w.line(im2col);
    a.w.close();
    a.w.close();
    a.w.open("for (int64_t row = 0; row < " + S(p.Og) + "; row += MG_DOTS_RB)");
    a.w.line(dots_fn + "(" + S(p.Og) + " - row < MG_DOTS_RB ? " + S(p.Og) + " - row : MG_DOTS_RB, " +
             S(p.K) + ", (s1 - s0) * " + S(p.L) + ", " + A + " + (gi * " + S(p.Og) + " + row) * " + NL + " + s0 * " +
             S(p.L) + ", " + NL + ", col + gi * " + S(p.K) + " * " + NL + " + s0 * " + S(p.L) + ", " + NL +
             ", out + row * " + S(p.K) + ");");
    a.w.close();
    a.w.close();
    if (sg > 1) {
      pragma_if(a.w, S(OK * sg) + " >= " + S(kParallel));
      a.w.open("for (int64_t e = 0; e < " + S(OK) + "; ++e)");
      a.w.line(T + " acc = seg[e];");
      a.w.line("for (int64_t s = 1; s < " + S(sg) + "; ++s) acc += seg[s * " + S(OK) + " + e];");
      a.w.line("dst[e] = acc;");
      a.w.close();
    }
  } else {
    emit_gemms(a, {S(g.G), g.G, p.Og, p.K, NL, p.nb * p.L, "const int64_t gi = tt;", A + " + gi * " + S(p.Og) + " * " + NL,
                   NL, "1", "col + gi * " + S(p.K) + " * " + NL, "1", NL, "dst + gi * " + S(p.Og * p.K)},
               l.bpack);
  }
  if (p.nb < g.N) {
    a.w.open("if (n0 > 0)");
    a.w.line("for (int64_t e = 0; e < " + S(g.O * p.K) + "; ++e) " + DW + "[e] += part[e];");
    a.w.close();
  }
  a.w.close();
}

}  // namespace

std::int64_t conv_c99_scratch(ConvOp op, const Node& node, std::span<const Type> in) {
  if (!is_float(node.type.dtype)) return 0;
  const Plan p = plan_of(geom_of(op, node, in));
  if (degenerate(p)) return 0;
  return layout_of(p, op, static_cast<std::int64_t>(size_of(node.type.dtype))).total;
}

bool emit_conv_c99(ConvOp op, const CLoopArgs& a) {
  if (a.scratch.empty() || !is_float(a.node.type.dtype)) return false;
  const Plan p = plan_of(geom_of(op, a.node, a.in_types));
  if (degenerate(p)) return false;
  const Layout l = layout_of(p, op, static_cast<std::int64_t>(size_of(a.node.type.dtype)));
  a.w.open("");
  if (op == ConvOp::forward) emit_forward(a, p, l);
  else if (op == ConvOp::input_grad) emit_input_grad(a, p, l);
  else emit_weight_grad(a, p, l);
  a.w.close();
  return true;
}

}  // namespace mg::ir::nn
