// The IR verifier: checks that a graph keeps its invariants, recursing into regions.
// - every input id is defined before use (topological order, hence no cycles);
// - op nodes reference a registered op, with arity and attribute schema respected;
// - each node's stored type equals what its op's shape rule infers now;
// - inputs have unique names, constants' literals match their type, outputs exist.
// On failure throws VerifyError naming the node, its op, ~10 lines of context and the
// user's file:line.
#pragma once
#include "minigrad/ir/graph.hpp"

namespace mg::ir {

void verify(const Graph& g);

}  // namespace mg::ir
