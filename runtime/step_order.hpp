// The order in which a graph's op nodes run, shared by the interpreter's memory plan and
// the C99 arena (so both executors plan the same lifetimes). It is node-id order (a
// topological order: forward, backward, update, as built), except for the optimizer's
// update (ir::Role::update): an update node runs right after the last non-update node it
// depends on, so a training step updates each parameter as soon as its gradient exists
// and that gradient's buffer dies at once, instead of every gradient waiting for the end
// (a reversible or layer-by-layer backward then has a peak independent of depth). Update
// nodes that read only inputs (a cast learning rate, weight decay's p * (1 - lr wd)) run
// just before their first consumer. Graphs without update nodes keep node-id order.
#pragma once
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::rt {

// The op nodes marked in `live` (per node id), in the order they run; a topological order.
std::vector<ir::NodeId> step_order(const ir::Graph& g, const std::vector<bool>& live);

}  // namespace mg::rt
