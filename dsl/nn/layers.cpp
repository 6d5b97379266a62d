// Layer forward functions; see layers.hpp.
#include "minigrad/dsl/nn/layers.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::nn {

namespace {
void require_bound(const Parameter& p, const char* layer) {
  if (!p.tensor.valid())
    throw UserError(std::string(layer) + ": parameters are not bound to a graph; call nn::bind(model, graph) first",
                    ambient_loc());
}
}  // namespace

Linear::Linear(std::int64_t in, std::int64_t out, bool bias, DType dtype)
    : weight{{out, in}, dtype, fan_in_uniform_init(in)}, bias{{out}, dtype, fan_in_uniform_init(in)}, has_bias(bias) {}

Tensor Linear::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  require_bound(weight, "Linear");
  const std::int64_t in = weight.shape[1];
  if (x.rank() == 0 || x.shape().back() != in)
    throw ShapeError("Linear: expects input [..., " + std::to_string(in) + "], got " + to_string(x.type()),
                     ambient_loc());
  Tensor y = matmul(x, weight.tensor.T(loc), loc);
  if (has_bias) y = Tensor(y + bias.tensor, loc);
  return y;
}

Embedding::Embedding(std::int64_t num, std::int64_t dim, DType dtype) : weight{{num, dim}, dtype, normal_init(0, 1)} {}

Tensor Embedding::operator()(const Tensor& index, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  require_bound(weight, "Embedding");
  if (index.dtype() != i64) throw ShapeError("Embedding: indices must be i64, got " + to_string(index.type()), ambient_loc());
  Tensor flat = index.reshape({index.numel()}, loc);
  Tensor rows = index_select(weight.tensor, 0, flat, loc);
  Shape out = index.shape();
  out.push_back(weight.shape[1]);
  return rows.reshape(out, loc);
}

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine_, DType dtype)
    : weight{shape, dtype, constant_init(1.0)}, bias{shape, dtype, constant_init(0.0)},
      normalized_shape(std::move(shape)), eps(eps_), affine(affine_) {}

Tensor LayerNorm::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  if (affine) require_bound(weight, "LayerNorm");
  const int k = static_cast<int>(normalized_shape.size());
  if (x.rank() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape().end() - k))
    throw ShapeError("LayerNorm: expects input [..., " + to_string(normalized_shape).substr(1) + ", got " +
                         to_string(x.type()),
                     ambient_loc());
  std::vector<std::int64_t> axes;
  for (int i = x.rank() - k; i < x.rank(); ++i) axes.push_back(i);
  Tensor mu = x.mean(axes, true, loc);
  Tensor centered = Tensor(x - mu, loc);
  Tensor var = square(centered).mean(axes, true, loc);
  Tensor y = Tensor(centered * rsqrt(var + eps), loc);
  if (affine) y = Tensor(y * weight.tensor + bias.tensor, loc);
  return y;
}

}  // namespace mg::nn

namespace mg::nn {

Dropout::Dropout(double p_)
    : p(p_), counter({}, i64, [](const Type& t, std::uint64_t seed) {
        return Array::full(t, static_cast<double>(seed >> 33));  // the bind seed picks the stream
      }, /*trainable=*/false) {
  if (p < 0 || p >= 1) throw UserError("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

Tensor Dropout::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  if (!training || p == 0) return x;
  require_bound(counter, "Dropout");
  if (!is_float(x.dtype())) throw ShapeError("Dropout: expects a float input, got " + to_string(x.type()), ambient_loc());
  Tensor mask(ir::make_op(ir::op("dropout_mask"), {counter.tensor.value()},
                          {{"shape", x.shape()}, {"dtype", x.dtype()},
                           {"seed", static_cast<std::int64_t>(hash_name(0, counter.name()) >> 1)}, {"p", p}}));
  counter.update = Tensor(counter.tensor + 1, loc);
  return Tensor(x * mask, loc);
}

}  // namespace mg::nn
