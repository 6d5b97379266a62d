// fold_constants: evaluates constant subgraphs at compile time.
//
// What: every op node whose operands are all constants (ops without operands included,
// e.g. `full`, `arange`) is run once with its registry kernel — the interpreter's own
// kernels, so the folded value is bit-identical to what a run would compute — and
// replaced by a constant. Skipped: random ops (their draw is part of the run), ops owning
// regions, results over `max_elements` elements and larger than every operand (a huge
// literal costs more memory than recomputing it; a frozen weight's transpose does not),
// and ops whose kernel reports an error (the error stays a run-time one).
// Pre: a verified graph with outputs. Post: same inputs and outputs, only the nodes the
// outputs need (dead ones are dropped, never evaluated); idempotent.
// Why: gradients and optimizers build many small constant expressions (`full` seeds,
// scaled constants) that need not run every step.
#pragma once
#include <cstdint>
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

struct FoldOptions {
  std::int64_t max_elements = 1 << 16;  // size cap of a folded result that outgrows its operands
};

std::unique_ptr<ir::Graph> fold_constants(const ir::Graph& g, FoldOptions options = {});

}  // namespace mg::passes
