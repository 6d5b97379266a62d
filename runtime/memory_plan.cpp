// Liveness-based slot assignment; see memory_plan.hpp.
#include "minigrad/runtime/memory_plan.hpp"

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/step_order.hpp"

#include <algorithm>

namespace mg::rt {

std::size_t MemoryPlan::arena_bytes() const {
  std::size_t s = 0;
  for (auto b : slot_bytes) s += b;
  return s;
}

namespace {

// Bytes a node's regions hold while it runs: per region, its own plan's peak (planned
// once, however often the body runs) plus the results one run of it returns (a loop's
// next carries and step outputs). A loop's peak is thus independent of its trip count.
std::size_t region_bytes(const ir::Node& n) {
  std::size_t b = 0;
  for (const auto& r : n.regions) {
    b += plan_memory(*r, r->outputs).peak_live_bytes;
    for (ir::NodeId o : r->outputs) b += r->node(o).type.nbytes();
  }
  return b;
}

}  // namespace

MemoryPlan plan_memory(const ir::Graph& g, const std::vector<ir::NodeId>& outputs, const std::vector<bool>& viewed,
                       const std::vector<bool>& aliased) {
  MemoryPlan p;
  std::vector<bool> live = g.reachable_from(outputs);
  std::vector<bool> is_output(g.size(), false);
  for (auto o : outputs) is_output[o] = true;
  const auto is_viewed = [&](ir::NodeId id) { return !viewed.empty() && viewed[id]; };
  const auto is_alias = [&](ir::NodeId id) { return !aliased.empty() && aliased[id]; };
  // What a read of `in` reads: a view node's operand, the buffer an alias (chain) retypes.
  const auto source = [&](ir::NodeId in) {
    while (is_viewed(in) || is_alias(in)) in = g.node(in).inputs[0];
    return in;
  };

  for (ir::NodeId id : step_order(g, live))
    if (!is_viewed(id)) p.steps.push_back(id);

  // Last step that reads each node.
  constexpr std::size_t kNever = ~std::size_t{0};
  std::vector<std::size_t> last_use(g.size(), kNever);
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    for (ir::NodeId in : g.node(p.steps[s]).inputs) last_use[source(in)] = s;

  p.slot_of.assign(g.size(), MemoryPlan::kNoSlot);
  p.release_after.resize(p.steps.size());
  SlotPool pool;
  std::size_t live_bytes = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    ir::NodeId id = p.steps[s];
    const ir::Node& n = g.node(id);
    if (!is_output[id] && !is_alias(id)) {
      std::size_t need = n.type.nbytes();
      p.slot_of[id] = pool.take(need);
      live_bytes += need;
      p.peak_live_bytes = std::max(p.peak_live_bytes, live_bytes);
      if (last_use[id] == kNever) p.release_after[s].push_back(id);  // computed, never read
    }
    if (n.op->runs_regions) p.peak_live_bytes = std::max(p.peak_live_bytes, live_bytes + region_bytes(n));
    // Inputs whose last reader is this step die now (the result was placed first, so a
    // kernel never writes into a buffer it reads).
    for (ir::NodeId read : n.inputs) {
      const ir::NodeId in = source(read);
      if (last_use[in] != s || p.slot_of[in] == MemoryPlan::kNoSlot) continue;
      auto& rel = p.release_after[s];
      if (std::find(rel.begin(), rel.end(), in) == rel.end()) rel.push_back(in);
    }
    for (ir::NodeId dead : p.release_after[s]) {
      pool.release(p.slot_of[dead]);
      live_bytes -= g.node(dead).type.nbytes();
    }
  }
  p.slot_bytes = std::move(pool.bytes);
  return p;
}

}  // namespace mg::rt
