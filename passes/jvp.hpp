// Forward-mode autodiff as a graph transformation (DESIGN invariants 4 and 11).
//
// jvp() appends nodes that compute d(outputs)/d(wrt) · tangents, walking the nodes between
// `wrt` and `outputs` in id order and calling each op's registry JVP rule. The rules are
// written with the IR builder, so the result is ordinary IR: it differentiates again
// (jvp of grad gives Hessian-vector products), batches (vmap) and runs on both executors.
// A node owning a region (`fused`) has its region inlined and transformed node by node.
// Pre: outputs, wrt, tangents in one graph; wrt float values; tangent k typed like wrt k.
// Post: one tangent per output, typed like it (zeros where an output does not depend on wrt).
// A `wrt` may be any value (an input or an intermediate): its tangent is the one given.
// Tangents do not flow through integer/bool values.
// Errors (GradError, with the user's line): wrt or an output not a float value, a tangent
// of the wrong type, a float op on the path without a JVP rule (naming the op and its line).
#pragma once
#include <span>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::vector<ir::Value> jvp(std::span<const ir::Value> outputs, std::span<const ir::Value> wrt,
                           std::span<const ir::Value> tangents);

}  // namespace mg::passes
