// Hash-consing CSE; see cse.hpp.
#include "minigrad/passes/cse.hpp"

#include <bit>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

namespace {

using ir::Node;
using ir::NodeId;

std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// Attribute values compared bit for bit (0.0 and -0.0 differ, a NaN equals itself).
bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) return std::bit_cast<std::uint64_t>(*x) == std::bit_cast<std::uint64_t>(std::get<double>(b));
  return a == b;
}
bool same_attrs(const Attrs& a, const Attrs& b) {
  const auto &x = a.items(), &y = b.items();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].first != y[i].first || !same_value(x[i].second, y[i].second)) return false;
  return true;
}
std::size_t hash_attrs(const Attrs& a) {
  std::size_t h = 0;
  for (auto& [name, v] : a.items()) {
    h = mix(h, std::hash<std::string>{}(name));
    h = mix(h, std::visit(
                   [](const auto& x) -> std::size_t {
                     using X = std::decay_t<decltype(x)>;
                     if constexpr (std::is_same_v<X, double>) return std::hash<std::uint64_t>{}(std::bit_cast<std::uint64_t>(x));
                     else if constexpr (std::is_same_v<X, I64List>) {
                       std::size_t s = x.size();
                       for (auto e : x) s = mix(s, std::hash<std::int64_t>{}(e));
                       return s;
                     } else if constexpr (std::is_same_v<X, DType>) return static_cast<std::size_t>(x);
                     else return std::hash<X>{}(x);
                   },
                   v));
  }
  return h;
}
std::size_t hash_type(const Type& t) {
  std::size_t h = static_cast<std::size_t>(t.dtype);
  for (auto d : t.shape) h = mix(h, std::hash<std::int64_t>{}(d));
  return h;
}
std::string_view bytes_of(const Array& a) { return {static_cast<const char*>(a.raw()), a.nbytes()}; }

// The table of one graph being built (the top level or a region body): open addressing
// over dense 8-byte slots (32-bit hash, node id), linear probing, doubled at 3/4 load (at
// 1/2, a million-node graph's table was twice the bytes for little fewer probes: CSE 10% slower).
// No allocation per entry and one cache line per probe: a node-based multimap made CSE
// the super-linear pass on large graphs (a heap node and a pointer chase per entry).
class Table {
 public:
  // The node recorded under hash `h` for which same(id) holds, else kNoNode.
  template <class Same>
  NodeId find(std::size_t h, Same&& same) const {
    if (slots_.empty()) return ir::kNoNode;
    const std::uint32_t key = key_of(h);
    for (std::size_t i = key & mask(); slots_[i].id != ir::kNoNode; i = (i + 1) & mask())
      if (slots_[i].key == key && same(slots_[i].id)) return slots_[i].id;
    return ir::kNoNode;
  }
  void insert(std::size_t h, NodeId id) {
    if (4 * (count_ + 1) > 3 * slots_.size()) grow();
    place({key_of(h), id});
    ++count_;
  }

 private:
  struct Slot {
    std::uint32_t key = 0;
    NodeId id = ir::kNoNode;
  };
  // murmur3's 64-bit finalizer: every bit of h reaches the 32 kept (the index is its low bits).
  static std::uint32_t key_of(std::size_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb93fe53a87b9ULL;
    h ^= h >> 33;
    return static_cast<std::uint32_t>(h);
  }
  std::size_t mask() const { return slots_.size() - 1; }
  void place(Slot s) {
    std::size_t i = s.key & mask();
    while (slots_[i].id != ir::kNoNode) i = (i + 1) & mask();
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    for (const Slot& s : old)
      if (s.id != ir::kNoNode) place(s);
  }

  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

}  // namespace

std::unique_ptr<ir::Graph> eliminate_common_subexpressions(const ir::Graph& g) {
  std::unordered_map<const ir::Graph*, Table> tables;
  GraphRewriter rw([&](GraphRewriter& r, const Node& n, std::span<const ir::Value> ins) -> ir::Value {
    if (!n.regions.empty() || (n.kind == ir::NodeKind::op && n.op->traits.random)) return {};
    ir::Graph& dst = r.dst();
    Table& table = tables[&dst];
    std::size_t h = mix(hash_type(n.type), static_cast<std::size_t>(n.kind));
    if (n.kind == ir::NodeKind::constant) {
      h = mix(h, std::hash<std::string_view>{}(bytes_of(*n.literal)));
    } else {
      h = mix(h, std::hash<const void*>{}(n.op));
      for (const ir::Value& v : ins) h = mix(h, v.id);
      h = mix(h, hash_attrs(n.attrs));
    }
    const NodeId found = table.find(h, [&](NodeId id) {
      const Node& m = dst.node(id);
      if (m.kind != n.kind || m.type != n.type) return false;
      if (n.kind == ir::NodeKind::constant) return bytes_of(*m.literal) == bytes_of(*n.literal);
      if (m.op != n.op || m.inputs.size() != ins.size() || !m.regions.empty()) return false;
      for (std::size_t i = 0; i < ins.size(); ++i)
        if (m.inputs[i] != ins[i].id) return false;
      return same_attrs(m.attrs, n.attrs);
    });
    if (found != ir::kNoNode) return dst.value(found);
    ir::Value v = r.copy(n, ins);
    table.insert(h, v.id);
    return v;
  }, /*only_live=*/true);  // hashing dead nodes is wasted work (and memory on big graphs)
  return rw.run(g);
}

}  // namespace mg::passes
