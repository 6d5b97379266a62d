// eliminate_common_subexpressions: hash-consing.
//
// What: two nodes with the same op, the same (already deduplicated) operands, equal
// attributes and equal type compute the same value; the later one is replaced by the
// earlier. Constants are merged when their type and every byte agree. Not merged: graph
// inputs, random ops (each draw is its own), nodes owning regions.
// Pre: a verified graph with outputs. Post: same inputs and outputs, no two mergeable
// nodes, no dead ones (they are dropped, not hashed); bit-identical results; idempotent (cse(cse(g)) prints as cse(g)).
// Why: the grad pass and the DSL rebuild the same subexpressions (full_like seeds,
// transposes, broadcasts of one bias) many times.
#pragma once
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> eliminate_common_subexpressions(const ir::Graph& g);

}  // namespace mg::passes
