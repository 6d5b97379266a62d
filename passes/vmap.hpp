// Batching (vmap) as a graph transformation (DESIGN invariant 11: no fallback loops).
//
// vmap() re-expresses the nodes between per-example values `args` and `outputs` over a
// batch: `batched[k]` replaces `args[k]`, carrying the batch along axis in_axes[k]
// (negative: from the end; nullopt: not batched, it replaces args[k] as it is). Each node
// that reads a batched value is rebuilt by its op's registry batching rule; nodes that do
// not are shared. Outputs get their batch axis at out_axes[i] (one entry: the same for
// all; nullopt: the output must not depend on a batched argument); an output that does not
// depend on any is broadcast along the batch. The result is ordinary IR, so vmap nests
// (vmap of vmap) and composes with grad and jvp in any order. A `fused` node's region is
// inlined and batched node by node.
// Errors (UserError, at the caller's line unless said): mismatched batch sizes, an axis out
// of range, a batched argument whose type is not args[k]'s with a batch axis, no argument
// batched, and a node whose op has no batching rule (naming the op and the node's line).
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

using BatchAxis = std::optional<int>;  // nullopt: not batched

std::vector<ir::Value> vmap(std::span<const ir::Value> outputs, std::span<const ir::Value> args,
                            std::span<const ir::Value> batched, std::span<const BatchAxis> in_axes,
                            std::span<const BatchAxis> out_axes);

// `v` with axis `from` moved to position `to` (numpy.moveaxis; no node when from == to).
ir::Value move_axis(ir::Value v, int from, int to);

}  // namespace mg::passes
