// The `fused` op: one node owning a region (a chain of elementwise ops, optionally after a
// matmul) that the kernel runs as ONE loop over tiles of a few thousand elements, calling
// the body ops' own registry kernels on tile-sized windows, so no value inside the region
// ever gets a full-size buffer. ir/README.md ("Fused nodes") is the contract for every
// executor; analyze() enforces it. Knows no op by name except the two structural body
// ops the contract names (broadcast_to, matmul); a final reduction (kind "reduce") is
// recognised by its registry `fold` column and run by fused_reduce.cpp. No xtensor here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/fused_body.hpp"
#include "minigrad/ir/ops/strided.hpp"
#include "minigrad/ir/ops/fused_tasks.hpp"

namespace mg::ir {

namespace fused {

namespace {

using namespace rules;

constexpr std::int64_t kParallelTiles = 1 << 16;  // parallel over tiles from this many elements

bool is_op(const Node& n, std::string_view name) { return n.kind == NodeKind::op && n.op->name == name; }

// require() with the message built only on failure (the kernel analyses every call).
template <class Msg>
void check(bool ok, Msg&& msg) {
  if (!ok) throw TypeRuleError{msg()};
}

}  // namespace

BodyPlan analyze(const Node& n, std::span<const Type> in) {
  check(n.regions.size() == 1, [] { return std::string("a fused node owns exactly one region"); });
  const Graph& body = *n.regions[0];
  check(body.inputs().size() == in.size(), [&] {
    return "the region takes " + std::to_string(body.inputs().size()) + " parameters but the node has " +
           std::to_string(in.size()) + " inputs";
  });
  for (std::size_t i = 0; i < in.size(); ++i)
    check(body.node(body.inputs()[i]).type == in[i], [&] {
      return "region parameter " + std::to_string(i) + " is " + to_string(body.node(body.inputs()[i]).type) +
             " but the node's input is " + to_string(in[i]);
    });
  return analyze_body(n);
}

BodyPlan analyze_body(const Node& n) {
  check(n.regions.size() == 1, [] { return std::string("a fused node owns exactly one region"); });
  const Graph& body = *n.regions[0];
  const std::string& kind = n.attrs.str("kind");
  const bool mm_kind = kind == "matmul", red_kind = kind == "reduce";
  check(kind == "elementwise" || mm_kind || red_kind,
        [&] { return "kind must be \"elementwise\", \"matmul\" or \"reduce\", got \"" + kind + "\""; });
  check(body.outputs.size() == 1, [] { return std::string("the region returns exactly one value"); });
  check(body.size() > 0 && body.outputs[0] == body.size() - 1, [] { return std::string("the region's result is its last node"); });
  BodyPlan p;
  p.loop = n.type;
  p.result = body.outputs[0];
  check(body.node(p.result).type == n.type, [&] {
    return "the region returns " + to_string(body.node(p.result).type) + " but the node is " + to_string(n.type);
  });
  if (red_kind) {  // the loop runs over the reduction's operand
    const Node& r = body.node(p.result);
    check(r.kind == NodeKind::op && r.op->fold != Fold::none && r.inputs.size() == 1, [&] {
      return "a kind \"reduce\" body ends with a plain-fold reduction (reduce_sum, reduce_mean, ...), not " +
             r.op_name();
    });
    p.reduce = p.result;
    p.result = r.inputs[0];
    p.loop = body.node(p.result).type;
  }
  const std::int64_t count = p.loop.numel();
  p.role.resize(body.size());
  bool seen_op = false;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    // `what` by value and generic: a literal stays a pointer, so passing checks allocate
    // nothing (the kernel analyses every call; tiny fused nodes felt each std::string).
    auto where = [&](auto what) {
      return [&b, id, what] { return "region value %" + std::to_string(id) + " (" + b.op_name() + "): " + what; };
    };
    if (b.kind != NodeKind::op) {
      p.role[id] = b.type.numel() == count ? BodyRole::tiled : BodyRole::whole;
      continue;
    }
    const bool first_op = !seen_op;
    seen_op = true;
    for (NodeId x : b.inputs) check(x < id, where("operand defined after use"));
    if (id == p.reduce) {
      p.role[id] = BodyRole::reduce;
    } else if (is_op(b, "broadcast_to")) {
      check(body.node(b.inputs[0]).kind != NodeKind::op, where("broadcasts a computed value (only parameters and constants)"));
      check(b.type.shape == p.loop.shape, [&] { return where("broadcasts to " + to_string(b.type.shape) + ", not the loop shape " + to_string(p.loop.shape))(); });
      p.role[id] = BodyRole::broadcast;
    } else if (is_op(b, "matmul")) {
      check(mm_kind && first_op, where("a matmul must be the first op of a kind \"matmul\" body"));
      for (NodeId x : b.inputs) check(body.node(x).kind == NodeKind::input, where("matmul operands are parameters"));
      check(b.type == n.type, [&] { return where("the matmul must have the node's type " + to_string(n.type))(); });
      p.role[id] = BodyRole::matmul;
      p.matmul = id;
    } else if (b.op->traits.elementwise) {
      check(b.type.shape == p.loop.shape, [&] {
        return where("shape " + to_string(b.type.shape) + " is not the loop shape " + to_string(p.loop.shape))();
      });
      for (NodeId x : b.inputs) check(p.role[x] != BodyRole::whole, where("reads a whole value elementwise"));
      p.role[id] = BodyRole::compute;
    } else {
      check(false, where("op not allowed in a fused body (elementwise ops, broadcast_to, a leading matmul, a final "
                         "reduction in kind \"reduce\")"));
    }
  }
  check(!mm_kind || p.matmul != kNoNode, [] { return std::string("a kind \"matmul\" body starts with a matmul"); });
  check(p.role[p.result] == BodyRole::compute || (!mm_kind && p.role[p.result] == BodyRole::broadcast),
        [] { return std::string("the result must be computed by an elementwise op"); });
  return p;
}

namespace {

// n elements of E bytes from src with element stride sstride (0: a splat) to dst.
template <class U>
void copy_elems(std::byte* dst, const std::byte* src, std::int64_t n, std::int64_t sstride) {
  U* d = reinterpret_cast<U*>(dst);
  if (sstride == 0) {
    U v;
    std::memcpy(&v, src, sizeof(U));
    std::fill_n(d, n, v);
  } else if (sstride == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(U));
  } else {
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(d + i, src + i * sstride * static_cast<std::int64_t>(sizeof(U)), sizeof(U));
  }
}

void copy_run(std::size_t elem, std::byte* dst, const std::byte* src, std::int64_t n, std::int64_t sstride) {
  switch (elem) {
    case 1: copy_elems<std::uint8_t>(dst, src, n, sstride); break;
    case 4: copy_elems<std::uint32_t>(dst, src, n, sstride); break;
    default: copy_elems<std::uint64_t>(dst, src, n, sstride); break;
  }
}

// The same index map over fewer, longer axes: size-1 axes dropped and neighbours merged
// where the outer stride is the inner one times the inner size (both 0: a broadcast
// run). A bias [1,C,1,1] over [N,C,H,W] becomes [N,C,H*W] with strides (0,1,0), so each
// run fills H*W elements instead of W: per-run overhead dominated fused bias adds.
void collapse_axes(Shape& shape, std::vector<std::int64_t>& sstride) {
  merge_runs(shape, sstride);
  if (shape.empty()) {  // one element: one run of one
    shape.push_back(1);
    sstride.push_back(0);
  }
}

// dst[j] = src[sum_k idx_k(j) * sstride_k] for j in [off, off + len) of the loop shape.
void run_broadcast(const Shape& shape, const std::vector<std::int64_t>& sstride, std::size_t elem,
                   const std::byte* src, std::byte* dst, std::int64_t off, std::int64_t len) {
  const int rank = static_cast<int>(shape.size());
  if (std::all_of(sstride.begin(), sstride.end(), [](std::int64_t s) { return s == 0; })) {
    copy_run(elem, dst, src, len, 0);  // a splat (a scalar, or all size-1 axes)
    return;
  }
  // Multi-index of `off`, then whole runs along the innermost axis. On the stack for the
  // usual ranks: this runs per window.
  std::int64_t small[8];
  std::vector<std::int64_t> large;
  if (rank > 8) large.resize(static_cast<std::size_t>(rank));
  std::int64_t* const idx = rank > 8 ? large.data() : small;
  std::int64_t rem = off;
  for (int k = rank - 1; k >= 0; --k) {
    const std::int64_t d = std::max<std::int64_t>(shape[static_cast<std::size_t>(k)], 1);
    idx[static_cast<std::size_t>(k)] = rem % d;
    rem /= d;
  }
  const std::int64_t inner = shape.back();
  std::int64_t done = 0;
  while (done < len) {
    std::int64_t s = 0;
    for (int k = 0; k < rank; ++k) s += idx[static_cast<std::size_t>(k)] * sstride[static_cast<std::size_t>(k)];
    const std::int64_t n = std::min(inner - idx[rank - 1], len - done);
    copy_run(elem, dst + done * static_cast<std::int64_t>(elem), src + s * static_cast<std::int64_t>(elem), n,
             sstride.back());
    done += n;
    idx[rank - 1] += n;
    for (int k = rank - 1; k > 0 && idx[static_cast<std::size_t>(k)] >= shape[static_cast<std::size_t>(k)]; --k) {
      idx[static_cast<std::size_t>(k)] = 0;
      ++idx[static_cast<std::size_t>(k - 1)];
    }
  }
}

}  // namespace

BodyEval::BodyEval(const Node& n, const BodyPlan& p, std::span<const Array* const> in, const Array* out)
    : body_(*n.regions[0]), p_(p), out_(out), whole_(body_.size(), nullptr), bmap_(body_.size()) {
  // Whole values (parameters by position, constants by literal) and broadcast maps.
  for (std::size_t i = 0; i < body_.inputs().size(); ++i) whole_[body_.inputs()[i]] = in[i];
  for (NodeId id = 0; id < body_.size(); ++id) {
    const Node& b = body_.node(id);
    if (b.kind == NodeKind::constant) whole_[id] = b.literal.get();
    if (p_.role[id] == BodyRole::broadcast) {
      const Type& src = body_.node(b.inputs[0]).type;
      Bcast m{p_.loop.shape, broadcast_strides(src.shape, p_.loop.shape), size_of(src.dtype)};
      collapse_axes(m.shape, m.sstride);
      m.splat = std::all_of(m.sstride.begin(), m.sstride.end(), [](std::int64_t st) { return st == 0; });
      bmap_[id] = std::move(m);
    }
  }
}

BodyEval::Scratch::Scratch(const BodyEval& e) : slot(e.body_.size()), tile(e.body_.size()) {
  thread_local std::deque<Array> pool;  // a deque: growing it keeps the earlier arrays in place
  std::size_t used = 0;
  for (NodeId id = 0; id < e.body_.size(); ++id)
    if (e.p_.role[id] == BodyRole::compute || e.p_.role[id] == BodyRole::broadcast) {
      if (used == pool.size()) pool.emplace_back(Type{DType::f64, {kTile}});  // the widest dtype
      slot[id].buf = &pool[used++];
    }
}

Array& BodyEval::typed(Scratch& s, NodeId x, std::int64_t len) const {
  Scratch::Slot& sl = s.slot[x];
  if (sl.len != len) {
    s.tile[x] = *sl.buf;
    s.tile[x].retype(Type{body_.node(x).type.dtype, {len}});
    sl.len = len;
  }
  return s.tile[x];
}

const Array& BodyEval::window(Scratch& s, NodeId x, std::int64_t off, std::int64_t len) const {
  switch (p_.role[x]) {
    case BodyRole::tiled: return s.tile[x] = whole_[x]->view(off, Type{body_.node(x).type.dtype, {len}});
    case BodyRole::matmul: return s.tile[x] = out_->view(off, Type{body_.node(x).type.dtype, {len}});
    case BodyRole::compute:
    case BodyRole::broadcast: return typed(s, x, len);
    default: return s.tile[x];
  }
}

// Per window, each value costs one registry kernel call: keep the rest of the per-window
// work allocation-free (window buffers are retyped only when the window length changes,
// the result is written straight into `dst`), or it rivals the arithmetic. Ops with a span
// kernel (OpDef::span_kernel) take raw pointers: no Array view per operand and window.
const void* BodyEval::run(Scratch& s, std::int64_t off, std::int64_t len, Array* dst) const {
  for (NodeId id = 0; id < body_.size(); ++id) {
    const Node& b = body_.node(id);
    Scratch::Slot& sl = s.slot[id];
    switch (p_.role[id]) {
      case BodyRole::whole:
      case BodyRole::reduce: break;
      case BodyRole::tiled:
        sl.ptr = static_cast<const std::byte*>(whole_[id]->raw()) + off * static_cast<std::int64_t>(size_of(b.type.dtype));
        break;
      case BodyRole::matmul:
        sl.ptr = static_cast<const std::byte*>(out_->raw()) + off * static_cast<std::int64_t>(size_of(b.type.dtype));
        break;
      case BodyRole::broadcast:
      case BodyRole::compute: {
        const bool to_dst = id == p_.result && dst;
        void* const t = to_dst ? static_cast<std::byte*>(dst->raw()) + off * static_cast<std::int64_t>(size_of(b.type.dtype))
                               : sl.buf->raw();
        sl.ptr = t;
        if (p_.role[id] == BodyRole::broadcast) {
          const Bcast& m = bmap_[id];
          if (m.splat && !to_dst) {  // the same window at every offset: filled once
            if (sl.splat_filled >= len) break;
            sl.splat_filled = len;
          }
          run_broadcast(m.shape, m.sstride, m.elem, static_cast<const std::byte*>(whole_[b.inputs[0]]->raw()),
                        static_cast<std::byte*>(t), off, len);
        } else {
          if (b.op->span_kernel) {
            s.args.clear();
            for (NodeId x : b.inputs) s.args.push_back(s.slot[x].ptr);
            if (b.op->span_kernel(SpanArgs{b.type.dtype, body_.node(b.inputs[0]).type.dtype, t, s.args, len})) break;
          }
          s.ins.clear();
          for (NodeId x : b.inputs) s.ins.push_back(&window(s, x, off, len));
          if (to_dst) {
            Array w = dst->view(off, Type{b.type.dtype, {len}});
            b.op->kernel(KernelArgs{s.ins, b, w, nullptr});
          } else {
            b.op->kernel(KernelArgs{s.ins, b, typed(s, id, len), nullptr});
          }
        }
        break;
      }
    }
  }
  return s.slot[p_.result].ptr;
}

}  // namespace fused

void fused_reduce_kernel(const KernelArgs& k, const fused::BodyPlan& p);  // fused_reduce.cpp
void fused_reduce_c(const CLoopArgs& a, const fused::BodyPlan& p);      // fused_reduce.cpp

namespace {

using namespace rules;
using fused::BodyEval;
using fused::BodyPlan;
using fused::BodyRole;
using fused::kTile;

BodyPlan checked_plan(const KernelArgs& k) {
  try {  // not against k.in's types: a view's buffer has another shape
    return fused::analyze_body(k.node);
  } catch (const TypeRuleError& e) {
    MG_ASSERT(false, "fused node does not verify: " + e.message);
  }
  return {};
}

// Which operand of the fused node body input `id` is (npos: not a body input).
std::size_t operand_of(const Graph& body, NodeId id) {
  const auto& ins = body.inputs();
  const auto it = std::find(ins.begin(), ins.end(), id);
  return it == ins.end() ? std::string::npos : static_cast<std::size_t>(it - ins.begin());
}

void fused_kernel(const KernelArgs& k) {
  const Node& n = k.node;
  const BodyPlan p = checked_plan(k);
  if (p.reduce != kNoNode) return fused_reduce_kernel(k, p);
  const Graph& body = *n.regions[0];
  const std::int64_t total = p.loop.numel();
  const BodyEval eval(n, p, k.in, &k.out);

  if (p.matmul != kNoNode) {  // the GEMM prologue, whole, into the result buffer
    const Node& mm = body.node(p.matmul);
    const std::size_t at[2] = {operand_of(body, mm.inputs[0]), operand_of(body, mm.inputs[1])};  // parameters
    const Array* ops[2] = {k.in[at[0]], k.in[at[1]]};
    CView views[2];  // the prologue alone reads a view operand (fused_reads_view)
    if (!k.in_views.empty()) views[0] = k.in_views[at[0]], views[1] = k.in_views[at[1]];
    mm.op->kernel(KernelArgs{ops, mm, k.out, nullptr, k.in_views.empty() ? std::span<const CView>{} : views});
  }
  if (total == 0) return;

  const std::int64_t ntiles = (total + kTile - 1) / kTile;
  auto tile = [&](BodyEval::Scratch& scratch, std::int64_t t) {
    const std::int64_t off = t * kTile, len = std::min(kTile, total - off);
    eval.run(scratch, off, len, &k.out);
  };
  fused::for_tasks(eval, ntiles, total >= fused::kParallelTiles, tile);
}

// The registry test's body for a case: tanh(a0 * broadcast(a1)) + a0, for kind "matmul":
// relu(matmul(a0, a1) + broadcast(a2)), for kind "reduce": reduce_sum over axis 0 of the
// elementwise body.
void attach_test_region(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  auto body = std::make_unique<Graph>();
  std::vector<Value> a;
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    a.push_back(body->add_input(std::string(1, 'a').append(std::to_string(i)), g.node(n.inputs[i]).type));
  Value r;
  const std::string& kind = n.attrs.str("kind");
  if (kind == "matmul") {
    Value mm = matmul(a[0], a[1]);  // the prologue must be the body's first op
    r = unary("relu", add(mm, broadcast_to(a[2], n.type.shape)));
  } else {
    const Shape& loop = g.node(n.inputs[0]).type.shape;
    r = add(tanh(mul(a[0], broadcast_to(a[1], loop))), a[0]);
    if (kind == "reduce") r = reduce_sum(r, {0}, false);
  }
  body->outputs = {r.id};
  g.mutable_node(id).regions.push_back(std::move(body));
}

// The matmul prologue's node, or null.
const Node* prologue_matmul(const Node& n) {
  if (n.attrs.str("kind") != "matmul" || n.regions.empty()) return nullptr;
  const Graph& body = *n.regions[0];
  for (NodeId id = 0; id < body.size(); ++id)
    if (body.node(id).kind == NodeKind::op) return body.node(id).op == &defined_op("matmul") ? &body.node(id) : nullptr;
  return nullptr;
}

// An operand may be a strided view when only the matmul prologue reads it (the GEMM takes
// any strides; the epilogue loop reads element i of plain buffers).
bool fused_reads_view_at(const Node& n, std::size_t operand) {
  const Node* mm = prologue_matmul(n);
  if (!mm) return false;
  const Graph& body = *n.regions[0];
  const NodeId in = body.inputs().at(operand);
  if (mm->inputs[0] != in && mm->inputs[1] != in) return false;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    if (&b != mm && std::find(b.inputs.begin(), b.inputs.end(), in) != b.inputs.end()) return false;
  }
  return true;
}

// The interpreter: a view the matmul prologue alone reads, and the GEMM takes in place.
bool fused_reads_view(const Node& n, std::size_t operand, const CView& v, std::span<const Type> in) {
  if (!fused_reads_view_at(n, operand)) return false;
  const Node& mm = *prologue_matmul(n);
  const Graph& body = *n.regions[0];
  const NodeId param = body.inputs().at(operand);
  const std::vector<Type> mm_in{body.node(mm.inputs[0]).type, body.node(mm.inputs[1]).type};
  const std::size_t which = mm.inputs[0] == param ? 0 : 1;
  return mm.inputs[0] != mm.inputs[1] && mm.op->kernel_reads_view(mm, which, v, mm_in) && in[operand] == mm_in[which];
}

// The matmul prologue's GEMM scratch (packed panels), planned in the arena per step.
std::int64_t fused_scratch(const Node& n, std::span<const Type>) {
  const Node* mm = prologue_matmul(n);
  if (!mm) return 0;
  const Graph& body = *n.regions[0];
  const std::vector<Type> types{body.node(mm->inputs[0]).type, body.node(mm->inputs[1]).type};
  return defined_op("matmul").emit_c.scratch(*mm, types);
}

// The elements of a row: the product of the most trailing loop axes along which every
// broadcast operand is read without a division (contiguous, or invariant). A bias over
// [B, T, C] rows by C; one over [N, C, H, W] by H*W (per element it divided by 196 and
// took % 16: a third of example 05's conv epilogue); a [C, H, W] block under a vmap batch
// by C*H*W.
std::int64_t fused_row(const Graph& body, const BodyPlan& p) {
  const Shape& shape = p.loop.shape;
  std::int64_t row = shape.empty() ? 0 : shape.back();
  for (std::size_t t = 2; t <= shape.size(); ++t) {
    const std::size_t k = shape.size() - t;
    bool plain = true;
    for (NodeId id = 0; id < body.size() && plain; ++id) {
      if (p.role[id] != BodyRole::broadcast) continue;
      const std::vector<std::int64_t> st = fused::broadcast_strides(body.node(body.node(id).inputs[0]).type.shape, shape);
      plain = c_offset("ii", Shape(shape.begin() + k, shape.end()), {st.begin() + k, st.end()}).find_first_of("/%") ==
              std::string::npos;
    }
    if (!plain) break;
    row *= shape[k];
  }
  return row;
}

// Rows when a broadcast's flat index divides (a bias over [B, T, C]: `i % C` is a gather):
// fused_c then loops over rows (fused_row), which is not a flat loop (EmitC::flat).
bool loops_by_rows(const Graph& body, const BodyPlan& p, const fused::CBody& c, std::int64_t count) {
  const std::int64_t row = fused_row(body, p);
  if (row < 16 || count <= row) return false;
  for (NodeId id = 0; id < body.size(); ++id)
    if (p.role[id] == BodyRole::broadcast && c.value[id].find_first_of("/%") != std::string::npos) return true;
  return false;
}

// Whether fused_c writes one flat loop: kind "elementwise" (a matmul prologue or a
// reduction is not) whose broadcasts index without division.
bool fused_flat(const Node& n) {
  if (n.attrs.str("kind") != "elementwise") return false;
  const Graph& body = *n.regions[0];
  std::vector<Type> in;
  for (NodeId param : body.inputs()) in.push_back(body.node(param).type);
  const BodyPlan p = fused::analyze(n, in);
  if (p.reduce != kNoNode || p.matmul != kNoNode) return false;
  std::vector<std::string> name(body.size());
  for (std::size_t k = 0; k < body.inputs().size(); ++k) name[body.inputs()[k]] = "in" + std::to_string(k);
  return !loops_by_rows(body, p, fused::c_body(body, p, name, "i"), n.type.numel());
}

// C99: the matmul prologue (the matmul op's own emission, into the result buffer), then
// ONE loop over the loop shape computing the body's elementwise chain into temporaries
// with each op's registry expression; broadcasts read their source through an index map.
void fused_c(const CLoopArgs& a) {
  const BodyPlan p = fused::analyze(a.node, a.in_types);
  if (p.reduce != kNoNode) return fused_reduce_c(a, p);
  const Graph& body = *a.node.regions[0];
  const std::int64_t count = a.node.type.numel();
  std::vector<std::string> name = fused::c_names(body, a);
  if (p.matmul != kNoNode) {
    const Node& mm = body.node(p.matmul);
    const std::vector<std::string> in{name[mm.inputs[0]], name[mm.inputs[1]]};
    const std::vector<Type> types{body.node(mm.inputs[0]).type, body.node(mm.inputs[1]).type};
    std::vector<CView> views(2);  // the GEMM reads transposed operands in place
    for (std::size_t k = 0; k < 2; ++k)
      if (std::size_t op = operand_of(body, mm.inputs[k]); op < a.in_views.size()) views[k] = a.in_views[op];
    a.w.open("");
    defined_op("matmul").emit_c.loops(
        CLoopArgs{mm, in, types, a.out, a.w, a.host_kernels, a.fail, a.support, views, a.scratch});
    a.w.close();
    name[p.matmul] = a.out;  // the epilogue reads the GEMM result in place
  }
  if (count == 0) return;
  fused::CBody c = fused::c_body(body, p, name, "i");
  const std::int64_t row = fused_row(body, p);
  const bool rows = loops_by_rows(body, p, c, count);
  if (rows) {
    c = fused::c_body(body, p, name, "i", row);
    c_for(a.w, "io", count / row, count * std::max<std::int64_t>(c.ops, 1), false);
    a.w.line("MG_OMP(omp simd)");
    a.w.open("for (int64_t ii = 0; ii < " + std::to_string(row) + "; ++ii)");
    a.w.line("const int64_t i = io * " + std::to_string(row) + " + ii;");
  } else {
    c_flat_for(a.w, count, count * std::max<std::int64_t>(c.ops, 1));  // may join a loop group
  }
  a.w.raw(c.code);
  a.w.line(a.out + "[i] = " + c.value[p.result] + ";");
  a.w.close();
  if (rows) a.w.close();
}

}  // namespace

void register_fused_ops() {
  OpDef& d = define_op("fused");
  d.doc =
      "one loop over its region (a chain of elementwise ops, optionally after a matmul or folded by a final "
      "reduction; see Fused nodes): the region's result, computed without full-size intermediates; not "
      "differentiable (fusion runs after grad)";
  d.arity = -1;
  d.attrs = {{"kind", AttrKind::string, std::nullopt},
             {"shape", AttrKind::i64_list, std::nullopt},
             {"dtype", AttrKind::dtype, std::nullopt}};
  d.infer = [](std::span<const Type>, const Attrs& attrs) {
    const std::string& kind = attrs.str("kind");
    require(kind == "elementwise" || kind == "matmul" || kind == "reduce",
            "kind must be \"elementwise\", \"matmul\" or \"reduce\", got \"" + kind + "\"");
    for (auto dim : attrs.list("shape")) require(dim >= 0, "negative dimension in shape");
    return Type{attrs.dtype("dtype"), attrs.list("shape")};
  };
  d.check_regions = [](const Node& n, std::span<const Type> in) { fused::analyze(n, in); };
  d.kernel = fused_kernel;
  d.emit_c = c_loops(fused_c);
  d.emit_c.reads_view_at = fused_reads_view_at;
  d.kernel_reads_view = fused_reads_view;
  d.emit_c.scratch = fused_scratch;
  d.emit_c.flat = fused_flat;
  d.not_differentiable = "fusion runs after grad: differentiate the unfused graph";
  d.test.grad_order = 0;
  d.test.cases = {
      {{Type{f64, {3, 4}}, Type{f64, {4}}}, {{"kind", std::string("elementwise")}, {"shape", I64List{3, 4}}, {"dtype", f64}}},
      {{Type{f64, {3, 5}}, Type{f64, {5, 4}}, Type{f64, {4}}},
       {{"kind", std::string("matmul")}, {"shape", I64List{3, 4}}, {"dtype", f64}}},
      {{Type{f64, {3, 4}}, Type{f64, {4}}}, {{"kind", std::string("reduce")}, {"shape", I64List{4}}, {"dtype", f64}}},
  };
  d.test.attach_regions = attach_test_region;
}

}  // namespace mg::ir
