// Memory planning for the interpreter (DESIGN invariant 8): which op nodes run, in what
// order (runtime/step_order.hpp: an optimizer update right after its gradient), and
// which buffer slot each result lives in. A result's slot returns to the free pool
// after its last use and is reused (best fit) by later results. Graph inputs,
// constants and the requested outputs are never pooled. A node owning regions (a loop)
// adds, while it runs, each region's own peak (its body planned once) and its results.
#pragma once
#include <cstddef>
#include <map>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::rt {

struct MemoryPlan {
  static constexpr std::size_t kNoSlot = ~std::size_t{0};
  std::vector<ir::NodeId> steps;            // op nodes to run, in order
  std::vector<std::size_t> slot_of;         // per node id: slot index or kNoSlot
  std::vector<std::vector<ir::NodeId>> release_after;  // per step: nodes dead after it
  std::vector<std::size_t> slot_bytes;      // capacity of each slot
  std::size_t peak_live_bytes = 0;          // max bytes of pooled results alive at once
  std::size_t arena_bytes() const;          // sum of slot capacities
};

// `viewed` (empty, or per node): view nodes that never run; their consumers read the view
// node's operand in place (OpDef::kernel_reads_view), so that operand lives until they ran.
// `aliased` (empty, or per node): steps whose result is operand 0's buffer retyped
// (runtime/view_plan.hpp); they take no slot, and what they alias lives until their
// readers ran.
// Buffer slots reused best-fit: take() returns the smallest free slot of at least `need`
// bytes, or a new one of exactly `need`; release() returns a slot to the pool. Shared by
// the interpreter's plan and the C99 arena.
class SlotPool {
 public:
  std::size_t take(std::size_t need) {
    if (auto it = free_.lower_bound(need); it != free_.end()) {
      const std::size_t slot = it->second;
      free_.erase(it);
      return slot;
    }
    bytes.push_back(need);
    return bytes.size() - 1;
  }
  void release(std::size_t slot) { free_.emplace(bytes[slot], slot); }
  std::vector<std::size_t> bytes;  // capacity of each slot

 private:
  std::multimap<std::size_t, std::size_t> free_;  // capacity -> free slot
};

MemoryPlan plan_memory(const ir::Graph& g, const std::vector<ir::NodeId>& outputs,
                       const std::vector<bool>& viewed = {}, const std::vector<bool>& aliased = {});

}  // namespace mg::rt
