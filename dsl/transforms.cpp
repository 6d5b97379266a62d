// DSL wrappers over the jvp, vmap and Jacobian passes.
#include "minigrad/dsl/transforms.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/jacobian.hpp"
#include "minigrad/passes/jvp.hpp"
#include "minigrad/passes/vmap.hpp"

namespace mg {

namespace {
std::vector<ir::Value> values(const std::vector<Tensor>& ts, const char* what) {
  std::vector<ir::Value> vs;
  for (auto& t : ts) {
    if (!t.valid()) throw UserError(std::string(what) + ": an empty Tensor handle", ambient_loc());
    vs.push_back(t.value());
  }
  return vs;
}
std::vector<Tensor> tensors(const std::vector<ir::Value>& vs) { return {vs.begin(), vs.end()}; }

// One entry for every argument, or one per argument.
std::vector<BatchAxis> per_arg(const std::vector<BatchAxis>& axes, std::size_t n, const char* what) {
  if (axes.size() == n) return axes;
  if (axes.size() == 1) return std::vector<BatchAxis>(n, axes[0]);
  throw UserError("vmap: " + std::to_string(axes.size()) + " " + what + " entries for " + std::to_string(n) +
                      " value(s) (give one, or one per value)",
                  ambient_loc());
}
}  // namespace

std::vector<Tensor> jvp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& wrt,
                        const std::vector<Tensor>& tangents, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  auto o = values(outputs, "jvp"), w = values(wrt, "jvp"), t = values(tangents, "jvp");
  return tensors(passes::jvp(o, w, t));
}

Tensor jacrev(const Tensor& y, const Tensor& x, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  return Tensor(passes::jacrev(values({y}, "jacrev")[0], values({x}, "jacrev")[0]));
}

Tensor jacfwd(const Tensor& y, const Tensor& x, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  return Tensor(passes::jacfwd(values({y}, "jacfwd")[0], values({x}, "jacfwd")[0]));
}

std::vector<Tensor> vmap(const std::vector<Tensor>& outputs, const std::vector<Tensor>& args,
                         const std::vector<Tensor>& batched, std::vector<BatchAxis> in_axes,
                         std::vector<BatchAxis> out_axes, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  auto o = values(outputs, "vmap"), a = values(args, "vmap"), b = values(batched, "vmap");
  in_axes = per_arg(in_axes, a.size(), "in_axes");
  return tensors(passes::vmap(o, a, b, in_axes, out_axes));
}

std::vector<Tensor> Vmapped::operator()(const std::vector<Tensor>& args, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  const std::vector<ir::Value> given = values(args, "vmap");
  const std::vector<BatchAxis> axes = per_arg(in_axes_, given.size(), "in_axes");
  // Per-example stand-ins for the batched arguments; unbatched ones are passed as they are.
  std::vector<Tensor> inner;
  std::vector<ir::Value> stand_ins, batched;
  std::vector<BatchAxis> batched_axes;
  for (std::size_t k = 0; k < given.size(); ++k) {
    if (!axes[k]) {
      inner.push_back(args[k]);
      continue;
    }
    const Type& t = given[k].type();
    const int r = t.rank(), a = *axes[k];
    if (a < -r || a >= r)
      throw UserError("vmap: in_axes[" + std::to_string(k) + "] = " + std::to_string(a) +
                          " is out of range for argument " + std::to_string(k) + " " + to_string(t) + " (rank " +
                          std::to_string(r) + ")",
                      ambient_loc());
    Shape per = t.shape;
    per.erase(per.begin() + (a < 0 ? a + r : a));
    ir::Value s = ir::full(*given[k].graph, Type{t.dtype, per}, 0.0);
    inner.emplace_back(s);
    stand_ins.push_back(s);
    batched.push_back(given[k]);
    batched_axes.push_back(a);
  }
  if (stand_ins.empty()) throw UserError("vmap: no argument is batched (every in_axes entry is none)", ambient_loc());
  std::vector<Tensor> outs = f_(inner);
  return tensors(passes::vmap(values(outs, "vmap"), stand_ins, batched, batched_axes, out_axes_));
}

Tensor Vmapped::operator()(const Tensor& x, Loc loc) const {
  std::vector<Tensor> r = (*this)(std::vector<Tensor>{x}, loc);
  if (r.size() != 1)
    throw UserError("vmap: the function returns " + std::to_string(r.size()) + " values; call it with a vector",
                    SourceLoc::from(loc));
  return r[0];
}

Vmapped vmap(TensorsFn f, std::vector<BatchAxis> in_axes, std::vector<BatchAxis> out_axes) {
  return Vmapped(std::move(f), std::move(in_axes), std::move(out_axes));
}

Vmapped vmap(std::function<Tensor(const Tensor&)> f, BatchAxis in_axis, BatchAxis out_axis) {
  return Vmapped([f = std::move(f)](const std::vector<Tensor>& a) { return std::vector<Tensor>{f(a[0])}; }, {in_axis},
                 {out_axis});
}

Vmapped vmap(const Vmapped& f, std::vector<BatchAxis> in_axes, std::vector<BatchAxis> out_axes) {
  return Vmapped([f](const std::vector<Tensor>& a) { return f(a); }, std::move(in_axes), std::move(out_axes));
}

}  // namespace mg
