// Hash-consing CSE; see cse.hpp.
#include "minigrad/passes/cse.hpp"

#include <bit>
#include <cstring>
#include <string_view>
#include <unordered_map>

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

// The table of one graph being built (the top level or a region body).
struct Table {
  std::unordered_multimap<std::size_t, NodeId> by_hash;
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
    auto [lo, hi] = table.by_hash.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      const Node& m = dst.node(it->second);
      if (m.kind != n.kind || m.type != n.type) continue;
      if (n.kind == ir::NodeKind::constant) {
        if (bytes_of(*m.literal) == bytes_of(*n.literal)) return dst.value(m.id);
        continue;
      }
      if (m.op != n.op || m.inputs.size() != ins.size() || !m.regions.empty()) continue;
      bool same = true;
      for (std::size_t i = 0; i < ins.size() && same; ++i) same = m.inputs[i] == ins[i].id;
      if (same && same_attrs(m.attrs, n.attrs)) return dst.value(m.id);
    }
    ir::Value v = r.copy(n, ins);
    table.by_hash.emplace(h, v.id);
    return v;
  }, /*only_live=*/true);  // hashing dead nodes is wasted work (and memory on big graphs)
  return rw.run(g);
}

}  // namespace mg::passes
