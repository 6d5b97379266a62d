// jvp and batch columns of the loop ops (ir/ops/control.cpp: scan; custom_vjp.cpp;
// while_loop.cpp). A loop stays a loop under both (DESIGN invariant 7): the JVP of a scan
// is a scan carrying tangents beside its carries, the batched scan a scan over the batched
// body; the same for while_loop (its batch runs while any example's condition holds);
// custom_vjp batches its backward region.
// Bodies are transformed by the driver's region callback into the new loop's body.
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/control.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/transforms.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::ir::xf {

namespace {

Value flat(Value v) { return reshape(v, {v.type().numel()}); }

// `parts` flattened and joined along `axis` (0: one flat vector; 1: [B, sum]).
Value join(std::vector<Value> parts, std::int64_t axis) { return parts.size() == 1 ? parts[0] : concat(parts, axis); }

// ---- scan: forward mode ---------------------------------------------------------------
// jvp(scan)(c, k, x; tc, tk, tx) = the scan over carries (c, tc), consts (k, tk), xs
// (x, tx) whose body is the body's JVP: (c', tc', y, ty). Every carry gets a tangent (zero
// when none enters: the body may make it depend on one); consts and xs only when given
// one. The tangent of the packed result packs (tc_final, ty stacked) like the result.
Value scan_jvp(const JvpArgs& a) {
  const Node& n = a.node;
  const ScanLayout L = scan_layout(n);
  if (!is_float(L.dtype)) return {};
  MG_ASSERT(a.region, "jvp of scan: no region callback");
  const Graph& body = *n.regions[0];
  const std::size_t C = static_cast<std::size_t>(L.num_carry), K = static_cast<std::size_t>(L.num_const);
  const std::size_t N = a.in.size();
  auto nb = std::make_unique<Graph>();
  std::vector<Value> params(N), tparams(N);
  std::vector<Value> init, tinit, consts, tconsts, xs, txs;
  // Parameters in the new scan's operand order: c, tc, k, tk, x, tx.
  auto section = [&](std::size_t lo, std::size_t hi, bool all, std::vector<Value>& op, std::vector<Value>& top,
                     const char* name) {
    for (std::size_t i = lo; i < hi; ++i) {
      params[i] = nb->add_input(name + std::to_string(i), body.node(body.inputs()[i]).type);
      op.push_back(a.in[i]);
    }
    for (std::size_t i = lo; i < hi; ++i) {
      if (!all && !a.tangents[i].valid()) continue;
      tparams[i] = nb->add_input(std::string("d") + name + std::to_string(i), body.node(body.inputs()[i]).type);
      top.push_back(tangent_or_zeros(a.tangents[i], a.in[i]));
    }
  };
  section(0, C, true, init, tinit, "carry");
  section(C, C + K, false, consts, tconsts, "const");
  section(C + K, N, false, xs, txs, "x");
  std::vector<Value> prim;
  const std::vector<Value> tan = (*a.region)(body, params, tparams, &prim);
  const std::size_t P = body.outputs.size();
  for (std::size_t p = 0; p < C; ++p) nb->outputs.push_back(prim[p].id);
  for (std::size_t p = 0; p < C; ++p) nb->outputs.push_back(tangent_or_zeros(tan[p], prim[p]).id);
  for (std::size_t p = C; p < P; ++p) nb->outputs.push_back(prim[p].id);
  for (std::size_t p = C; p < P; ++p) nb->outputs.push_back(tangent_or_zeros(tan[p], prim[p]).id);
  init.insert(init.end(), tinit.begin(), tinit.end());
  consts.insert(consts.end(), tconsts.begin(), tconsts.end());
  xs.insert(xs.end(), txs.begin(), txs.end());
  const std::vector<Value> parts = scan(*a.out.graph, std::move(nb), init, consts, xs, L.length, L.reverse,
                                        n.attrs.i64("checkpoint_every"));
  std::vector<Value> t;
  for (std::size_t p = 0; p < C; ++p) t.push_back(flat(parts[C + p]));
  for (std::size_t p = C; p < P; ++p) t.push_back(flat(parts[C + P + (p - C)]));
  if (t.empty()) return {};
  return join(t, 0);
}

// ---- scan: batching -------------------------------------------------------------------
// vmap(scan) = a scan over the batched body, batch axis 0 on every batched body value.
// Carries: batched when they enter batched or when the body makes them so (found by a
// fixed point; those are broadcast up front). Consts: batch axis in front. xs: [T, B, ...]
// (step s of every example is one slice), so the scan axis stays leading. The packed
// result becomes [B, C + T * ys_numel] (each example's packing, batch in front).
Batched scan_batch(const BatchArgs& a) {
  const Node& n = a.node;
  const ScanLayout L = scan_layout(n);
  MG_ASSERT(a.region, "vmap of scan: no region callback");
  const Graph& body = *n.regions[0];
  const std::size_t C = static_cast<std::size_t>(L.num_carry), K = static_cast<std::size_t>(L.num_const);
  const std::size_t N = a.in.size(), P = body.outputs.size();
  const std::int64_t B = a.size, T = L.length;
  std::vector<bool> batched(N);
  for (std::size_t i = 0; i < N; ++i) batched[i] = a.axes[i] >= 0;
  auto with_batch = [&](Type t) {
    t.shape.insert(t.shape.begin(), B);
    return t;
  };
  for (;;) {
    auto nb = std::make_unique<Graph>();
    std::vector<Value> params;
    std::vector<int> axes;
    for (std::size_t i = 0; i < N; ++i) {
      const Type& t = body.node(body.inputs()[i]).type;
      params.push_back(nb->add_input("p" + std::to_string(i), batched[i] ? with_batch(t) : t));
      axes.push_back(batched[i] ? 0 : -1);
    }
    const std::vector<Batched> out = (*a.region)(body, params, axes);
    bool grew = false;
    for (std::size_t i = 0; i < C; ++i)
      if (!batched[i] && out[i].axis >= 0) batched[i] = grew = true;
    if (grew) continue;  // a carry became batched in the body: batch it from the start
    // The body's results, batch axis in front (ys always batched).
    for (std::size_t p = 0; p < P; ++p) {
      const Batched& r = out[p];
      Value v = r.value;
      if (r.axis >= 0) {
        v = move_to_front(v, r.axis);
      } else if (p >= C || batched[p]) {
        v = broadcast_to(v, with_batch(v.type()).shape);
      }
      nb->outputs.push_back(v.id);
    }
    std::vector<Value> init, consts, xs;
    for (std::size_t i = 0; i < N; ++i) {
      Value v = a.in[i];
      if (i < C + K) {
        if (batched[i]) v = a.axes[i] >= 0 ? move_to_front(v, a.axes[i]) : broadcast_to(v, with_batch(v.type()).shape);
        (i < C ? init : consts).push_back(v);
        continue;
      }
      if (batched[i]) {  // [B, xs...] -> [B, T, step] -> [T, B, step...]
        const Type step = body.node(body.inputs()[i]).type;
        Value f = reshape(move_to_front(v, a.axes[i]), {B, T, step.numel()});
        Shape s = with_batch(step).shape;
        s.insert(s.begin(), T);
        v = reshape(permute(f, {1, 0, 2}), s);
      }
      xs.push_back(v);
    }
    const std::vector<Value> parts =
        scan(*a.in[0].graph, std::move(nb), init, consts, xs, T, L.reverse, n.attrs.i64("checkpoint_every"));
    std::vector<Value> rows;  // per part: [B, its elements per example]
    for (std::size_t p = 0; p < P; ++p) {
      Value v = parts[p];
      if (p < C && !batched[p]) v = broadcast_to(v, with_batch(v.type()).shape);
      if (p >= C) v = move_to_front(v, 1);  // [T, B, y...] -> [B, T, y...]
      rows.push_back(reshape(v, {B, L.parts[p].numel()}));
    }
    return {join(rows, 1), 0};
  }
}


// ---- while_loop ------------------------------------------------------------------------
// Forward mode: the tangents ride in the same loop (the trip count does not depend on
// them): carries (c, tc), consts (k, tk); the condition reads c and k only, the body is
// the body's JVP.
Value while_jvp(const JvpArgs& a) {
  const Node& n = a.node;
  if (!is_float(n.type.dtype)) return {};
  MG_ASSERT(a.region, "jvp of while_loop: no region callback");
  const Graph& cond = *n.regions[0];
  const Graph& body = *n.regions[1];
  const std::size_t C = static_cast<std::size_t>(n.attrs.i64("num_carry")), N = a.in.size();
  auto nc = std::make_unique<Graph>();
  auto nb = std::make_unique<Graph>();
  std::vector<Value> cp(N), bp(N), tp(N), init, tinit, consts, tconsts;
  auto section = [&](std::size_t lo, std::size_t hi, bool all, std::vector<Value>& op, std::vector<Value>& top) {
    for (std::size_t i = lo; i < hi; ++i) {
      cp[i] = nc->add_input("p" + std::to_string(i), a.in[i].type());
      bp[i] = nb->add_input("p" + std::to_string(i), a.in[i].type());
      op.push_back(a.in[i]);
    }
    for (std::size_t i = lo; i < hi; ++i) {
      if (!all && !a.tangents[i].valid()) continue;
      nc->add_input("d" + std::to_string(i), a.in[i].type());
      tp[i] = nb->add_input("d" + std::to_string(i), a.in[i].type());
      top.push_back(tangent_or_zeros(a.tangents[i], a.in[i]));
    }
  };
  section(0, C, true, init, tinit);
  section(C, N, false, consts, tconsts);
  nc->outputs = {inline_region(cond, *nc, cp)[0].id};
  std::vector<Value> prim;
  const std::vector<Value> tan = (*a.region)(body, bp, tp, &prim);
  for (std::size_t i = 0; i < C; ++i) nb->outputs.push_back(prim[i].id);
  for (std::size_t i = 0; i < C; ++i) nb->outputs.push_back(tangent_or_zeros(tan[i], prim[i]).id);
  init.insert(init.end(), tinit.begin(), tinit.end());
  consts.insert(consts.end(), tconsts.begin(), tconsts.end());
  const std::vector<Value> r =
      while_loop(*a.out.graph, std::move(nc), std::move(nb), init, consts, n.attrs.i64("max_steps"));
  std::vector<Value> t;
  for (std::size_t i = 0; i < C; ++i) t.push_back(flat(r[C + i]));
  return join(t, 0);
}

// Batching (as jax.vmap of a while_loop with a batched predicate): every carry batched
// (axis 0), the loop runs while ANY example's condition holds, and an example whose
// condition is false keeps its carries (a select), so each ends as its own loop would.
// At most max_steps body runs either way, so the max_steps error is per example too.
Batched while_batch(const BatchArgs& a) {
  const Node& n = a.node;
  MG_ASSERT(a.region, "vmap of while_loop: no region callback");
  const std::size_t C = static_cast<std::size_t>(n.attrs.i64("num_carry")), N = a.in.size();
  const std::int64_t B = a.size;
  auto with_batch = [&](Type t) {
    t.shape.insert(t.shape.begin(), B);
    return t;
  };
  auto to_batch = [&](const Batched& r) {
    return r.axis >= 0 ? move_to_front(r.value, r.axis) : broadcast_to(r.value, with_batch(r.value.type()).shape);
  };
  std::vector<Value> init, consts;
  std::vector<int> axes;
  for (std::size_t i = 0; i < N; ++i) {
    const bool b = i < C || a.axes[i] >= 0;
    Value v = b ? to_batch(Batched{a.in[i], a.axes[i]}) : a.in[i];
    (i < C ? init : consts).push_back(v);
    axes.push_back(b ? 0 : -1);
  }
  auto params_of = [&](Graph& r) {
    std::vector<Value> p;
    for (std::size_t i = 0; i < N; ++i) p.push_back(r.add_input("p" + std::to_string(i), (i < C ? init[i] : consts[i - C]).type()));
    return p;
  };
  // Per example: whether its loop still runs, bool[B].
  auto running = [&](std::span<const Value> p) { return to_batch((*a.region)(*n.regions[0], p, axes)[0]); };
  auto nc = std::make_unique<Graph>();
  {
    const std::vector<Value> p = params_of(*nc);
    const Value any = reduce("reduce_max", cast(running(p), n.type.dtype == DType::f32 ? DType::f32 : DType::f64), {0}, false);
    nc->outputs = {binary("gt", any, full_like(any, 0.0)).id};
  }
  auto nb = std::make_unique<Graph>();
  {
    const std::vector<Value> p = params_of(*nb);
    const Value go = running(p);
    const std::vector<Batched> next = (*a.region)(*n.regions[1], p, axes);
    for (std::size_t i = 0; i < C; ++i) {
      const Value v = to_batch(next[i]);
      Shape ones(static_cast<std::size_t>(v.rank()), 1);
      ones[0] = B;
      const Value mask = broadcast_to(reshape(go, ones), v.type().shape);
      nb->outputs.push_back(where(mask, v, p[i]).id);
    }
  }
  const std::vector<Value> r =
      while_loop(*a.in[0].graph, std::move(nc), std::move(nb), init, consts, n.attrs.i64("max_steps"));
  std::vector<Value> rows;
  for (std::size_t i = 0; i < C; ++i) rows.push_back(reshape(r[i], {B, r[i].type().numel() / B}));
  return {join(rows, 1), 0};
}

// ---- custom_vjp ------------------------------------------------------------------------
// The forward's nodes (y, residuals) are ordinary nodes, batched by the driver; the node
// itself becomes a custom_vjp of the batched y whose backward is the batched backward: its
// dx for a batched x keeps the batch in front, its dx for an unbatched x (one x shared by
// the batch) sums the examples' contributions, as the gradient of a shared input does.
Batched custom_vjp_batch(const BatchArgs& a) {
  const Node& n = a.node;
  MG_ASSERT(a.region && n.regions.size() == 1, "vmap of custom_vjp: no region callback");
  const Graph& bwd = *n.regions[0];
  const std::size_t N = a.in.size(), R = static_cast<std::size_t>(n.attrs.i64("num_residuals"));
  const std::int64_t B = a.size;
  auto to_batch = [&](Value v, int axis) {
    if (axis >= 0) return move_to_front(v, axis);
    Shape s = v.shape();
    s.insert(s.begin(), B);
    return broadcast_to(v, s);
  };
  std::vector<Value> in{to_batch(a.in[0], a.axes[0])};
  std::vector<int> axes;
  auto nb = std::make_unique<Graph>();
  std::vector<Value> params;
  for (std::size_t i = 1; i < N; ++i) {
    in.push_back(a.axes[i] >= 0 ? move_to_front(a.in[i], a.axes[i]) : a.in[i]);
    params.push_back(nb->add_input("p" + std::to_string(i), in.back().type()));
    axes.push_back(a.axes[i] >= 0 ? 0 : -1);
  }
  params.push_back(nb->add_input("dy", in[0].type()));
  axes.push_back(0);
  const std::vector<Batched> dx = (*a.region)(bwd, params, axes);
  for (std::size_t j = 0; j < dx.size(); ++j) {
    Value d = dx[j].value;
    if (a.axes[1 + R + j] >= 0) {
      d = to_batch(d, dx[j].axis);
    } else if (dx[j].axis >= 0) {
      d = reduce_sum(d, {dx[j].axis}, false);
    } else {
      d = mul(d, full_like(d, static_cast<double>(B)));  // the same dx from every example
    }
    nb->outputs.push_back(d.id);
  }
  const Value v = make_op(*in[0].graph, *n.op, in, n.attrs);
  in[0].graph->mutable_node(v.id).regions.push_back(std::move(nb));
  return {v, 0};
}

}  // namespace

void register_loop_transforms() {
  OpDef& scan = defined_op("scan");
  scan.jvp = scan_jvp;
  scan.batch = scan_batch;
  OpDef& cv = defined_op("custom_vjp");
  // As jax.custom_vjp: forward mode would need a JVP the author did not supply (the
  // backward gives J^T u, not J v); differentiating the forward's nodes would ignore the
  // author's rule (a surrogate gradient exists because the true derivative is unwanted).
  cv.no_jvp_rule =
      "a custom_vjp supplies a backward only (J^T u), not the forward-mode J v, as in JAX; use grad, or write "
      "the function without custom_vjp for jvp/jacfwd";
  cv.batch = custom_vjp_batch;
  OpDef& wl = defined_op("while_loop");
  wl.jvp = while_jvp;
  wl.batch = while_batch;
}

}  // namespace mg::ir::xf
