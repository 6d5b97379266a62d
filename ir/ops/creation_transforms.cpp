// jvp and batch columns of the creation family (ir/ops/creation.cpp) and of `fused`
// (ir/ops/fused.cpp, a node owning a region).
//
// What a batched draw means: random_normal / random_uniform have no operands, so vmap never
// batches them: every example of the batch sees the same draw (as jax.vmap over a function
// whose key is not batched). dropout_mask and random_normal_step with an unbatched step
// counter also give every example the same draw; with a batched counter (one per example)
// example b gets the draw its own counter keys, exactly as running it alone.
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

void register_creation_transforms() {
  // No operands: the drivers only call a rule with a tangent / a batched operand, so these
  // run never; they exist so the columns are complete and the reason is said here.
  for (const char* name : {"full", "arange", "eye", "random_normal", "random_uniform"}) {
    defined_op(name).jvp = [](const JvpArgs& a) -> Value {
      MG_ASSERT(false, "jvp rule of '" + a.node.op_name() + "' called: it has no operands, so no tangent reaches it");
      return {};
    };
    defined_op(name).batch = [](const BatchArgs& a) -> Batched {
      MG_ASSERT(false, "batch rule of '" + a.node.op_name() + "' called: it has no operands, so it is never batched");
      return {};
    };
  }
  // A counter per example: the batched counter leads the shape, and its element b keys row
  // b (the op's row rule), so the batch is exactly the per-example draws stacked.
  for (const char* name : {"dropout_mask", "random_normal_step"}) {
    defined_op(name).batch = [](const BatchArgs& a) {
      I64List shape{a.size};
      const I64List& s = a.node.attrs.list("shape");
      shape.insert(shape.end(), s.begin(), s.end());
      return rebuild(a, {to_front(a, 0)}, with(a.node.attrs, "shape", shape));
    };
  }
  // fused: the region is inlined into the enclosing graph and transformed node by node
  // (fusion runs again in the pass pipeline afterwards).
  OpDef& fused = defined_op("fused");
  fused.jvp = [](const JvpArgs& a) -> Value {
    MG_ASSERT(a.region && a.node.regions.size() == 1, "jvp of fused: no region callback");
    return (*a.region)(*a.node.regions[0], a.in, a.tangents, nullptr)[0];
  };
  fused.batch = [](const BatchArgs& a) -> Batched {
    MG_ASSERT(a.region && a.node.regions.size() == 1, "vmap of fused: no region callback");
    return (*a.region)(*a.node.regions[0], a.in, a.axes)[0];
  };
}

}  // namespace mg::ir::xf
