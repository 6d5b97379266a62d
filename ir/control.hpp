// Builders for the ops that own loop bodies (ir/ops/control.cpp): `scan`, `while_loop`. One node per
// loop, whatever the trip count (DESIGN invariant 7). A node has one result, so a loop's
// results (final carries, stacked ys) are packed into one flat array of the loop's one
// dtype; scan_parts() slices them out with ordinary ops (slice + reshape), whose VJPs
// pack the cotangent back. Light header: no kernels.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::ir {

// Where a scan node's parts sit in its packed result.
struct ScanLayout {
  std::int64_t num_carry = 0, num_const = 0, num_xs = 0, length = 0;
  bool reverse = false;
  DType dtype = DType::f32;
  std::vector<Type> parts;            // final carries, then ys ([length] + one step's y)
  std::vector<std::int64_t> offset;   // per part: first element in the packed result
  std::vector<Type> step;             // per part: one step's type (carries: the carry's)
  std::size_t num_ys() const { return parts.size() - static_cast<std::size_t>(num_carry); }
};
ScanLayout scan_layout(const Node& scan);  // a scan node with its region

// A scan node owning `body` (parameters: carries, consts, one step of each xs; results:
// the next carries, then one step of each y). `length`: the trip count (the leading dim of
// every xs). `checkpoint_every` = k > 0 (dividing length): its gradient saves every k-th
// carry and recomputes the rest. Checks the body against the operands (a ShapeError at
// the ambient line).
Value scan_node(Graph& g, std::unique_ptr<Graph> body, std::span<const Value> init, std::span<const Value> consts,
                std::span<const Value> xs, std::int64_t length, bool reverse, std::int64_t checkpoint_every = 0);
// The parts of a packed scan result (or of a value of its type, e.g. its cotangent).
std::vector<Value> scan_parts(Value packed, const ScanLayout& layout);
// scan_node + scan_parts: final carries, then stacked ys.
std::vector<Value> scan(Graph& g, std::unique_ptr<Graph> body, std::span<const Value> init,
                        std::span<const Value> consts, std::span<const Value> xs, std::int64_t length, bool reverse,
                        std::int64_t checkpoint_every = 0);

// A while_loop node (ir/ops/while_loop.cpp): `cond` (carries, consts) -> bool[] and
// `body` (carries, consts) -> next carries, run while cond holds, at most `max_steps`
// times (more is a run-time error); returns the final carries (unpacked).
std::vector<Value> while_loop(Graph& g, std::unique_ptr<Graph> cond, std::unique_ptr<Graph> body,
                              std::span<const Value> init, std::span<const Value> consts, std::int64_t max_steps);

}  // namespace mg::ir
