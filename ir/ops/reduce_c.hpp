// C99 of the plain-fold reductions (the `fold` registry column), shared by the reduce
// family (reduce.cpp: the element is read from the operand array) and fused nodes of
// kind "reduce" (fused_reduce.cpp: the element is computed by the region's body). One
// output per iteration of a loop over the kept dims; inside, a loop nest over the reduced
// elements. Light: emit_c.hpp only.
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops/strided.hpp"

namespace mg::ir {

struct CReduce {
  Shape kept, red;
  std::vector<std::int64_t> kept_st, red_st;
  std::int64_t n_out = 1, n_red = 1;

  bool rows = true;  // every reduced axis before every kept one (size-1 axes aside)

  // `shape`: the reduced operand's; `axes` normalised.
  CReduce(const Shape& s, const I64List& axes) {
    const auto st = strides_of(s);
    bool seen_kept = false;
    for (std::size_t d = 0; d < s.size(); ++d) {
      const bool r = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
      (r ? red : kept).push_back(s[d]);
      (r ? red_st : kept_st).push_back(st[d]);
      (r ? n_red : n_out) *= s[d];
      if (s[d] != 1) {
        rows = rows && !(r && seen_kept);
        seen_kept = seen_kept || !r;
      }
    }
    merge_reduced();
  }
  // Neighbouring reduced axes that are one run in memory (outer stride = inner stride x
  // inner size) become one loop, in the same element order: a conv bias gradient over
  // [N, C, H, W] sums runs of H*W, not rows of W (the simd reduction ran 28 long).
  void merge_reduced() { merge_runs(red, red_st); }
  // Leading axes reduced ([B, T, C] summed over B and T: bias and LayerNorm gradients):
  // the operand is n_red rows of n_out, folded row by row into a block of accumulators
  // along the row (one simd loop). The per-output loop read each column at a stride: a
  // cache line per element, 8% of the miniGPT step.
  bool by_rows() const { return rows && n_out >= 8 && n_red > 1; }
  // `element(idx)` as in pass(); `step`/`fin` a CFold's, their `acc` made the block's acc[j].
  void emit_rows(CWriter& w, const std::function<std::string(const std::string& idx)>& element, const std::string& acc_type,
                 const std::string& init, const std::string& step, const std::string& fin, const std::string& out) const {
    constexpr std::int64_t kBlock = 64;
    auto at_j = [](std::string t) {
      for (std::size_t p = t.find("acc"); p != std::string::npos; p = t.find("acc", p + 6)) t.replace(p, 3, "acc[j]");
      return t;
    };
    const std::string N = std::to_string(n_out), B = std::to_string(kBlock);
    c_for(w, "o0", (n_out + kBlock - 1) / kBlock, n_out * n_red, false);
    w.line("const int64_t on = " + N + " - o0 * " + B + " < " + B + " ? " + N + " - o0 * " + B + " : " + B + ";");
    w.line(acc_type + " acc[" + B + "];");
    w.line("for (int64_t j = 0; j < " + B + "; ++j) acc[j] = " + init + ";");
    w.open("for (int64_t r = 0; r < " + std::to_string(n_red) + "; ++r)");
    w.line("MG_OMP_GCC(omp simd)");  // the fused element may call libm: see module.cpp
    w.open("for (int64_t j = 0; j < on; ++j)");
    w.line(element("r * " + N + " + o0 * " + B + " + j"));
    w.line(at_j(step));
    w.close();
    w.close();
    w.open("for (int64_t j = 0; j < on; ++j)");
    w.line(out + "[o0 * " + B + " + j] = " + at_j(fin) + ";");
    w.close();
    w.close();
  }
  // A loop nest over the reduced elements of the output whose first element is at flat
  // index `base`; `element(idx)` gives the statements declaring `x`, the element at flat
  // operand index idx (a C expression), and `body` uses x.
  // `omp`: the pragma macro (MG_OMP_GCC where the element may call libm, see module.cpp).
  std::string pass(const std::function<std::string(const std::string& idx)>& element, const std::string& body,
                   const std::string& simd_reduction = "", const std::string& omp = "MG_OMP") const {
    std::string s, idx = "base";
    int depth = 0;
    for (std::size_t k = 0; k < red.size(); ++k) {  // no size-1 axes (merge_reduced)
      std::string v = "r";
      v += std::to_string(k);
      ++depth;
      const auto indent = static_cast<std::size_t>(2 * depth + 2);
      s.append(indent, ' ');
      if (!simd_reduction.empty() && k + 1 == red.size())
        s.append(omp + "(omp simd reduction(").append(simd_reduction).append("))\n").append(indent, ' ');
      s += "for (int64_t " + v + " = 0; " + v + " < " + std::to_string(red[k]) + "; ++" + v + ")\n";
      idx += " + " + v + " * " + std::to_string(red_st[k]);
    }
    if (n_red == 0) return "";  // an empty extent: nothing to visit
    s.append(static_cast<std::size_t>(2 * depth + 4), ' ');
    return s.append("{ ").append(element(idx)).append(" ").append(body).append(" }\n");
  }
  // Emits the output loop around `code` (which writes out[o]).
  void emit(CWriter& w, const std::string& code) const {
    if (n_out == 0) return;
    c_for(w, "o", n_out, n_out * std::max<std::int64_t>(n_red, 1), false);
    w.line("const int64_t base = " + c_offset("o", kept, kept_st) + ";");
    w.raw(code);
    w.close();
  }
};

// A fold as C: `acc` declared `acc_type acc = init;`, `step` folds `x` in, `fin` is the
// output's value, `simd` the OpenMP reduction clause ("" when none applies). As the
// kernels: f64 accumulation for float sums/means/products, wrapping u64 for i64 ones.
struct CFold {
  std::string acc_type, init, step, fin, simd;
};
CFold c_fold_parts(Fold fold, DType t, std::int64_t n_red);  // reduce.cpp

}  // namespace mg::ir
