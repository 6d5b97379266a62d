// View nodes the interpreter never runs: a transpose (or another EmitC::view node) whose
// every consumer's kernel reads the view in place (OpDef::kernel_reads_view) is skipped,
// and those consumers get its operand's buffer with the view (KernelArgs::in_views). A
// Linear's weight.T and the backward pass's x.T are then not copied on every run. Roots
// (outputs, state updates) are always materialised; views of views are not formed.
// Aliases: a node whose result is its operand's bytes retyped (OpDef::same_bytes: a
// reshape, the head split's [B*T, E] -> [B, T, H, D]) runs no kernel either; its value is
// operand 0's buffer under its own type, and that buffer lives until the alias's last
// reader (runtime/memory_plan.hpp). Roots and aliases of a view are copied as before.
#pragma once
#include <vector>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/ir/graph.hpp"

namespace mg::rt {

struct ViewPlan {
  std::vector<bool> viewed;                    // per node: a view node that never runs
  std::vector<bool> aliased;                   // per node: operand 0's buffer, retyped
  std::vector<std::vector<ir::CView>> in_views;  // per node: empty, or one per operand
};

ViewPlan plan_views(const ir::Graph& g, const std::vector<ir::NodeId>& roots);

}  // namespace mg::rt
