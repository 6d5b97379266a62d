// Inlining decisions and the arena plan; see schedule.hpp.
#include "minigrad/runtime/c99/schedule.hpp"

#include "minigrad/ir/errors.hpp"

#include <algorithm>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/memory_plan.hpp"
#include "minigrad/runtime/step_order.hpp"
#include "minigrad/runtime/view_plan.hpp"

namespace mg::rt::c99 {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::size_t region_arena_bytes(const ir::Graph& body) {
  std::vector<std::size_t> out_arg(body.outputs.size());
  for (std::size_t k = 0; k < out_arg.size(); ++k) out_arg[k] = k;
  return aligned(schedule_graph(body, body.outputs, {}, out_arg, {}).arena_bytes);
}

bool is_c_expr(const ir::Node& n) {
  return n.kind == ir::NodeKind::op && n.op->emit_c.is_expr() && !n.op->traits.random && n.regions.empty();
}

Schedule schedule_graph(const ir::Graph& g, const std::vector<ir::NodeId>& outputs,
                        const std::vector<StateUpdate>& state, const std::vector<std::size_t>& out_arg,
                        const std::vector<std::size_t>& state_arg, const std::vector<bool>& folded_in) {
  Schedule s;
  const std::size_t n = g.size();
  std::vector<bool> folded = folded_in;
  folded.resize(n, false);
  std::vector<ir::NodeId> roots = outputs;
  for (auto& st : state) roots.push_back(st.update);
  s.live = g.reachable_from(roots);
  s.inlined.assign(n, false);
  s.alias = plan_aliases(g, roots, folded);
  s.home.assign(n, Home::none);
  s.where.assign(n, 0);

  // Uses by live op nodes; roots count as uses that no loop can absorb.
  std::vector<int> uses(n, 0);
  std::vector<ir::NodeId> consumer(n, ir::kNoNode);
  std::vector<bool> root(n, false);
  for (auto r : roots) root[r] = true;
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!s.live[id] || g.node(id).kind != ir::NodeKind::op || folded[id]) continue;
    for (ir::NodeId in : g.node(id).inputs) {
      ++uses[in];
      consumer[in] = id;
    }
  }
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!s.live[id] || root[id] || uses[id] != 1 || !is_c_expr(nd) || folded[id]) continue;
    const ir::Node& c = g.node(consumer[id]);
    s.inlined[id] = is_c_expr(c) && c.type.shape == nd.type.shape;
  }

  // Views: every live consumer reads strided operands, and the operand is a buffer.
  s.viewed.assign(n, false);
  s.views.assign(n, {});
  // Elementwise loops read views too (element i at the view's offset), when that index
  // is cheap: no division (a scalar or the trailing dims repeated), else a copy is faster.
  std::vector<bool> view_ok(n, true);  // all consumers so far read views
  std::vector<bool> expr_use(n, false);
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!s.live[id] || nd.kind != ir::NodeKind::op || folded[id]) continue;
    for (std::size_t k = 0; k < nd.inputs.size(); ++k) {
      const ir::NodeId in = nd.inputs[k];
      const bool expr = is_c_expr(nd) && nd.type.shape == g.node(in).type.shape;  // reads element i
      const ir::EmitC& e = nd.op->emit_c;
      view_ok[in] = view_ok[in] && (e.reads_views || (e.reads_view_at && e.reads_view_at(nd, k)) || expr);
      expr_use[in] = expr_use[in] || is_c_expr(nd);
    }
  }
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!s.live[id] || root[id] || folded[id] || uses[id] == 0 || nd.kind != ir::NodeKind::op ||
        !nd.op->emit_c.view || nd.inputs.size() != 1 || s.inlined[nd.inputs[0]] || s.alias[id] != ir::kNoNode)
      continue;
    // A view of a view only through aliases: a reshape's buffer is its operand's, element
    // for element (the transpose of a reshaped gradient reads the matmul's output).
    const ir::CView& under = s.views[nd.inputs[0]];
    if (s.viewed[nd.inputs[0]] && (!under.contiguous() || under.offset != 0)) continue;
    std::vector<Type> in_types{g.node(nd.inputs[0]).type};
    if (auto v = nd.op->emit_c.view(nd, in_types)) {
      // A contiguous view (a reshape) is an alias: every consumer reads it as the plain
      // buffer it is. The miniGPT step copied 126 of them, 6% of its time.
      if (!v->contiguous() && !view_ok[id]) continue;
      // Flat elementwise loops divide to index such a view; loops written as rows (a last
      // axis of 16 or more, see emit_steps.cpp) index it by row and column instead.
      const bool rows = !nd.type.shape.empty() && nd.type.shape.back() >= 16 && nd.type.numel() > nd.type.shape.back();
      if (!v->contiguous() && expr_use[id] && !rows &&
          ir::c_offset("i", nd.type.shape, v->strides).find('/') != std::string::npos)
        continue;
      s.viewed[id] = true;
      s.views[id] = std::move(*v);
    }
  }

  // Loops, in the interpreter's order (runtime/step_order.hpp), and what each reads
  // (through inlined operands).
  for (ir::NodeId id : step_order(g, s.live)) {
    const ir::Node& nd = g.node(id);
    if (s.inlined[id] || s.viewed[id] || folded[id] || s.alias[id] != ir::kNoNode) continue;
    s.steps.push_back(id);
    std::size_t scratch = 0;
    if (nd.op->emit_c.scratch) {
      std::vector<Type> in_types;
      for (ir::NodeId in : nd.inputs) in_types.push_back(g.node(in).type);
      scratch = static_cast<std::size_t>(nd.op->emit_c.scratch(nd, in_types));
    }
    if (nd.op->runs_regions) {  // loop bodies: their arenas after the op's own scratch
      scratch = aligned(scratch);
      for (const auto& r : nd.regions) scratch += region_arena_bytes(*r);
    }
    s.scratch_bytes.push_back(scratch);
    std::vector<ir::NodeId> reads, stack(nd.inputs.begin(), nd.inputs.end());
    while (!stack.empty()) {
      const ir::NodeId v = stack.back();
      stack.pop_back();
      if (s.inlined[v] || s.viewed[v]) {
        for (ir::NodeId in : g.node(v).inputs) stack.push_back(in);
      } else if (std::find(reads.begin(), reads.end(), s.buffer(v)) == reads.end()) {
        reads.push_back(s.buffer(v));
      }
    }
    s.reads.push_back(std::move(reads));
  }

  // Homes: parameters first (an output or a next-state value is written in place).
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (nd.kind == ir::NodeKind::input) s.home[id] = Home::input;
    if (nd.kind == ir::NodeKind::constant || folded[id]) s.home[id] = Home::constant;
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const ir::NodeId id = outputs[k];
    if (g.node(id).kind == ir::NodeKind::op && s.home[id] == Home::none) {
      s.home[id] = Home::output;
      s.where[id] = out_arg[k];
    }
  }
  for (std::size_t j = 0; j < state.size(); ++j) {
    const ir::NodeId id = state[j].update;
    if (g.node(id).kind == ir::NodeKind::op && s.home[id] == Home::none) {
      s.home[id] = Home::state_out;
      s.where[id] = state_arg[j];
    }
  }

  // The arena: best-fit slots reused after a value's last read.
  constexpr std::size_t kNever = ~std::size_t{0};
  std::vector<std::size_t> last_use(n, kNever);
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    for (ir::NodeId r : s.reads[k]) last_use[r] = k;
  std::vector<std::size_t> slot_of(n, kNever);
  SlotPool pool;
  std::vector<std::size_t> scratch_slot_of;  // per step
  std::size_t live_bytes = 0;
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const ir::NodeId id = s.steps[k];
    std::vector<ir::NodeId> dead;
    if (s.home[id] == Home::none) {
      s.home[id] = Home::arena;
      slot_of[id] = pool.take(aligned(g.node(id).type.nbytes()));
      live_bytes += g.node(id).type.nbytes();
      s.peak_bytes = std::max(s.peak_bytes, live_bytes);
      if (last_use[id] == kNever) dead.push_back(id);
    }
    // The step's scratch: a slot of its own while the loop runs, free right after.
    std::size_t scratch_slot = kNever;
    if (s.scratch_bytes[k] > 0) {
      scratch_slot = pool.take(aligned(s.scratch_bytes[k]));
      s.peak_bytes = std::max(s.peak_bytes, live_bytes + s.scratch_bytes[k]);
      pool.release(scratch_slot);
    }
    scratch_slot_of.push_back(scratch_slot);
    for (ir::NodeId r : s.reads[k])
      if (last_use[r] == k && slot_of[r] != kNever) dead.push_back(r);
    for (ir::NodeId d : dead) {
      pool.release(slot_of[d]);
      live_bytes -= g.node(d).type.nbytes();
    }
  }
  std::vector<std::size_t> offset(pool.bytes.size());
  for (std::size_t k = 0; k < pool.bytes.size(); ++k) {
    offset[k] = s.arena_bytes;
    if (__builtin_add_overflow(s.arena_bytes, pool.bytes[k], &s.arena_bytes))
      throw UserError("C99 backend: the arena's size overflows (buffers too large to address)");
  }
  for (ir::NodeId id = 0; id < n; ++id)
    if (slot_of[id] != kNever) s.where[id] = offset[slot_of[id]];
  for (std::size_t slot : scratch_slot_of) s.scratch_at.push_back(slot == kNever ? 0 : offset[slot]);
  return s;
}

}  // namespace mg::rt::c99
