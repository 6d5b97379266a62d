// The batching driver; what batching an op means lives in the registry's batch rules.
#include "minigrad/passes/vmap.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/inline_node.hpp"

namespace mg::passes {

using ir::Batched;
using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {

std::string axis_str(const BatchAxis& a) { return a ? std::to_string(*a) : std::string("none"); }

// One walk over `src`'s nodes: map[id] is node id's value in `dst` and its batch axis.
// inline_all copies every node of `src` into `dst` (a region body); otherwise unbatched
// nodes are reused as they are.
struct Walk {
  const ir::Graph& src;
  ir::Graph& dst;
  std::int64_t size;
  std::vector<Batched> map;
  bool inline_all;

  Walk(const ir::Graph& s, ir::Graph& d, std::int64_t b, bool inl)
      : src(s), dst(d), size(b), map(s.size()), inline_all(inl) {}

  void node(NodeId id) {
    const Node& n = src.node(id);
    if (n.kind == ir::NodeKind::input) return;  // preset by the caller
    std::vector<Value> ins;
    std::vector<int> axes;
    bool any = false;
    for (NodeId in : n.inputs) {
      ins.push_back(map[in].value);
      axes.push_back(map[in].axis);
      any = any || map[in].axis >= 0;
    }
    if (!any) {
      if (inline_all) map[id] = {detail::inline_node(n, dst, ins), -1};
      return;
    }
    if (!n.op->batch)
      throw UserError("vmap: op '" + n.op->name + "' has no batching rule (" +
                          (n.op->no_batch_rule.empty() ? std::string("none registered") : n.op->no_batch_rule) + ") at " +
                          ir::describe_value(src, id) + "; vmap never falls back to a loop",
                      n.loc);
    ir::BatchRegionFn region = [this](const ir::Graph& body, std::span<const Value> args, std::span<const int> ax) {
      return inline_region(body, args, ax);
    };
    Batched r;
    {
      LocScope at(n.loc, true);  // batched nodes carry the per-example node's user line
      r = n.op->batch(ir::BatchArgs{n, ins, axes, size, &region});
    }
    Shape expect = n.type.shape;
    MG_ASSERT(r.axis >= 0 && r.axis <= static_cast<int>(expect.size()), "batch rule of '" + n.op->name + "': bad axis");
    expect.insert(expect.begin() + r.axis, size);
    MG_ASSERT(r.value.type() == (Type{n.type.dtype, expect}),
              "batch rule of '" + n.op->name + "' gave " + to_string(r.value.type()) + " for " + to_string(n.type) +
                  " batched by " + std::to_string(size) + " at axis " + std::to_string(r.axis));
    map[id] = r;
  }

  // Into the graph of `args`: the enclosing one (fused) or a loop body being built (scan).
  std::vector<Batched> inline_region(const ir::Graph& body, std::span<const Value> args, std::span<const int> axes) {
    Walk w(body, args.empty() ? dst : *args[0].graph, size, true);
    MG_ASSERT(args.size() == body.inputs().size(), "vmap: region arity");
    for (std::size_t i = 0; i < args.size(); ++i) w.map[body.inputs()[i]] = {args[i], axes[i]};
    for (NodeId id = 0; id < body.size(); ++id) w.node(id);
    std::vector<Batched> out;
    for (NodeId o : body.outputs) out.push_back(w.map[o]);
    return out;
  }
};

}  // namespace

Value move_axis(Value v, int from, int to) {
  if (from == to) return v;
  I64List perm;
  for (int d = 0; d < v.rank(); ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return ir::permute(v, perm);
}

std::vector<Value> vmap(std::span<const Value> outputs, std::span<const Value> args, std::span<const Value> batched,
                        std::span<const BatchAxis> in_axes, std::span<const BatchAxis> out_axes) {
  const SourceLoc call = ambient_loc();
  if (outputs.empty()) throw UserError("vmap: no outputs given", call);
  if (args.size() != batched.size() || args.size() != in_axes.size())
    throw UserError("vmap: " + std::to_string(batched.size()) + " argument(s) but " + std::to_string(in_axes.size()) +
                        " in_axes entries (one per argument)",
                    call);
  if (out_axes.size() != 1 && out_axes.size() != outputs.size())
    throw UserError("vmap: " + std::to_string(outputs.size()) + " output(s) but " + std::to_string(out_axes.size()) +
                        " out_axes entries (one, or one per output)",
                    call);
  ir::Graph& g = *outputs[0].graph;
  for (const Value& o : outputs)
    if (!o.valid() || o.graph != &g) throw UserError("vmap: outputs must be values of one graph", call);

  // Arguments: types, axes and one batch size.
  std::int64_t size = -1;
  std::size_t first = 0;
  std::vector<int> axis(args.size(), -1);
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (!args[k].valid() || !batched[k].valid() || args[k].graph != &g || batched[k].graph != &g)
      throw UserError("vmap: argument " + std::to_string(k) + " is not a value of the outputs' graph", call);
    const Type& per = args[k].type();
    const Type& b = batched[k].type();
    if (!in_axes[k]) {
      if (b != per)
        throw UserError("vmap: argument " + std::to_string(k) + " is " + to_string(b) + " with in_axes none, but the " +
                            "function takes " + to_string(per) + " there",
                        call);
      continue;
    }
    const int r = b.rank();
    const int a = *in_axes[k];
    if (a < -r || a >= r || r == 0)
      throw UserError("vmap: in_axes[" + std::to_string(k) + "] = " + std::to_string(a) + " is out of range for argument " +
                          std::to_string(k) + " " + to_string(b) + " (rank " + std::to_string(r) + ")",
                      call);
    axis[k] = a < 0 ? a + r : a;
    Shape without = b.shape;
    const std::int64_t n = without[static_cast<std::size_t>(axis[k])];
    without.erase(without.begin() + axis[k]);
    if (b.dtype != per.dtype || without != per.shape)
      throw UserError("vmap: argument " + std::to_string(k) + " is " + to_string(b) + "; with in_axes " +
                          std::to_string(a) + " the function's " + to_string(per) + " needs the batch axis inserted at " +
                          std::to_string(axis[k]),
                      call);
    if (size < 0) {
      size = n;
      first = k;
    } else if (n != size) {
      throw UserError("vmap: mismatched batch sizes: argument " + std::to_string(first) + " has " +
                          std::to_string(size) + " along its batch axis " + std::to_string(axis[first]) +
                          ", argument " + std::to_string(k) + " has " + std::to_string(n) + " along axis " +
                          std::to_string(axis[k]),
                      call);
    }
  }
  if (size < 0) throw UserError("vmap: no argument is batched (every in_axes entry is none)", call);

  const NodeId end = static_cast<NodeId>(g.size());
  std::vector<NodeId> out_ids;
  for (const Value& o : outputs) out_ids.push_back(o.id);
  const std::vector<bool> needed = g.reachable_from(out_ids);
  Walk w(g, g, size, false);
  for (NodeId id = 0; id < end; ++id) w.map[id] = {g.value(id), -1};
  std::vector<bool> given(end, false);
  NodeId begin = end;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (given[args[k].id])
      throw UserError("vmap: argument " + std::to_string(k) + " repeats " + ir::describe_value(g, args[k].id), call);
    given[args[k].id] = true;
    w.map[args[k].id] = {batched[k], axis[k]};
    begin = std::min(begin, args[k].id);
  }
  for (NodeId id = begin; id < end; ++id)
    if (needed[id] && !given[id]) w.node(id);

  std::vector<Value> result;
  LocScope at(call, true);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const BatchAxis& want = out_axes.size() == 1 ? out_axes[0] : out_axes[i];
    Batched r = w.map[outputs[i].id];
    if (!want) {
      if (r.axis >= 0)
        throw UserError("vmap: output " + std::to_string(i) + " depends on a batched argument, so out_axes none " +
                            "cannot hold it (give it a batch axis)",
                        call);
      result.push_back(r.value);
      continue;
    }
    const int rank = outputs[i].rank() + 1;
    if (*want < -rank || *want >= rank)
      throw UserError("vmap: out_axes " + axis_str(want) + " is out of range for output " + std::to_string(i) + " " +
                          to_string(outputs[i].type()) + " batched (rank " + std::to_string(rank) + ")",
                      call);
    const int to = *want < 0 ? *want + rank : *want;
    if (r.axis < 0) {  // independent of the batch: the same value for every example
      Shape s = outputs[i].shape();
      s.insert(s.begin(), size);
      r = {ir::broadcast_to(r.value, s), 0};
    }
    result.push_back(move_axis(r.value, r.axis, to));
  }
  return result;
}

}  // namespace mg::passes
