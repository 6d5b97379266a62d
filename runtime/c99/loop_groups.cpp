// Which consecutive flat steps share one chunked loop; see loop_groups.hpp.
#include "minigrad/runtime/c99/loop_groups.hpp"

#include <algorithm>

#include "minigrad/ir/op_registry.hpp"

namespace mg::rt::c99 {

namespace {

// Whether element i of `id` reads a strided (non-contiguous) view, through inlined operands.
bool reads_strided_view(const ir::Graph& g, const Schedule& s, ir::NodeId id) {
  for (ir::NodeId x : g.node(id).inputs) {
    if (s.viewed[x] ? !s.views[x].contiguous() : s.inlined[x] && reads_strided_view(g, s, x)) return true;
  }
  return false;
}

// An expression reading a strided view loops by rows (emit_steps.cpp: io x ii, views
// indexed without div/mod), not over a flat range: left alone, as a chunk of it would
// cost div/mod gathers (and the row loop ignores the chunk range).
bool flat_step(const ir::Graph& g, const Schedule& s, const ir::Node& n) {
  if (is_c_expr(n)) {
    const std::int64_t row = n.type.shape.empty() ? 1 : n.type.shape.back();
    return !(row >= 16 && n.type.numel() > row && reads_strided_view(g, s, n.id));
  }
  return n.kind == ir::NodeKind::op && n.op->emit_c.flat && n.op->emit_c.flat(n);
}

// The buffers a flat step reads other than at its own element i (through a view, or a
// value of another element count: a broadcast source, a scalar), through inlined operands.
void strided_reads(const ir::Graph& g, const Schedule& s, const ir::Node& n, std::int64_t count,
                   std::vector<ir::NodeId>& out) {
  for (ir::NodeId x : n.inputs) {
    if (s.viewed[x]) out.push_back(g.node(x).inputs[0]);
    else if (s.inlined[x]) strided_reads(g, s, g.node(x), count, out);
    else if (g.node(x).type.numel() != count) out.push_back(x);
  }
}

// Whether writing `w` (a step's result) may change what reading `r` gives.
bool may_alias(const ir::Graph& g, const Schedule& s, ir::NodeId w, ir::NodeId r) {
  if (w == r) return true;
  const Home hw = s.home[w], hr = s.home[r];
  if (hr == Home::constant) return false;
  if (hw == Home::arena && hr == Home::arena)
    return s.where[w] < s.where[r] + g.node(r).type.nbytes() && s.where[r] < s.where[w] + g.node(w).type.nbytes();
  // An output or a next state may be written over the caller's buffers (state in place).
  return hw != Home::arena && hr != Home::arena;
}

}  // namespace

std::vector<std::size_t> loop_group_ends(const ir::Graph& g, const Schedule& s) {
  const std::size_t steps = s.steps.size();
  std::vector<std::size_t> end(steps);
  for (std::size_t k = 0; k < steps; ++k) end[k] = k + 1;
  std::size_t start = 0;
  std::vector<ir::NodeId> strided;  // what the group's steps read strided or whole
  for (std::size_t k = 0; k < steps; ++k) {
    const ir::Node& n = g.node(s.steps[k]);
    const std::int64_t count = n.type.numel();
    std::vector<ir::NodeId> mine;
    const bool flat = flat_step(g, s, n) && count > kGroupChunk;  // one chunk: nothing to gain
    if (flat) strided_reads(g, s, n, count, mine);
    bool joins = flat && k > start && g.node(s.steps[start]).type.numel() == count &&
                 flat_step(g, s, g.node(s.steps[start]));
    for (std::size_t j = start; joins && j < k; ++j) {
      // Earlier steps' strided reads must survive this write; this step's strided reads
      // must not see what earlier steps write (only part of it is written yet).
      for (ir::NodeId r : strided) joins = joins && !may_alias(g, s, n.id, r);
      for (ir::NodeId r : mine) joins = joins && !may_alias(g, s, s.steps[j], r);
    }
    if (joins) {
      end[start] = k + 1;
    } else {
      start = k;
      strided.clear();
    }
    strided.insert(strided.end(), mine.begin(), mine.end());
  }
  return end;
}

}  // namespace mg::rt::c99
