// The `custom_vjp` op: an author-supplied backward (DESIGN invariant 4 still holds: the
// backward is IR, a region, so it differentiates again). Operands: the forward's result
// y (computed by ordinary nodes), the residuals the author chose, the primal inputs xs.
// The node's value is y; its VJP inlines the region (residuals, xs, dy) -> dxs instead of
// differentiating the nodes that computed y, and sends nothing back through y or the
// residuals. So a surrogate gradient, a reversible block's recomputation or an adjoint
// solve replaces backprop, and grad of grad differentiates the inlined backward (through
// the residuals' own nodes). No xtensor here.
#include <cstring>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/rules.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::ir {

namespace {

using namespace rules;

// The region's signature: (residuals, xs, dy) -> one dx per x, typed like it.
void check(const Node& n, std::span<const Type> in) {
  require(n.regions.size() == 1, "a custom_vjp node owns exactly one region (its backward)");
  const Graph& bwd = *n.regions[0];
  const std::size_t nres = static_cast<std::size_t>(n.attrs.i64("num_residuals"));
  require(bwd.inputs().size() == in.size(), "the backward takes " + std::to_string(bwd.inputs().size()) +
                                                " parameters; it should take the residuals, the inputs and dy (" +
                                                std::to_string(in.size()) + ")");
  for (std::size_t i = 1; i <= in.size(); ++i) {
    const Type& want = i < in.size() ? in[i] : in[0];
    const Type& got = bwd.node(bwd.inputs()[i - 1]).type;
    require(got == want, "backward parameter " + std::to_string(i - 1) + " is " + to_string(got) + " but should be " +
                             to_string(want));
  }
  const std::size_t nx = in.size() - 1 - nres;
  require(bwd.outputs.size() == nx, "the backward returns " + std::to_string(bwd.outputs.size()) +
                                        " values, one per input (" + std::to_string(nx) + ") expected");
  for (std::size_t j = 0; j < nx; ++j) {
    const Type& got = bwd.node(bwd.outputs[j]).type;
    require(got == in[1 + nres + j], "the backward returns " + to_string(got) + " for input " + std::to_string(j) +
                                         " of type " + to_string(in[1 + nres + j]));
  }
}

std::vector<Value> custom_vjp_vjp(const VjpArgs& a) {
  const Node& n = a.node;
  const std::size_t nres = static_cast<std::size_t>(n.attrs.i64("num_residuals"));
  // The last `fwd_reads` residuals are values the forward read besides xs. The author's
  // backward gives them no gradient, so differentiating with respect to one of them would
  // silently get zero: refuse, as jax.custom_vjp refuses closed-over values.
  const std::size_t reads = static_cast<std::size_t>(n.attrs.i64("fwd_reads"));
  for (std::size_t i = 1 + nres - reads; i < 1 + nres; ++i)
    if (a.wants.empty() || a.wants[i])
      throw GradError("custom_vjp: its forward reads " + describe_value(*a.out.graph, a.in[i].id) +
                          ", which the gradient being taken depends on, but it is not one of the inputs xs, so "
                          "the backward gives it no gradient; pass it in xs and return its gradient from the "
                          "backward (or compute it outside what is differentiated)",
                      n.loc);
  std::vector<Value> args(a.in.begin() + 1, a.in.end());
  args.push_back(a.cotangent);
  const std::vector<Value> dx = inline_region(*n.regions[0], *a.out.graph, args);
  std::vector<Value> grads(a.in.size());  // none through y or the residuals: that is the point
  for (std::size_t j = 0; j < dx.size(); ++j)
    if (is_float(a.in[1 + nres + j].dtype())) grads[1 + nres + j] = dx[j];
  return grads;
}

// Registry test: the backward 2 r dy (r the residual).
void attach_test_region(Graph& g, NodeId id) {
  auto bwd = std::make_unique<Graph>();
  const Node& n = g.node(id);
  Value r = bwd->add_input("r", g.node(n.inputs[1]).type);
  bwd->add_input("x", g.node(n.inputs[2]).type);
  Value dy = bwd->add_input("dy", n.type);
  bwd->outputs = {mul(scale(r, 2.0), dy).id};
  g.mutable_node(id).regions.push_back(std::move(bwd));
}

}  // namespace

void register_custom_vjp_ops() {
  OpDef& d = define_op("custom_vjp");
  d.doc =
      "(y, residuals..., xs...) -> y, whose gradient is its region (residuals..., xs..., dy) -> (dx...) instead of "
      "the derivative of the nodes that computed y; no gradient flows to y or the residuals directly";
  d.arity = -1;
  // fwd_reads: how many of the residuals (the last ones) are values the forward read
  // besides xs; the backward ignores them and the VJP refuses to differentiate them.
  d.attrs = {{"num_residuals", AttrKind::i64, std::nullopt}, {"fwd_reads", AttrKind::i64, std::int64_t{0}}};
  d.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const std::int64_t r = attrs.i64("num_residuals");
    require(r >= 0 && r + 1 <= static_cast<std::int64_t>(in.size()),
            "num_residuals must be >= 0 and leave the result y first");
    require(attrs.i64("fwd_reads") >= 0 && attrs.i64("fwd_reads") <= r,
            "fwd_reads must be >= 0 and at most num_residuals");
    return in[0];
  };
  d.check_regions = check;
  d.kernel = [](const KernelArgs& k) {
    if (k.out.nbytes() > 0) std::memcpy(k.out.raw(), k.in[0]->raw(), k.out.nbytes());
  };
  d.vjp = custom_vjp_vjp;
  d.emit_c = c_loops([](const CLoopArgs& a) {
    const std::int64_t m = a.node.type.numel();
    if (m == 0) return;
    a.w.open("for (int64_t i = 0; i < " + c_int(m) + "; ++i)");
    a.w.line(a.out + "[i] = " + a.in[0] + "[i];");
    a.w.close();
  });
  d.test.grad_order = 0;
  d.test.vjp_not_derivative =
      "the author's backward replaces the derivative (the value is y, the gradient goes to xs); "
      "tests/loops/test_custom_vjp.cpp checks that grad takes it, to second order";
  d.test.cases = {{{Type{f64, {3}}, Type{f64, {3}}, Type{f64, {3}}}, {{"num_residuals", std::int64_t{1}}}}};
  d.test.attach_regions = attach_test_region;
}

}  // namespace mg::ir
