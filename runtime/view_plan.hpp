// View nodes the interpreter never runs: a transpose (or another EmitC::view node) whose
// every consumer's kernel reads the view in place (OpDef::kernel_reads_view) is skipped,
// and those consumers get its operand's buffer with the view (KernelArgs::in_views). A
// Linear's weight.T and the backward pass's x.T are then not copied on every run. Roots
// (outputs, state updates) are always materialised; views of views are not formed.
#pragma once
#include <vector>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/ir/graph.hpp"

namespace mg::rt {

struct ViewPlan {
  std::vector<bool> viewed;                    // per node: a view node that never runs
  std::vector<std::vector<ir::CView>> in_views;  // per node: empty, or one per operand
};

// `aliases` (empty, or per node): nodes that are no views here (plan_aliases).
ViewPlan plan_views(const ir::Graph& g, const std::vector<ir::NodeId>& roots,
                    const std::vector<ir::NodeId>& aliases = {});

// Per node: the node whose buffer it is, read row-major under the node's own type, or
// ir::kNoNode. An alias is a reshape (Traits::reinterprets) or a view (EmitC::view) that
// moves only size-1 axes, of a node with a buffer (chains resolved to their start). It
// costs nothing: no copy, no buffer; its source lives until the alias's last reader. Why:
// vmap's rules reshape around every batched op ([B*N, ...] <-> [B, N, ...]), and copying
// each was 13% of the interpreter's per-sample CNN and a third of its C99 time. Roots, and
// nodes in `excluded` (per node, or empty), are never aliases.
std::vector<ir::NodeId> plan_aliases(const ir::Graph& g, const std::vector<ir::NodeId>& roots,
                                     const std::vector<bool>& excluded = {});

}  // namespace mg::rt
