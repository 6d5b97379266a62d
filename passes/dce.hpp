// eliminate_dead_code: drops every node the graph's outputs do not need.
//
// What: keeps the nodes reachable backwards from `g.outputs` (recursively inside region
// bodies, from their results) and every graph input (inputs are the interface: bindings
// and persistent state find them by name, even when unused). Persistent-state updates
// survive because the caller lists them among the outputs (rt::compile's roots; see
// nn::TrainStep).
// Pre: a verified graph with outputs. Post: same inputs and outputs; idempotent.
#pragma once
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> eliminate_dead_code(const ir::Graph& g);

}  // namespace mg::passes
