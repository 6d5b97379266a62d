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

namespace mg::ir {

struct CReduce {
  Shape kept, red;
  std::vector<std::int64_t> kept_st, red_st;
  std::int64_t n_out = 1, n_red = 1;

  // `shape`: the reduced operand's; `axes` normalised.
  CReduce(const Shape& s, const I64List& axes) {
    const auto st = strides_of(s);
    for (std::size_t d = 0; d < s.size(); ++d) {
      const bool r = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
      (r ? red : kept).push_back(s[d]);
      (r ? red_st : kept_st).push_back(st[d]);
      (r ? n_red : n_out) *= s[d];
    }
  }
  // A loop nest over the reduced elements of the output whose first element is at flat
  // index `base`; `element(idx)` gives the statements declaring `x`, the element at flat
  // operand index idx (a C expression), and `body` uses x.
  std::string pass(const std::function<std::string(const std::string& idx)>& element, const std::string& body,
                   const std::string& simd_reduction = "") const {
    std::string s, idx = "base";
    int depth = 0;
    for (std::size_t k = 0; k < red.size(); ++k) {
      if (red[k] == 1) continue;
      const std::string v = "r" + std::to_string(k);
      ++depth;
      const auto indent = static_cast<std::size_t>(2 * depth + 2);
      s.append(indent, ' ');
      if (!simd_reduction.empty()) {
        bool last = true;
        for (std::size_t j = k + 1; j < red.size(); ++j) last = last && red[j] == 1;
        if (last) s.append("MG_OMP(omp simd reduction(").append(simd_reduction).append("))\n").append(indent, ' ');
      }
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
