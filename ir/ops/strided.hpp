// Strided walks in fewer, longer loops: shared by the interpreter's fused broadcasts
// (fused.cpp) and the C99 folds (reduce_c.hpp).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "minigrad/ir/type.hpp"

namespace mg::ir {

// The same elements in the same order: size-1 axes dropped, neighbours merged where the
// outer stride is the inner stride times the inner size (both 0: a broadcast run). A walk
// of size-1 axes only becomes no axes.
inline void merge_runs(Shape& shape, std::vector<std::int64_t>& strides) {
  Shape d;
  std::vector<std::int64_t> st;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (!d.empty() && st.back() == strides[k] * shape[k]) {
      d.back() *= shape[k];
      st.back() = strides[k];
    } else {
      d.push_back(shape[k]);
      st.push_back(strides[k]);
    }
  }
  shape = std::move(d);
  strides = std::move(st);
}

}  // namespace mg::ir
