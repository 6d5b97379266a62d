// The `scan` op: a loop that stays a loop (DESIGN invariant 7). One node owns its body
// region; executors run (interpreter) or emit (C99) the body once per step, never
// unrolled. Operands: carries, consts (loop-invariant), xs (step s reads the s-th of
// `length` equal flat chunks, in the body parameter's shape: a leading-axis slice, or a
// segment of steps for checkpointing). The result packs the final carries and the
// stacked ys (ir/control.hpp). Its VJP is a reverse scan over the carries a forward scan
// saved, written with the builder, so grad of grad works. No op known by name; no xtensor.
#include <algorithm>
#include <cstring>

#include "minigrad/ir/control.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/rules.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::ir {

namespace {

using namespace rules;

struct Counts {
  std::int64_t carry, konst, xs;
};

Counts counts_of(const Attrs& attrs, std::size_t inputs) {
  const std::int64_t c = attrs.i64("num_carry"), k = attrs.i64("num_const");
  require(c >= 0 && k >= 0 && c + k <= static_cast<std::int64_t>(inputs),
          "num_carry and num_const must be >= 0 and count at most the " + std::to_string(inputs) + " inputs");
  return {c, k, static_cast<std::int64_t>(inputs) - c - k};
}

Type drop_leading(const Type& t) { return Type{t.dtype, Shape(t.shape.begin() + 1, t.shape.end())}; }

Type scan_infer(std::span<const Type> in, const Attrs& attrs) {
  const Counts n = counts_of(attrs, in.size());
  const std::int64_t T = attrs.i64("length");
  const DType dt = attrs.dtype("dtype");
  require(T >= 0, "length must be >= 0");
  require(attrs.i64("ys_numel") >= 0, "ys_numel must be >= 0");
  const std::int64_t every = attrs.i64("checkpoint_every");
  require(every >= 0 && (every == 0 || T % every == 0),
          "checkpoint_every (" + std::to_string(every) + ") must be 0 or divide the trip count " + std::to_string(T));
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n.carry; ++i) {
    require(in[i].dtype == dt, "carry " + std::to_string(i) + " is " + to_string(in[i]) +
                                   " but the loop's results are " + std::string(name_of(dt)));
    total += in[i].numel();
  }
  for (std::int64_t j = n.carry + n.konst; j < static_cast<std::int64_t>(in.size()); ++j)
    require(T > 0 ? in[j].numel() % T == 0 : in[j].rank() >= 1 && in[j].shape[0] == 0,
            "xs " + std::to_string(j - n.carry - n.konst) + " is " + to_string(in[j]) + ": a scanned input splits into " +
                std::to_string(T) + " equal steps (a leading axis of the trip count, or any shape of a multiple of " +
                "its elements)");
  total += T * attrs.i64("ys_numel");
  return Type{dt, {total}};
}

// The region's signature: (carries, consts, x_t) -> (carries', y_t), carries invariant.
void scan_check_regions(const Node& n, std::span<const Type> in) {
  require(n.regions.size() == 1, "a scan node owns exactly one region (its body)");
  const Graph& body = *n.regions[0];
  const Counts c = counts_of(n.attrs, in.size());
  require(body.inputs().size() == in.size(), "the body takes " + std::to_string(body.inputs().size()) +
                                                 " parameters but the node has " + std::to_string(in.size()) +
                                                 " inputs (carries, consts, xs)");
  const std::int64_t T = n.attrs.i64("length");
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool x = static_cast<std::int64_t>(i) >= c.carry + c.konst;
    const Type& got = body.node(body.inputs()[i]).type;
    if (x && T > 0) {  // one of T equal flat chunks, in the parameter's shape
      require(got.dtype == in[i].dtype && got.numel() * T == in[i].numel(),
              "body parameter " + std::to_string(i) + " is " + to_string(got) + " but one of the " + std::to_string(T) +
                  " steps of the scanned input " + to_string(in[i]) + " has " + std::to_string(in[i].numel() / T) +
                  " elements");
      continue;
    }
    const Type want = x ? drop_leading(in[i]) : in[i];
    require(got == want, "body parameter " + std::to_string(i) + " is " + to_string(got) + " but should be " +
                             to_string(want) + (x ? " (one step of the scanned input)" : ""));
  }
  require(static_cast<std::int64_t>(body.outputs.size()) >= c.carry,
          "the body returns " + std::to_string(body.outputs.size()) + " values, fewer than its " +
              std::to_string(c.carry) + " carries");
  std::int64_t ys = 0;
  const DType dt = n.attrs.dtype("dtype");
  for (std::size_t k = 0; k < body.outputs.size(); ++k) {
    const Type& t = body.node(body.outputs[k]).type;
    if (static_cast<std::int64_t>(k) < c.carry) {
      require(t == in[k], "the body returns carry " + std::to_string(k) + " as " + to_string(t) +
                              " but it enters as " + to_string(in[k]) + ": a carry keeps its type every step");
    } else {
      require(t.dtype == dt, "the body's result " + std::to_string(k) + " is " + to_string(t) +
                                 ": a loop's results share one dtype, " + std::string(name_of(dt)));
      ys += t.numel();
    }
  }
  require(ys == n.attrs.i64("ys_numel"), "ys_numel is " + std::to_string(n.attrs.i64("ys_numel")) +
                                             " but the body's ys have " + std::to_string(ys) + " elements");
}

void copy_elems(Array& dst, std::int64_t dst_off, const Array& src, std::int64_t src_off, std::int64_t n) {
  const std::size_t e = size_of(dst.dtype());
  if (n > 0)
    std::memcpy(static_cast<std::byte*>(dst.raw()) + dst_off * static_cast<std::int64_t>(e),
                static_cast<const std::byte*>(src.raw()) + src_off * static_cast<std::int64_t>(e),
                static_cast<std::size_t>(n) * e);
}

void scan_kernel(const KernelArgs& k) {
  const ScanLayout L = scan_layout(k.node);
  MG_ASSERT(k.run_region, "scan: the executor gave no region runner");
  const std::size_t C = static_cast<std::size_t>(L.num_carry), K = static_cast<std::size_t>(L.num_const);
  std::vector<Array> args(k.in.size());
  for (std::size_t i = 0; i < C + K; ++i) args[i] = *k.in[i];
  std::vector<Type> slice(k.in.size());
  const Graph& body = *k.node.regions[0];
  for (std::size_t i = C + K; i < k.in.size(); ++i) slice[i] = body.node(body.inputs()[i]).type;
  for (std::int64_t t = 0; t < L.length; ++t) {
    const std::int64_t s = L.reverse ? L.length - 1 - t : t;
    for (std::size_t i = C + K; i < k.in.size(); ++i) args[i] = k.in[i]->view(s * slice[i].numel(), slice[i]);
    std::vector<Array> res = (*k.run_region)(0, args);
    for (std::size_t i = 0; i < C; ++i) args[i] = std::move(res[i]);
    for (std::size_t p = C; p < L.parts.size(); ++p) {
      const std::int64_t m = L.step[p].numel();
      copy_elems(k.out, L.offset[p] + s * m, res[p], 0, m);
    }
  }
  for (std::size_t i = 0; i < C; ++i) copy_elems(k.out, L.offset[i], args[i], 0, L.parts[i].numel());
}

// C99: the carries in two scratch buffers each (current, next; swapped by pointer), the
// body written once inside a `for` over the steps; each step's ys stored in place.
std::int64_t carry_bytes(const ScanLayout& L) {
  std::int64_t b = 0;
  for (std::int64_t i = 0; i < L.num_carry; ++i) b += (L.parts[i].nbytes() + 63) / 64 * 64;
  return 2 * b;  // current and next
}

void scan_c(const CLoopArgs& a) {
  const ScanLayout L = scan_layout(a.node);
  MG_ASSERT(a.region, "scan: the emitter gave no region writer");
  const std::size_t C = static_cast<std::size_t>(L.num_carry), K = static_cast<std::size_t>(L.num_const);
  const std::string T = c_type(L.dtype);
  std::vector<std::string> cur(C), nxt(C);
  std::int64_t at = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < C; ++i) {
      std::string& p = pass == 0 ? cur[i] : nxt[i];
      p = a.w.fresh(pass == 0 ? "mg_carry" : "mg_next");
      a.w.line(T + "* " + p + " = (" + T + "*)(" + a.scratch + " + " + std::to_string(at) + ");");
      at += (L.parts[i].nbytes() + 63) / 64 * 64;
    }
  for (std::size_t i = 0; i < C; ++i) {
    const std::int64_t m = L.parts[i].numel();
    if (m == 0) continue;
    a.w.open("for (int64_t i = 0; i < " + c_int(m) + "; ++i)");
    a.w.line(cur[i] + "[i] = " + a.in[i] + "[i];");
    a.w.close();
  }
  const std::string t = a.w.fresh("mg_t"), s = a.w.fresh("mg_step");
  a.w.open("for (int64_t " + t + " = 0; " + t + " < " + c_int(L.length) + "; ++" + t + ")");
  a.w.line("const int64_t " + s + " = " + (L.reverse ? c_int(L.length - 1) + " - " + t : t) + ";");
  std::vector<std::string> args, results;
  for (std::size_t i = 0; i < C; ++i) args.push_back(cur[i]);
  for (std::size_t i = C; i < C + K; ++i) args.push_back(a.in[i]);
  for (std::size_t i = C + K; i < a.in.size(); ++i)
    args.push_back("(" + a.in[i] + " + " + s + " * " + c_int(a.in_types[i].numel() / std::max<std::int64_t>(L.length, 1)) + ")");
  for (std::size_t i = 0; i < C; ++i) results.push_back(nxt[i]);
  for (std::size_t p = C; p < L.parts.size(); ++p)
    results.push_back("(" + a.out + " + " + c_int(L.offset[p]) + " + " + s + " * " + c_int(L.step[p].numel()) + ")");
  (*a.region)(0, args, results);
  for (std::size_t i = 0; i < C; ++i) {
    a.w.open("");
    a.w.line(T + "* const mg_swap = " + cur[i] + "; " + cur[i] + " = " + nxt[i] + "; " + nxt[i] + " = mg_swap;");
    a.w.close();
  }
  a.w.close();
  for (std::size_t i = 0; i < C; ++i) {
    const std::int64_t m = L.parts[i].numel();
    if (m == 0) continue;
    a.w.open("for (int64_t i = 0; i < " + c_int(m) + "; ++i)");
    a.w.line(a.out + "[" + c_int(L.offset[i]) + " + i] = " + cur[i] + "[i];");
    a.w.close();
  }
}

// A copy of `body` returning its next carries, then (save) the carries it was given.
std::unique_ptr<Graph> carries_body(const Graph& body, std::size_t C, bool save) {
  auto b = clone_region(body);
  b->outputs.resize(C);
  if (save)
    for (std::size_t i = 0; i < C; ++i) b->outputs.push_back(b->inputs()[i]);
  return b;
}

Type with_leading(Type t, std::initializer_list<std::int64_t> dims) {
  t.shape.insert(t.shape.begin(), dims);
  return t;
}

// What the backward of one scan needs to know, and builds.
struct ScanGrad {
  const Graph& body;
  std::size_t C, K, X;
  std::vector<std::size_t> acc_of, dx_of;  // consts and xs that get a gradient
  std::vector<Type> carry, konst, xstep, ystep;

  // The reverse body: (dcarry..., dconst acc..., consts..., carry_t..., x_t..., dy_t...)
  // -> (dcarry_{t-1}..., acc + dconst_t..., dx_t...), the forward body's VJP by the grad
  // pass inside the region.
  // `residuals` (optional): instead of recomputing the forward body inside, the forward
  // values (of the loop's dtype) that the VJP reads become parameters appended after dy,
  // one stacked xs each; receives their body node ids (for the saving loop to return).
  std::unique_ptr<Graph> reverse_body(const RegionVjp& region_vjp, DType dtype = DType::f32,
                                      std::vector<NodeId>* residuals = nullptr) const {
    auto bb = std::make_unique<Graph>();
    std::vector<Value> dc, acc, k, s, x, dy;
    for (std::size_t i = 0; i < C; ++i) dc.push_back(bb->add_input("dcarry" + std::to_string(i), carry[i]));
    for (std::size_t j : acc_of) acc.push_back(bb->add_input("dconst" + std::to_string(j), konst[j]));
    for (std::size_t j = 0; j < K; ++j) k.push_back(bb->add_input("const" + std::to_string(j), konst[j]));
    for (std::size_t i = 0; i < C; ++i) s.push_back(bb->add_input("carry" + std::to_string(i), carry[i]));
    for (std::size_t j = 0; j < X; ++j) x.push_back(bb->add_input("x" + std::to_string(j), xstep[j]));
    for (std::size_t p = 0; p < ystep.size(); ++p) dy.push_back(bb->add_input("dy" + std::to_string(p), ystep[p]));
    std::vector<Value> args = s;
    args.insert(args.end(), k.begin(), k.end());
    args.insert(args.end(), x.begin(), x.end());
    std::vector<NodeId> copy_of;
    const NodeId fwd_begin = static_cast<NodeId>(bb->size());
    const std::vector<Value> outs = inline_region(body, *bb, args, &copy_of);
    const NodeId fwd_end = static_cast<NodeId>(bb->size());
    std::vector<Value> cots = dc;
    cots.insert(cots.end(), dy.begin(), dy.end());
    std::vector<Value> wrt = s;
    for (std::size_t j : acc_of) wrt.push_back(k[j]);
    for (std::size_t j : dx_of) wrt.push_back(x[j]);
    const std::vector<Value> d = region_vjp(outs, cots, wrt);
    for (std::size_t i = 0; i < C; ++i) bb->outputs.push_back(d[i].id);
    for (std::size_t q = 0; q < acc_of.size(); ++q) bb->outputs.push_back(add(acc[q], d[C + q]).id);
    for (std::size_t q = 0; q < dx_of.size(); ++q) bb->outputs.push_back(d[C + acc_of.size() + q].id);
    if (!residuals) return bb;
    // Forward ops (of the loop's dtype: they ride in its packed result) the adjoint reads.
    std::vector<bool> read(bb->size(), false);
    for (NodeId id = fwd_end; id < bb->size(); ++id)
      for (NodeId in : bb->node(id).inputs) read[in] = true;
    for (NodeId o : bb->outputs) read[o] = true;
    std::vector<NodeId> saved;
    residuals->clear();
    for (NodeId b = 0; b < body.size(); ++b) {
      const NodeId id = copy_of[b];
      if (id < fwd_begin || id >= fwd_end || !read[id]) continue;
      const Node& n = bb->node(id);
      if (n.kind != NodeKind::op || n.type.dtype != dtype) continue;
      saved.push_back(id);
      residuals->push_back(b);
    }
    return saved.empty() ? std::move(bb) : with_params(*bb, saved, "residual");
  }
};

// d/d(inputs) of a scan: a forward scan that also saves the carry entering each step, then
// a scan the other way whose body is the forward body's VJP (by the grad pass, inside the
// region): carries (d carry, d consts accumulated), xs (saved carries, xs, d ys), ys d xs.
// With checkpoint_every = k: the forward saves only each segment's first carry; the
// backward runs over segments, each recomputing its k carries (an inner forward scan)
// before its inner reverse scan, so about T/k + k carries are alive instead of T.
std::vector<Value> scan_vjp(const VjpArgs& a) {
  MG_ASSERT(a.region_vjp, "scan: the grad pass gave no region VJP");
  const Node& n = a.node;
  const ScanLayout L = scan_layout(n);
  Graph& g = *a.out.graph;
  const Graph& body = *n.regions[0];
  const std::size_t C = static_cast<std::size_t>(L.num_carry), K = static_cast<std::size_t>(L.num_const);
  const std::size_t N = a.in.size(), X = N - C - K;
  const std::int64_t T = L.length, every = n.attrs.i64("checkpoint_every");
  auto wanted = [&](std::size_t i) { return a.wants.empty() || a.wants[i]; };
  for (std::size_t i = 0; i < N; ++i)
    if (wanted(i) && a.in[i].dtype() != L.dtype && is_float(a.in[i].dtype()))
      throw GradError("scan: cannot differentiate with respect to input " + std::to_string(i) + " (" +
                          to_string(a.in[i].type()) + ") of a loop whose results are " + std::string(name_of(L.dtype)) +
                          "; cast it to " + std::string(name_of(L.dtype)) + " before the loop",
                      n.loc);
  ScanGrad sg{body, C, K, X, {}, {}, {}, {}, {}, {}};
  for (std::size_t j = 0; j < K; ++j)
    if (wanted(C + j) && a.in[C + j].dtype() == L.dtype) sg.acc_of.push_back(j);
  for (std::size_t j = 0; j < X; ++j)
    if (wanted(C + K + j) && a.in[C + K + j].dtype() == L.dtype) sg.dx_of.push_back(j);
  for (std::size_t i = 0; i < C; ++i) sg.carry.push_back(L.parts[i]);
  for (std::size_t j = 0; j < K; ++j) sg.konst.push_back(a.in[C + j].type());
  for (std::size_t j = 0; j < X; ++j) sg.xstep.push_back(body.node(body.inputs()[C + K + j]).type);
  for (std::size_t p = C; p < L.parts.size(); ++p) sg.ystep.push_back(L.step[p]);

  const std::vector<Value> init(a.in.begin(), a.in.begin() + static_cast<std::ptrdiff_t>(C));
  const std::vector<Value> consts(a.in.begin() + static_cast<std::ptrdiff_t>(C),
                                  a.in.begin() + static_cast<std::ptrdiff_t>(C + K));
  const std::vector<Value> xs(a.in.begin() + static_cast<std::ptrdiff_t>(C + K), a.in.end());
  const std::vector<Value> ct = scan_parts(a.cotangent, L);
  std::vector<Value> binit(ct.begin(), ct.begin() + static_cast<std::ptrdiff_t>(C));
  for (std::size_t j : sg.acc_of) binit.push_back(zeros_like(consts[j]));
  std::vector<Value> b;  // the backward loop's parts: d init, d consts, d xs

  if (every <= 0 || every >= T) {
    // The forward loop again, saving the carry each step is given and the body values the
    // VJP reads (residuals, so the reverse body need not recompute the forward); then the
    // reverse loop.
    // checkpoint_every = length asks for recomputation: carries only (mg::checkpoint).
    std::vector<NodeId> residuals;
    auto rbody = sg.reverse_body(*a.region_vjp, L.dtype, every > 0 ? nullptr : &residuals);
    std::vector<NodeId> copy_of;
    auto saving = clone_region(body, body.inputs(), &copy_of);
    saving->outputs.resize(C);
    for (std::size_t i = 0; i < C; ++i) saving->outputs.push_back(saving->inputs()[i]);
    for (NodeId r : residuals) saving->outputs.push_back(copy_of[r]);
    const std::vector<Value> fwd = scan(g, std::move(saving), init, consts, xs, T, L.reverse);
    std::vector<Value> bxs(fwd.begin() + static_cast<std::ptrdiff_t>(C), fwd.begin() + static_cast<std::ptrdiff_t>(2 * C));
    bxs.insert(bxs.end(), xs.begin(), xs.end());
    bxs.insert(bxs.end(), ct.begin() + static_cast<std::ptrdiff_t>(C), ct.end());
    bxs.insert(bxs.end(), fwd.begin() + static_cast<std::ptrdiff_t>(2 * C), fwd.end());
    b = scan(g, std::move(rbody), binit, consts, bxs, T, !L.reverse);
  } else {
    const std::int64_t S = T / every;  // the op's type rule checks that every divides T
    // A segment of k steps is one step of the outer loops: xs and dys split into S flat
    // chunks, read as [k, ...] (no copy).
    const std::vector<Value>& xseg = xs;
    // Forward over segments, saving each segment's first carry: (c, consts, xseg) ->
    // (inner scan's final c, c).
    auto fbody = std::make_unique<Graph>();
    {
      std::vector<Value> c, k, x;
      for (std::size_t i = 0; i < C; ++i) c.push_back(fbody->add_input("carry" + std::to_string(i), sg.carry[i]));
      for (std::size_t j = 0; j < K; ++j) k.push_back(fbody->add_input("const" + std::to_string(j), sg.konst[j]));
      for (std::size_t j = 0; j < X; ++j)
        x.push_back(fbody->add_input("x" + std::to_string(j), with_leading(sg.xstep[j], {every})));
      const std::vector<Value> r = scan(*fbody, carries_body(body, C, false), c, k, x, every, L.reverse);
      for (std::size_t i = 0; i < C; ++i) fbody->outputs.push_back(r[i].id);
      for (std::size_t i = 0; i < C; ++i) fbody->outputs.push_back(c[i].id);
    }
    const std::vector<Value> fwd = scan(g, std::move(fbody), init, consts, xseg, S, L.reverse);
    // Backward over segments: (dc, acc, consts, c_seg, xseg, dyseg) -> recompute the
    // segment's carries, then its reverse scan -> (dc, acc, dxseg).
    auto bbody = std::make_unique<Graph>();
    {
      std::vector<Value> dc, acc, k, c, x, dy;
      for (std::size_t i = 0; i < C; ++i) dc.push_back(bbody->add_input("dcarry" + std::to_string(i), sg.carry[i]));
      for (std::size_t j : sg.acc_of) acc.push_back(bbody->add_input("dconst" + std::to_string(j), sg.konst[j]));
      for (std::size_t j = 0; j < K; ++j) k.push_back(bbody->add_input("const" + std::to_string(j), sg.konst[j]));
      for (std::size_t i = 0; i < C; ++i) c.push_back(bbody->add_input("carry" + std::to_string(i), sg.carry[i]));
      for (std::size_t j = 0; j < X; ++j)
        x.push_back(bbody->add_input("x" + std::to_string(j), with_leading(sg.xstep[j], {every})));
      for (std::size_t p = 0; p < sg.ystep.size(); ++p)
        dy.push_back(bbody->add_input("dy" + std::to_string(p), with_leading(sg.ystep[p], {every})));
      const std::vector<Value> re = scan(*bbody, carries_body(body, C, true), c, k, x, every, L.reverse);
      std::vector<Value> iinit = dc;
      iinit.insert(iinit.end(), acc.begin(), acc.end());
      std::vector<Value> ixs(re.begin() + static_cast<std::ptrdiff_t>(C), re.end());
      ixs.insert(ixs.end(), x.begin(), x.end());
      ixs.insert(ixs.end(), dy.begin(), dy.end());
      const std::vector<Value> r = scan(*bbody, sg.reverse_body(*a.region_vjp), iinit, k, ixs, every, !L.reverse);
      for (const Value& v : r) bbody->outputs.push_back(v.id);
    }
    std::vector<Value> bxs(fwd.begin() + static_cast<std::ptrdiff_t>(C), fwd.end());
    bxs.insert(bxs.end(), xseg.begin(), xseg.end());
    bxs.insert(bxs.end(), ct.begin() + static_cast<std::ptrdiff_t>(C), ct.end());
    b = scan(g, std::move(bbody), binit, consts, bxs, S, !L.reverse);
  }
  for (std::size_t q = 0; q < sg.dx_of.size(); ++q) {  // stacked steps -> the xs' shape
    Value& v = b[C + sg.acc_of.size() + q];
    v = reshape(v, xs[sg.dx_of[q]].shape());
  }

  std::vector<Value> grads(N);
  for (std::size_t i = 0; i < C; ++i) grads[i] = b[i];
  for (std::size_t q = 0; q < sg.acc_of.size(); ++q) grads[C + sg.acc_of[q]] = b[C + q];
  for (std::size_t q = 0; q < sg.dx_of.size(); ++q) grads[C + K + sg.dx_of[q]] = b[C + sg.acc_of.size() + q];
  return grads;
}

// The registry test's body: h' = tanh(h * w + x), y = h' * h, over 4 steps.
void attach_test_region(Graph& g, NodeId id) {
  auto body = std::make_unique<Graph>();
  const Node& n = g.node(id);
  Value h = body->add_input("h", g.node(n.inputs[0]).type);
  Value w = body->add_input("w", g.node(n.inputs[1]).type);
  Value x = body->add_input("x", drop_leading(g.node(n.inputs[2]).type));
  Value h2 = tanh(add(mul(h, w), x));
  body->outputs = {h2.id, mul(h2, h).id};
  g.mutable_node(id).regions.push_back(std::move(body));
}

}  // namespace

ScanLayout scan_layout(const Node& n) {
  ScanLayout L;
  L.num_carry = n.attrs.i64("num_carry");
  L.num_const = n.attrs.i64("num_const");
  L.num_xs = static_cast<std::int64_t>(n.inputs.size()) - L.num_carry - L.num_const;
  L.length = n.attrs.i64("length");
  L.reverse = n.attrs.boolean("reverse");
  L.dtype = n.attrs.dtype("dtype");
  MG_ASSERT(n.regions.size() == 1, "scan_layout: a scan node owns its body");
  const Graph& body = *n.regions[0];
  std::int64_t off = 0;
  for (std::size_t k = 0; k < body.outputs.size(); ++k) {
    const Type& t = body.node(body.outputs[k]).type;
    Type part = t;
    if (static_cast<std::int64_t>(k) >= L.num_carry) part.shape.insert(part.shape.begin(), L.length);
    L.parts.push_back(part);
    L.step.push_back(t);
    L.offset.push_back(off);
    off += part.numel();
  }
  return L;
}

Value scan_node(Graph& g, std::unique_ptr<Graph> body, std::span<const Value> init, std::span<const Value> consts,
                std::span<const Value> xs, std::int64_t length, bool reverse, std::int64_t checkpoint_every) {
  std::vector<Value> in(init.begin(), init.end());
  in.insert(in.end(), consts.begin(), consts.end());
  in.insert(in.end(), xs.begin(), xs.end());
  DType dt = init.empty() ? DType::f32 : init[0].dtype();
  std::int64_t ys = 0;
  for (std::size_t k = 0; k < body->outputs.size(); ++k) {
    const Type& t = body->node(body->outputs[k]).type;
    if (k < init.size()) continue;
    if (init.empty() && k == 0) dt = t.dtype;
    ys += t.numel();
  }
  const OpDef& def = op("scan");
  Value v = make_op(g, def,  in,
                    {{"num_carry", static_cast<std::int64_t>(init.size())},
                     {"num_const", static_cast<std::int64_t>(consts.size())},
                     {"length", length},
                     {"reverse", reverse},
                     {"dtype", dt},
                     {"ys_numel", ys},
                     {"checkpoint_every", checkpoint_every}});
  g.mutable_node(v.id).regions.push_back(std::move(body));
  std::vector<Type> types;
  for (const Value& x : in) types.push_back(x.type());
  try {
    def.check_regions(g.node(v.id), types);
  } catch (const TypeRuleError& e) {
    throw ShapeError("op 'scan': " + e.message, ambient_loc());
  }
  return v;
}

std::vector<Value> scan_parts(Value packed, const ScanLayout& L) {
  std::vector<Value> out;
  for (std::size_t p = 0; p < L.parts.size(); ++p) {
    const std::int64_t m = L.parts[p].numel();
    out.push_back(reshape(slice(packed, {L.offset[p]}, {L.offset[p] + m}, {1}), L.parts[p].shape));
  }
  return out;
}

std::vector<Value> scan(Graph& g, std::unique_ptr<Graph> body, std::span<const Value> init,
                        std::span<const Value> consts, std::span<const Value> xs, std::int64_t length, bool reverse,
                        std::int64_t checkpoint_every) {
  const Value v = scan_node(g, std::move(body), init, consts, xs, length, reverse, checkpoint_every);
  return scan_parts(v, scan_layout(v.node()));
}

void register_control_ops() {
  OpDef& d = define_op("scan");
  d.doc =
      "a loop: its region (carries, consts, step s of each xs: its s-th of `length` equal flat chunks, in the "
      "parameter's shape, e.g. x[s]) -> (next carries, one step of each "
      "y) runs `length` times (backwards when `reverse`); the result packs the final carries, then the stacked ys, "
      "flat, in one dtype (ir/control.hpp); carries keep their type; gradient: a reverse scan over saved carries (checkpoint_every = k > 0, dividing "
      "length: only every k-th carry saved, the others recomputed)";
  d.arity = -1;
  d.attrs = {{"num_carry", AttrKind::i64, std::nullopt},
             {"num_const", AttrKind::i64, AttrValue{std::int64_t{0}}},
             {"length", AttrKind::i64, std::nullopt},
             {"reverse", AttrKind::boolean, AttrValue{false}},
             {"dtype", AttrKind::dtype, std::nullopt},
             {"ys_numel", AttrKind::i64, std::nullopt},
             {"checkpoint_every", AttrKind::i64, AttrValue{std::int64_t{0}}}};
  d.infer = scan_infer;
  d.check_regions = scan_check_regions;
  d.kernel = scan_kernel;
  d.runs_regions = true;
  d.vjp = scan_vjp;
  d.invariant_operands = [](const Node& n) {
    std::vector<bool> inv(n.inputs.size(), false);
    const std::int64_t c = n.attrs.i64("num_carry"), k = n.attrs.i64("num_const");
    for (std::int64_t j = c; j < c + k; ++j) inv[static_cast<std::size_t>(j)] = true;
    return inv;
  };
  d.add_invariants = [](const Node& n, std::size_t count) {
    const std::int64_t at = n.attrs.i64("num_carry") + n.attrs.i64("num_const");
    Attrs a = n.attrs;
    a.set("num_const", n.attrs.i64("num_const") + static_cast<std::int64_t>(count));
    return std::pair{static_cast<std::size_t>(at), a};
  };
  d.emit_c = c_loops(scan_c);
  d.emit_c.scratch = [](const Node& n, std::span<const Type>) { return carry_bytes(scan_layout(n)); };
  const Attrs base{{"num_carry", std::int64_t{1}}, {"num_const", std::int64_t{1}}, {"length", std::int64_t{4}},
                   {"dtype", f64},                 {"ys_numel", std::int64_t{3}}};
  Attrs rev = base;
  rev.set("reverse", true);
  Attrs remat = rev;
  remat.set("checkpoint_every", std::int64_t{2});
  d.test.cases = {{{Type{f64, {3}}, Type{f64, {3}}, Type{f64, {4, 3}}}, base},
                  {{Type{f64, {3}}, Type{f64, {3}}, Type{f64, {4, 3}}}, rev},
                  {{Type{f64, {3}}, Type{f64, {3}}, Type{f64, {4, 3}}}, remat}};
  d.test.attach_regions = attach_test_region;
}

}  // namespace mg::ir
