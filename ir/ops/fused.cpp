// The `fused` op: one node owning a region (a chain of elementwise ops, optionally after a
// matmul) that the kernel runs as ONE loop over tiles of a few thousand elements, calling
// the body ops' own registry kernels on tile-sized windows, so no value inside the region
// ever gets a full-size buffer. ir/README.md ("Fused nodes") is the contract for every
// executor; check_regions enforces it. Knows no op by name except the two structural body
// ops the contract names (broadcast_to, matmul). No xtensor here.
#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>

#include "ir/errors.hpp"
#include "ir/ops/rules.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mg::ir {

namespace {

using namespace rules;

constexpr std::int64_t kTile = 4096;           // elements per tile
constexpr std::int64_t kParallelTiles = 1 << 16;  // parallel over tiles from this many elements

// What each body value is, per the contract in ir/README.md.
enum class BodyRole : std::uint8_t {
  tiled,      // a parameter or constant read at the loop index
  whole,      // a parameter or constant read whole (by broadcast_to or matmul)
  broadcast,  // broadcast_to of a whole value to the loop shape
  compute,    // an elementwise op
  matmul,     // the GEMM prologue (kind "matmul")
};

struct BodyPlan {
  std::vector<BodyRole> role;
  Type loop;  // the loop shape and the result dtype
  NodeId matmul = kNoNode;
  NodeId result = kNoNode;
};

bool is_op(const Node& n, std::string_view name) { return n.kind == NodeKind::op && n.op->name == name; }

// require() with the message built only on failure (the kernel analyses every call).
template <class Msg>
void check(bool ok, Msg&& msg) {
  if (!ok) throw TypeRuleError{msg()};
}

// Checks `n` (a fused node, inputs typed `in`) against the contract; returns its plan.
BodyPlan analyze(const Node& n, std::span<const Type> in) {
  check(n.regions.size() == 1, [] { return std::string("a fused node owns exactly one region"); });
  const Graph& body = *n.regions[0];
  const std::string& kind = n.attrs.str("kind");
  const bool mm_kind = kind == "matmul";
  check(kind == "elementwise" || mm_kind, [&] { return "kind must be \"elementwise\" or \"matmul\", got \"" + kind + "\""; });
  check(body.inputs().size() == in.size(), [&] {
    return "the region takes " + std::to_string(body.inputs().size()) + " parameters but the node has " +
           std::to_string(in.size()) + " inputs";
  });
  for (std::size_t i = 0; i < in.size(); ++i)
    check(body.node(body.inputs()[i]).type == in[i], [&] {
      return "region parameter " + std::to_string(i) + " is " + to_string(body.node(body.inputs()[i]).type) +
             " but the node's input is " + to_string(in[i]);
    });
  check(body.outputs.size() == 1, [] { return std::string("the region returns exactly one value"); });
  check(body.size() > 0 && body.outputs[0] == body.size() - 1, [] { return std::string("the region's result is its last node"); });
  BodyPlan p;
  p.loop = n.type;
  p.result = body.outputs[0];
  check(body.node(p.result).type == n.type, [&] {
    return "the region returns " + to_string(body.node(p.result).type) + " but the node is " + to_string(n.type);
  });
  const std::int64_t count = n.type.numel();
  p.role.resize(body.size());
  bool seen_op = false;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    auto where = [&](const std::string& what) {
      return [&b, id, what] { return "region value %" + std::to_string(id) + " (" + b.op_name() + "): " + what; };
    };
    if (b.kind != NodeKind::op) {
      p.role[id] = b.type.numel() == count ? BodyRole::tiled : BodyRole::whole;
      continue;
    }
    const bool first_op = !seen_op;
    seen_op = true;
    for (NodeId x : b.inputs) check(x < id, where("operand defined after use"));
    if (is_op(b, "broadcast_to")) {
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
      check(false, where("op not allowed in a fused body (elementwise ops, broadcast_to, a leading matmul)"));
    }
  }
  check(!mm_kind || p.matmul != kNoNode, [] { return std::string("a kind \"matmul\" body starts with a matmul"); });
  check(p.role[p.result] == BodyRole::compute || (!mm_kind && p.role[p.result] == BodyRole::broadcast),
        [] { return std::string("the result must be computed by an elementwise op"); });
  return p;
}

// NumPy broadcasting as an index map: dst[j] = src[sum_k idx_k(j) * sstride_k], j in
// [off, off + len) of the loop shape.
struct BroadcastMap {
  Shape shape;                      // loop shape
  std::vector<std::int64_t> sstride;  // per loop axis; 0 on broadcast axes
  std::size_t elem = 0;
};

BroadcastMap broadcast_map(const Type& src, const Shape& loop) {
  BroadcastMap m;
  m.shape = loop;
  m.elem = size_of(src.dtype);
  m.sstride.assign(loop.size(), 0);
  const auto st = strides_of(src.shape);
  const std::size_t lead = loop.size() - src.shape.size();
  for (std::size_t k = 0; k < src.shape.size(); ++k)
    m.sstride[lead + k] = src.shape[k] == 1 ? 0 : st[k];
  return m;
}

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

void run_broadcast(const BroadcastMap& m, const std::byte* src, std::byte* dst, std::int64_t off, std::int64_t len) {
  const int rank = static_cast<int>(m.shape.size());
  if (std::all_of(m.sstride.begin(), m.sstride.end(), [](std::int64_t s) { return s == 0; })) {
    copy_run(m.elem, dst, src, len, 0);  // a splat (a scalar, or all size-1 axes)
    return;
  }
  // Multi-index of `off`, then whole runs along the innermost axis.
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank));
  std::int64_t rem = off;
  for (int k = rank - 1; k >= 0; --k) {
    const std::int64_t d = std::max<std::int64_t>(m.shape[static_cast<std::size_t>(k)], 1);
    idx[static_cast<std::size_t>(k)] = rem % d;
    rem /= d;
  }
  const std::int64_t inner = m.shape.back();
  std::int64_t done = 0;
  while (done < len) {
    std::int64_t s = 0;
    for (int k = 0; k < rank; ++k) s += idx[static_cast<std::size_t>(k)] * m.sstride[static_cast<std::size_t>(k)];
    const std::int64_t n = std::min(inner - idx.back(), len - done);
    copy_run(m.elem, dst + done * static_cast<std::int64_t>(m.elem), src + s * static_cast<std::int64_t>(m.elem), n,
             m.sstride.back());
    done += n;
    idx.back() += n;
    for (int k = rank - 1; k > 0 && idx[static_cast<std::size_t>(k)] >= m.shape[static_cast<std::size_t>(k)]; --k) {
      idx[static_cast<std::size_t>(k)] = 0;
      ++idx[static_cast<std::size_t>(k - 1)];
    }
  }
}

void fused_kernel(const KernelArgs& k) {
  const Node& n = k.node;
  std::vector<Type> in_types;
  for (const Array* a : k.in) in_types.push_back(a->type());
  BodyPlan p;
  try {
    p = analyze(n, in_types);
  } catch (const TypeRuleError& e) {
    MG_ASSERT(false, "fused node does not verify: " + e.message);
  }
  const Graph& body = *n.regions[0];
  const std::int64_t total = p.loop.numel();

  // Whole values (parameters by position, constants by literal) and broadcast maps.
  std::vector<const Array*> whole(body.size(), nullptr);
  for (std::size_t i = 0; i < body.inputs().size(); ++i) whole[body.inputs()[i]] = k.in[i];
  for (NodeId id = 0; id < body.size(); ++id)
    if (body.node(id).kind == NodeKind::constant) whole[id] = body.node(id).literal.get();
  std::vector<BroadcastMap> bmap(body.size());
  for (NodeId id = 0; id < body.size(); ++id)
    if (p.role[id] == BodyRole::broadcast)
      bmap[id] = broadcast_map(body.node(body.node(id).inputs[0]).type, p.loop.shape);

  if (p.matmul != kNoNode) {  // the GEMM prologue, whole, into the result buffer
    const Node& mm = body.node(p.matmul);
    const Array* ops[2] = {whole[mm.inputs[0]], whole[mm.inputs[1]]};
    mm.op->kernel(KernelArgs{ops, mm, k.out, nullptr});
  }
  if (total == 0) return;

  const std::int64_t ntiles = (total + kTile - 1) / kTile;
  std::exception_ptr error;
  std::mutex error_mu;
#pragma omp parallel if (total >= kParallelTiles && omp_get_max_threads() > 1)
  {
    // Per-thread tile scratch for every computed value but the result, kept between calls.
    thread_local std::vector<Array> pool;
    std::vector<Array> scratch(body.size());
    std::size_t used = 0;
    for (NodeId id = 0; id < body.size(); ++id)
      if ((p.role[id] == BodyRole::compute || p.role[id] == BodyRole::broadcast) && id != p.result) {
        if (used == pool.size()) pool.emplace_back(Type{DType::f64, {kTile}});  // the widest dtype
        scratch[id] = pool[used++];
      }
    std::vector<Array> tile(body.size());
    std::vector<const Array*> ins;
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < ntiles; ++t) {
      try {
        const std::int64_t off = t * kTile, len = std::min(kTile, total - off);
        for (NodeId id = 0; id < body.size(); ++id) {
          const Node& b = body.node(id);
          const Type tt{b.type.dtype, {len}};
          switch (p.role[id]) {
            case BodyRole::whole: break;
            case BodyRole::tiled: tile[id] = whole[id]->view(off, tt); break;
            case BodyRole::matmul: tile[id] = k.out.view(off, tt); break;
            case BodyRole::broadcast:
            case BodyRole::compute: {
              if (id == p.result) {
                tile[id] = k.out.view(off, tt);
              } else {
                tile[id] = scratch[id];
                tile[id].retype(tt);
              }
              if (p.role[id] == BodyRole::broadcast) {
                run_broadcast(bmap[id], static_cast<const std::byte*>(whole[b.inputs[0]]->raw()),
                              static_cast<std::byte*>(tile[id].raw()), off, len);
              } else {
                ins.clear();
                for (NodeId x : b.inputs) ins.push_back(&tile[x]);
                b.op->kernel(KernelArgs{ins, b, tile[id], nullptr});
              }
              break;
            }
          }
        }
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

// The registry test's body for a case: tanh(a0 * broadcast(a1)) + a0, or for kind
// "matmul": relu(matmul(a0, a1) + broadcast(a2)).
void attach_test_region(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  auto body = std::make_unique<Graph>();
  std::vector<Value> a;
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    a.push_back(body->add_input(std::string(1, 'a').append(std::to_string(i)), g.node(n.inputs[i]).type));
  Value r;
  if (n.attrs.str("kind") == "matmul") {
    Value mm = matmul(a[0], a[1]);  // the prologue must be the body's first op
    r = unary("relu", add(mm, broadcast_to(a[2], n.type.shape)));
  } else {
    r = add(tanh(mul(a[0], broadcast_to(a[1], n.type.shape))), a[0]);
  }
  body->outputs = {r.id};
  g.mutable_node(id).regions.push_back(std::move(body));
}

// C99: the matmul prologue (the matmul op's own emission, into the result buffer), then
// ONE loop over the loop shape computing the body's elementwise chain into temporaries
// with each op's registry expression; broadcasts read their source through an index map.
void fused_c(const CLoopArgs& a) {
  const BodyPlan p = analyze(a.node, a.in_types);
  const Graph& body = *a.node.regions[0];
  const std::int64_t count = a.node.type.numel();
  auto param_index = [&](NodeId id) {
    const auto& ins = body.inputs();
    return static_cast<std::size_t>(std::find(ins.begin(), ins.end(), id) - ins.begin());
  };
  // Body values as C names: parameters are the node's inputs, constants file-scope arrays.
  std::vector<std::string> name(body.size());
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    if (b.kind == NodeKind::input) name[id] = a.in[param_index(id)];
    if (b.kind == NodeKind::constant) {
      name[id] = a.out + "_c" + std::to_string(id);
      a.support(name[id], c_array(name[id], *b.literal));
    }
  }
  if (p.matmul != kNoNode) {
    const Node& mm = body.node(p.matmul);
    const std::vector<std::string> in{name[mm.inputs[0]], name[mm.inputs[1]]};
    const std::vector<Type> types{body.node(mm.inputs[0]).type, body.node(mm.inputs[1]).type};
    a.w.open("");
    defined_op("matmul").emit_c.loops(CLoopArgs{mm, in, types, a.out, a.w, a.blas, a.fail, a.support});
    a.w.close();
  }
  if (count == 0) return;
  std::string code;
  std::vector<std::string> value(body.size());  // C expression of each value at index i
  std::int64_t ops = 0;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    switch (p.role[id]) {
      case BodyRole::tiled: value[id] = name[id] + "[i]"; break;
      case BodyRole::whole: break;
      case BodyRole::matmul: value[id] = a.out + "[i]"; break;
      case BodyRole::broadcast: {
        const BroadcastMap m = broadcast_map(body.node(b.inputs[0]).type, p.loop.shape);
        value[id] = name[b.inputs[0]] + "[" + c_offset("i", m.shape, m.sstride) + "]";
        break;
      }
      case BodyRole::compute: {
        std::vector<std::string> in;
        std::vector<DType> dts;
        for (NodeId x : b.inputs) {
          in.push_back(value[x]);
          dts.push_back(body.node(x).type.dtype);
        }
        const CExprArgs e{b, in, dts, b.type.dtype, "i"};
        const EmitC& c = b.op->emit_c;
        const std::string t = "f" + std::to_string(id);
        code += "    const " + c_type(b.type.dtype) + " " + t + " = " +
                (c.expr_fn ? c.expr_fn(e) : expand_c_expr(c.expr, e)) + ";\n";
        value[id] = t;
        ++ops;
        break;
      }
    }
  }
  c_for(a.w, "i", count, count * std::max<std::int64_t>(ops, 1), true);
  a.w.raw(code);
  a.w.line(a.out + "[i] = " + value[p.result] + ";");
  a.w.close();
}

}  // namespace

void register_fused_ops() {
  OpDef& d = define_op("fused");
  d.doc =
      "one loop over its region (a chain of elementwise ops, optionally after a matmul; see Fused nodes): the "
      "region's result, computed without full-size intermediates; not differentiable (fusion runs after grad)";
  d.arity = -1;
  d.attrs = {{"kind", AttrKind::string, std::nullopt},
             {"shape", AttrKind::i64_list, std::nullopt},
             {"dtype", AttrKind::dtype, std::nullopt}};
  d.infer = [](std::span<const Type>, const Attrs& attrs) {
    const std::string& kind = attrs.str("kind");
    require(kind == "elementwise" || kind == "matmul", "kind must be \"elementwise\" or \"matmul\", got \"" + kind + "\"");
    for (auto dim : attrs.list("shape")) require(dim >= 0, "negative dimension in shape");
    return Type{attrs.dtype("dtype"), attrs.list("shape")};
  };
  d.check_regions = [](const Node& n, std::span<const Type> in) { analyze(n, in); };
  d.kernel = fused_kernel;
  d.emit_c = c_loops(fused_c);
  d.not_differentiable = "fusion runs after grad: differentiate the unfused graph";
  d.test.grad_order = 0;
  d.test.cases = {
      {{Type{f64, {3, 4}}, Type{f64, {4}}}, {{"kind", std::string("elementwise")}, {"shape", I64List{3, 4}}, {"dtype", f64}}},
      {{Type{f64, {3, 5}}, Type{f64, {5, 4}}, Type{f64, {4}}},
       {{"kind", std::string("matmul")}, {"shape", I64List{3, 4}}, {"dtype", f64}}},
  };
  d.test.attach_regions = attach_test_region;
}

}  // namespace mg::ir
