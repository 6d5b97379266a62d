// Reverse-mode autodiff as a graph transformation (DESIGN invariant 4).
//
// vjp() appends adjoint nodes to the graph that compute cotangent · d(outputs)/d(wrt),
// walking the nodes between `wrt` and `outputs` in reverse id order and calling each op's
// registry VJP rule. The rules are written with the IR builder, so the result is ordinary
// IR and can be differentiated again (grad of grad, Hessians).
// Pre: outputs, cotangents, wrt in one graph; wrt are float values; cotangent types equal
//      the output types. Post: one result per wrt, typed like it (zeros if independent).
// Gradients do not flow through integer/bool values (indices, masks, comparisons).
// Errors (GradError, with the user's line): wrt not a float value; a float op on the path
// that has no VJP rule; a non-scalar output given to grad().
#pragma once
#include <span>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::vector<ir::Value> vjp(std::span<const ir::Value> outputs, std::span<const ir::Value> cotangents,
                           std::span<const ir::Value> wrt);

// d(output)/d(wrt) for a scalar float output.
std::vector<ir::Value> grad(ir::Value output, std::span<const ir::Value> wrt);

}  // namespace mg::passes
