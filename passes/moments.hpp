// Moment propagation as a graph transformation (DESIGN invariant 11), like jvp: appends
// nodes that compute the mean and variance of `outputs` when the values `wrt` are random
// with the given means and variances, walking the nodes in id order and calling each op's
// registry `moments` rule (ir/ops/moment_rules.cpp). Random ops with a rule (dropout_mask,
// random_normal, random_uniform) are noise sources: replaced by their moments.
// Assumptions (stated, not checked): every value's elements are independent of each other
// and of the other operands (diagonal moments: covariances are dropped, so a value used
// twice, or the correlated outputs of one Linear feeding the next, are approximated);
// nonlinear rules marked exact assume Gaussian operands.
// Pre: outputs, wrt, means, vars in one graph; wrt float values; mean/var k typed like wrt k.
// Post: per output its mean and variance, typed like it (a deterministic output: itself and
// zeros); `report` lists every node a rule ran on with its op, the rule's kind and the
// user's line. Errors (UserError naming the op and the line): an op on a random path
// without a rule (loops, softmax, ...), or a random value turned into an integer/bool one.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/graph.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::passes {

struct MomentStep {
  ir::NodeId node;  // the propagated node (of the input graph)
  std::string op;
  ir::MomentKind kind;
  SourceLoc loc;
};
struct MomentResult {
  std::vector<ir::Value> mean, var;  // one per output
  std::vector<MomentStep> report;   // in walk order
};

MomentResult propagate_moments(std::span<const ir::Value> outputs, std::span<const ir::Value> wrt,
                               std::span<const ir::Value> means, std::span<const ir::Value> vars);

}  // namespace mg::passes
