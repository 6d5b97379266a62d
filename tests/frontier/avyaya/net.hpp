// A small reversible network for AVYAYA's tests: blocks whose f and g are tanh MLPs
// [..., d] -> [..., h] -> [..., d], built in f64 or f32 and bound to a graph.
#pragma once
#include <minigrad/frontier/avyaya.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg::testing {

using Mlp = nn::Sequential<nn::Linear, nn::Tanh, nn::Linear>;
using Block = frontier::avyaya::ReversibleBlock<Mlp, Mlp>;
using RevNet = frontier::avyaya::ReversibleSequential<Block>;

inline Mlp mlp(std::int64_t d, std::int64_t h, DType dt) {
  return Mlp(nn::Linear(d, h, true, dt), nn::Tanh{}, nn::Linear(h, d, true, dt));
}
inline RevNet revnet(int depth, std::int64_t d, std::int64_t h, DType dt) {
  RevNet net;
  for (int i = 0; i < depth; ++i) net.blocks.emplace_back(mlp(d, h, dt), mlp(d, h, dt));
  return net;
}
// Feeds every parameter's current value (the model is bound to g).
inline std::vector<Feed> parameter_feeds(RevNet& net) {
  std::vector<Feed> feeds;
  for (nn::Parameter* p : nn::parameters(net)) feeds.emplace_back(p->name(), p->value());
  return feeds;
}

}  // namespace mg::testing
