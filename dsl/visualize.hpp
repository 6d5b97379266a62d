// mg::visualize: the graph behind a value, as the ASCII view prints it (top-down, by
// role, fused regions collapsed; runtime/glassbox/ascii_view.hpp). For a training step:
// mg::nn::visualize(step) in <minigrad/dsl/nn/glassbox.hpp>.
#pragma once
#include <string>
#include <vector>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/runtime/glassbox/ascii_view.hpp"

namespace mg {

using ViewOptions = rt::glassbox::AsciiViewOptions;

// What `values` are computed from (every value of their graph they need).
std::string visualize(const std::vector<Tensor>& values, const ViewOptions& options = {});
std::string visualize(const Tensor& value, const ViewOptions& options = {});

}  // namespace mg
