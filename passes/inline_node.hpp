// Copies one node of a region body into another graph on given operands: how the jvp and
// vmap drivers inline a region (the `fused` op's body) into the enclosing graph. Internal
// to passes/.
#pragma once
#include <span>

#include "minigrad/ir/graph.hpp"

namespace mg::passes::detail {

// An op node through the builder (re-checked, stamped with the node's own line and the
// graph's current role, its regions deep-copied), a constant as a constant. Inputs of `n` map to `operands`.
ir::Value inline_node(const ir::Node& n, ir::Graph& dst, std::span<const ir::Value> operands);

}  // namespace mg::passes::detail
