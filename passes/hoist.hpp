// hoist_loop_invariants: loop-invariant code motion for ops whose regions run many times
// (scan, while_loop).
//
// What: in a loop body, a node is invariant when it is a pure op (not random, owning no
// regions) whose operands are invariant parameters (the registry's invariant_operands
// column: a scan's consts, a while_loop's consts), constants or invariant nodes. Each
// invariant node the rest of the body reads (or returns) is computed once before the loop
// instead, and reaches the body as a new invariant operand (add_invariants column); the
// invariant nodes only it needed drop out of the body. Nested loops are hoisted from the
// inside out, so an inner invariant can leave both loops.
// Pre: a verified graph with outputs. Post: same inputs and outputs and the same values
// (the moved nodes compute the same thing, once); idempotent.
// Why: an RNN's `broadcast_to(b)`, a weight's transpose or a scaled constant inside a body
// otherwise run T times.
#pragma once
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> hoist_loop_invariants(const ir::Graph& g);

}  // namespace mg::passes
