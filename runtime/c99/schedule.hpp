// Scheduling for the C99 emitter: which nodes run as loops, which elementwise nodes are
// inlined into their single consumer's loop (one loop per elementwise chain), and where
// every value lives (a parameter, a constant, or an offset in the one arena). The arena
// is planned by liveness over the loops actually emitted, so an inlined node's operands
// stay alive until its consumer's loop reads them. A view read in place keeps its operand
// alive instead; a step's scratch lives only during that step.
#pragma once
#include <cstddef>
#include <vector>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg::rt::c99 {

enum class Home { none, input, constant, arena, output, state_out };

struct Schedule {
  std::vector<bool> live;      // per node: needed by an output or a state update
  std::vector<bool> inlined;   // per node: computed inside its consumer's loop
  // per node: a strided view (EmitC::view) every consumer reads in place; no loop, no
  // buffer: consumers read its operand 0 through views[id].
  std::vector<bool> viewed;
  std::vector<ir::CView> views;
  // per node: the node whose buffer it is (runtime/view_plan.hpp, plan_aliases), or
  // ir::kNoNode. No loop, no buffer: consumers read the source's buffer row-major.
  std::vector<ir::NodeId> alias;
  // The node whose buffer holds `id`'s elements: its alias source, or itself.
  ir::NodeId buffer(ir::NodeId id) const { return alias[id] != ir::kNoNode ? alias[id] : id; }
  std::vector<ir::NodeId> steps;               // loops, in order
  std::vector<std::vector<ir::NodeId>> reads;  // per step: values its loop reads
  std::vector<std::size_t> scratch_bytes;      // per step: EmitC::scratch (0: none)
  std::vector<std::size_t> scratch_at;         // per step: its arena offset
  std::vector<Home> home;                      // per node
  std::vector<std::size_t> where;              // per node: arena offset or arg index
  std::size_t arena_bytes = 0, peak_bytes = 0;
};

// `out_arg[k]` / `state_arg[j]`: the entry's parameter index of output k / next state j.
// `folded[k]`: node k was computed ahead of time (it depends only on constants and embedded
// weights) and is emitted as a constant array; empty: none.
Schedule schedule_graph(const ir::Graph& g, const std::vector<ir::NodeId>& outputs,
                        const std::vector<StateUpdate>& state, const std::vector<std::size_t>& out_arg,
                        const std::vector<std::size_t>& state_arg, const std::vector<bool>& folded = {});

// Arena bytes of a region body run inline (emit_region): its own schedule's arena, its
// results stored elsewhere, rounded up to the arena's alignment. A node owning regions
// gets them as step scratch after its op's own (EmitC::scratch) bytes.
std::size_t region_arena_bytes(const ir::Graph& body);

// Whether a node is computed by an elementwise C expression (inlinable, one loop).
bool is_c_expr(const ir::Node& n);

}  // namespace mg::rt::c99
