// The coupling stack's three forms; see coupling.hpp. The reversible backward, per block
// from the last (dy1, dy2 the cotangents of the block's outputs):
//   x2 = y2 - g(y1);  dy1 += g'(y1)^T dy2;  dθg = (∂g/∂θg)^T dy2
//   x1 = y1 - f(x2);  dy2 += f'(x2)^T dy1;  dθf = (∂f/∂θf)^T dy1
// The VJPs are traced with mg::vjp into the custom_vjp region, so the backward is IR and
// differentiates again (grad of grad, where f and g are twice differentiable).
#include "minigrad/frontier/avyaya/coupling.hpp"

#include <string>

#include "minigrad/dsl/autodiff.hpp"
#include "minigrad/dsl/custom_vjp.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::avyaya {

namespace {

std::size_t count_params(std::span<const Coupling> blocks) {
  std::size_t n = 0;
  for (const Coupling& b : blocks) n += b.num_f + b.num_g;
  return n;
}

void check_params(std::span<const Coupling> blocks, std::span<const Tensor> params, const char* who, Loc loc) {
  if (params.size() != count_params(blocks))
    throw UserError(std::string(who) + ": the blocks take " + std::to_string(count_params(blocks)) +
                        " parameter tensors, got " + std::to_string(params.size()),
                    SourceLoc::from(loc));
}

Tensor join(const Tensor& a, const Tensor& b, Loc loc) { return concat({a, b}, -1, loc); }

}  // namespace

std::pair<Tensor, Tensor> split_halves(const Tensor& x, const char* who, Loc loc) {
  if (!x.valid()) throw UserError(std::string(who) + ": the input is an empty Tensor handle", SourceLoc::from(loc));
  const Shape& s = x.type().shape;
  if (s.empty() || s.back() % 2 != 0)
    throw ShapeError(std::string(who) + ": expected an input whose last axis (x1 | x2) has even length, got " +
                         to_string(x.type()),
                     SourceLoc::from(loc));
  const std::int64_t d = s.back() / 2;
  return {slice(x, -1, 0, d, 1, loc), slice(x, -1, d, 2 * d, 1, loc)};
}

Tensor coupled_forward(std::span<const Coupling> blocks, const Tensor& x, std::span<const Tensor> params, Loc loc) {
  check_params(blocks, params, "ReversibleSequential", loc);
  auto [a, b] = split_halves(x, "ReversibleSequential", loc);
  std::size_t k = 0;
  for (const Coupling& c : blocks) {
    a = Tensor(a + c.f(b, params.subspan(k, c.num_f), loc), loc);
    k += c.num_f;
    b = Tensor(b + c.g(a, params.subspan(k, c.num_g), loc), loc);
    k += c.num_g;
  }
  return join(a, b, loc);
}

Tensor coupled_inverse(std::span<const Coupling> blocks, const Tensor& y, std::span<const Tensor> params, Loc loc) {
  check_params(blocks, params, "ReversibleSequential::inverse", loc);
  auto [a, b] = split_halves(y, "ReversibleSequential::inverse", loc);
  std::size_t k = params.size();
  for (std::size_t i = blocks.size(); i-- > 0;) {
    const Coupling& c = blocks[i];
    k -= c.num_g;
    b = Tensor(b - c.g(a, params.subspan(k, c.num_g), loc), loc);
    k -= c.num_f;
    a = Tensor(a - c.f(b, params.subspan(k, c.num_f), loc), loc);
  }
  return join(a, b, loc);
}

Tensor reversible_forward(std::span<const Coupling> blocks, const Tensor& x, std::span<const Tensor> params, Loc loc) {
  check_params(blocks, params, "ReversibleSequential", loc);
  split_halves(x, "ReversibleSequential", loc);  // the shape check, at the user's line
  Tensors xs{x};
  xs.insert(xs.end(), params.begin(), params.end());
  // xs[0] = x, xs[1..] = the parameters. The only residual is y itself: nothing the
  // forward computed on the way stays alive for the backward.
  auto fwd = [&](const Tensors& in) {
    Tensor y = coupled_forward(blocks, in[0], std::span<const Tensor>(in).subspan(1), loc);
    return std::pair{y, Tensors{y}};
  };
  auto bwd = [&](const Tensors& r, const Tensors& in, const Tensor& dy) {
    const std::span<const Tensor> ps = std::span<const Tensor>(in).subspan(1);
    auto [y1, y2] = split_halves(r[0], "ReversibleSequential", loc);
    auto [d1, d2] = split_halves(dy, "ReversibleSequential", loc);
    Tensors grads(in.size());
    // A parameter f or g does not read gets a zero gradient, not an empty handle.
    auto take = [&](const Tensors& vs, std::size_t n, std::size_t k) {
      for (std::size_t j = 0; j < n; ++j)
        grads[1 + k + j] = vs[1 + j].valid() ? vs[1 + j] : zeros_like(ps[k + j], std::nullopt, loc);
    };
    std::size_t k = ps.size();
    // One coupling undone: out = in + h(z) gives in = out - h(z); z's cotangent gains h's
    // VJP of d_out, and h's parameters (the n just below k) get theirs.
    auto undo = [&](const auto& h, std::size_t n, const Tensor& z, const Tensor& out, const Tensor& d_out,
                    Tensor& d_z) {
      k -= n;
      const auto p = ps.subspan(k, n);
      Tensor hz = h(z, p, loc);
      Tensors w{z};
      w.insert(w.end(), p.begin(), p.end());
      Tensors v = vjp({hz}, {d_out}, w, loc);
      if (v[0].valid()) d_z = Tensor(d_z + v[0], loc);
      take(v, n, k);
      return Tensor(out - hz, loc);
    };
    for (std::size_t i = blocks.size(); i-- > 0;) {
      const Coupling& c = blocks[i];
      Tensor x2 = undo(c.g, c.num_g, y1, y2, d2, d1);  // y2 = x2 + g(y1)
      Tensor x1 = undo(c.f, c.num_f, x2, y1, d1, d2);  // y1 = x1 + f(x2)
      y1 = x1;
      y2 = x2;
    }
    grads[0] = join(d1, d2, loc);
    return grads;
  };
  return custom_vjp(fwd, bwd)(xs, loc);
}

}  // namespace mg::frontier::avyaya
