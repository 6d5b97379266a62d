// SynOps of the spiking layers, built in the input's graph.
#include "minigrad/frontier/spanda/layers.hpp"

#include "minigrad/dsl/graph.hpp"

namespace mg::frontier::spanda {

Tensor SpikingLinear::synops(const Tensor& x, Loc loc) const {
  return Tensor(x.sum({}, false, loc) * static_cast<double>(fc.weight.shape[0]), loc);
}

Tensor SpikingConv2D::synops(const Tensor& x, Loc loc) const {
  const Shape& w = conv.weight.shape;
  Tensor ones = graph_of(x, loc).ones({1, w[1], w[2], w[3]}, x.dtype(), loc);
  Tensor reach = nn::conv2d(x, ones, conv.stride, conv.padding, conv.dilation, 1, loc);
  return Tensor(reach.sum({}, false, loc) * static_cast<double>(w[0]), loc);
}

}  // namespace mg::frontier::spanda
