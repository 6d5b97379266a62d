// The C99 backend's first-NaN report (numerics_c99.hpp).
#include "minigrad/runtime/glassbox/numerics_c99.hpp"

#include <cstring>
#include <map>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/glassbox/numerics.hpp"

namespace mg::rt::glassbox {

namespace {

// A copy of value `id` from where the schedule put it.
Array read_home(const ir::Graph& g, const c99::Module& m, ir::NodeId id, const std::byte* arena,
                std::span<void* const> args) {
  const ir::Node& n = g.node(id);
  const c99::Schedule& s = m.schedule;
  if (s.alias[id] != ir::kNoNode) return read_home(g, m, s.alias[id], arena, args).reshaped(n.type.shape);  // its source's buffer
  const void* src = nullptr;
  switch (s.home[id]) {
    case c99::Home::arena: src = arena + s.where[id]; break;
    case c99::Home::output:
    case c99::Home::state_out: src = args[s.where[id]]; break;
    case c99::Home::input:
    case c99::Home::constant:
      for (std::size_t a = 0; a < m.args.size() && !src; ++a) {
        const c99::Arg& arg = m.args[a];
        const bool reads = arg.kind == c99::ArgKind::input || arg.kind == c99::ArgKind::state_in ||
                           arg.kind == c99::ArgKind::constant;
        if (reads && arg.node == id) src = args[a];
      }
      if (!src && n.kind == ir::NodeKind::constant) return *n.literal;
      break;
    case c99::Home::none: break;
  }
  MG_ASSERT(src, "C99 numerics: value %" + std::to_string(id) + " has no buffer to read");
  Array a(n.type);
  if (a.nbytes()) std::memcpy(a.raw(), src, a.nbytes());
  return a;
}

}  // namespace

void raise_c99_nonfinite(const ir::Graph& g, const c99::Module& m, std::size_t code, const std::byte* arena,
                         std::span<void* const> args) {
  const c99::Schedule& s = m.schedule;
  std::vector<ir::NodeId> roots;
  for (const c99::Arg& a : m.args)
    if (a.kind == c99::ArgKind::output || a.kind == c99::ArgKind::state_out) roots.push_back(a.node);
  const c99::NumericsSite* site = code >= g.size() ? &m.numerics_sites.at(code - g.size()) : nullptr;
  const ir::NodeId node = site ? site->path.at(0).first : static_cast<ir::NodeId>(code);

  // The loop's own DAG: node, the inlined and view nodes it computes in place, and the
  // buffers they read.
  std::map<ir::NodeId, Array> val;
  std::vector<ir::NodeId> computed;  // inlined or view nodes, recomputed below
  std::vector<ir::NodeId> stack{node};
  std::vector<bool> seen(g.size(), false);
  while (!stack.empty()) {
    const ir::NodeId id = stack.back();
    stack.pop_back();
    for (ir::NodeId x : g.node(id).inputs) {
      if (seen[x]) continue;
      seen[x] = true;
      if (s.inlined[x] || s.viewed[x]) {
        computed.push_back(x);
        stack.push_back(x);
      } else {
        val.emplace(x, read_home(g, m, x, arena, args));
      }
    }
  }
  std::sort(computed.begin(), computed.end());  // ids are a topological order
  auto source_of = [&](ir::NodeId x) { return s.viewed[x] ? g.node(x).inputs[0] : x; };
  auto operands = [&](const ir::Node& n, std::vector<Array>& in, std::vector<ir::NodeId>& src) {
    in.clear();
    src.clear();
    for (ir::NodeId x : n.inputs) {
      in.push_back(val.at(x));
      src.push_back(source_of(x));
    }
  };
  std::vector<Array> in;
  std::vector<ir::NodeId> src;
  for (ir::NodeId id : computed) {
    const ir::Node& n = g.node(id);
    operands(n, in, src);
    std::vector<const Array*> ptrs;
    for (auto& a : in) ptrs.push_back(&a);
    Array out(n.type);
    n.op->kernel(ir::KernelArgs{ptrs, n, out});
    if (!s.viewed[id] && !all_finite(out)) raise_nonfinite(g, roots, id, in, src, out, "c99");
    val.emplace(id, std::move(out));
  }
  operands(g.node(node), in, src);
  if (!site) raise_nonfinite(g, roots, node, in, src, read_home(g, m, node, arena, args), "c99");
  // A check in a loop body: the loop stopped mid-way, its operands are intact.
  rerun_regions_checked(g, roots, node, in, src, "c99");
  // The interpreter's kernels stayed finite where C's did not (rounding): name the site.
  NumericsReport r;
  r.executor = "c99";
  r.node = site->node;
  for (auto [n, region] : site->path) r.region_path.push_back(RegionStep{n, region, -1});
  const ir::Graph* body = &g;
  for (auto [n, region] : site->path) body = body->node(n).regions.at(region).get();
  const ir::Node& bad = body->node(site->node);
  r.op = bad.op_name();
  r.loc = bad.loc;
  r.role = bad.role;
  r.hint = bad.op ? bad.op->numerics_hint : "";
  r.result.type = bad.type;
  throw NumericsError(locate(g, roots, std::move(r)));
}

}  // namespace mg::rt::glassbox
