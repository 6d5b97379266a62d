// The text printer; see printer.hpp. Must stay the exact inverse of ir/parser.cpp: any
// change to a spelling here needs the matching change in the grammar and ir/README.md.
#include "minigrad/ir/printer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ostream>
#include <set>
#include <sstream>

#include "minigrad/ir/op_registry.hpp"

namespace mg::ir {

std::string value_name(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = "%";  // built with += : GCC 12 mis-warns (-Wrestrict) on "%" + string
  s += n.kind == NodeKind::input ? n.name : std::to_string(id);
  return s;
}

std::string describe_value(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.kind == NodeKind::input) return "input '" + n.name + "' (" + to_string(n.type) + ")";
  return "value " + value_name(g, id) + " = " + n.op_name() + " (" + to_string(n.type) + ")";
}

bool is_bare_name(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  return true;
}

std::string quote(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += hex[u >> 4];
          out += hex[u & 15];
        } else {
          out += c;  // printable ASCII and UTF-8 bytes as they are
        }
    }
  }
  return out + "\"";
}

std::string name_token(std::string_view s) { return is_bare_name(s) ? std::string(s) : quote(s); }

namespace {

// Shortest representation that reads back to the same bits; a float always shows a '.',
// an exponent or inf/nan, so it never reads as an integer to a person.
template <class T>
std::string format_float(T v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n': inf
  return s;
}

}  // namespace

std::string format_f64(double v) { return format_float(v); }
std::string format_f32(float v) { return format_float(v); }

std::string format_attr(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, I64List>) {
          std::string s = "[";
          for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<X, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<X, std::string>) {
          return quote(x);
        } else if constexpr (std::is_same_v<X, DType>) {
          return std::string(name_of(x));
        } else if constexpr (std::is_same_v<X, double>) {
          return format_f64(x);
        } else {
          return std::to_string(x);
        }
      },
      v);
}

namespace {

// A node's role after its type (ir/node.hpp); the parser reads the same words.
const char* role_suffix(Role r) {
  switch (r) {
    case Role::forward: return "";
    case Role::adjoint: return " grad";
    case Role::second_order: return " grad2";
    case Role::update: return " update";
  }
  return "";
}

void print_loc(std::ostream& os, const SourceLoc& loc, const PrintOptions& opts) {
  if (!opts.locations || !loc.known()) return;
  os << "  loc(" << quote(loc.file) << ":" << loc.line;
  if (loc.column) os << ":" << loc.column;
  os << ")";
}

// A constant's elements: `[]` when empty, one element when all are bitwise equal (a
// splat), else the flat row-major list.
void print_literal(std::ostream& os, const Array& a) {
  auto element = [&](std::int64_t i) -> std::string {
    return visit_dtype(a.dtype(), [&](auto tag) -> std::string {
      using T = typename decltype(tag)::type;
      T x = a.data<T>()[i];
      if constexpr (std::is_same_v<T, double>) return format_f64(x);
      else if constexpr (std::is_same_v<T, float>) return format_f32(x);
      else if constexpr (std::is_same_v<T, std::uint8_t>) return x ? "true" : "false";
      else return std::to_string(x);
    });
  };
  std::int64_t n = a.numel();
  if (n == 0) {
    os << "[]";
    return;
  }
  std::size_t es = size_of(a.dtype());
  auto bytes = static_cast<const unsigned char*>(a.raw());
  bool splat = true;
  for (std::int64_t i = 1; i < n && splat; ++i)
    splat = std::memcmp(bytes, bytes + static_cast<std::size_t>(i) * es, es) == 0;
  if (splat) {
    os << element(0);
    return;
  }
  os << "[";
  for (std::int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << element(i);
  os << "]";
}

// Result names: explicit names kept (a repeat gets a suffix), empty ones become out<i>.
std::vector<std::string> result_names(std::span<const NodeId> results, const std::vector<std::string>* given) {
  std::vector<std::string> names(results.size());
  std::set<std::string> used;
  auto claim = [&](std::string base) {
    std::string s = base;
    for (int k = 1; used.count(s); ++k) s = base + "_" + std::to_string(k);
    used.insert(s);
    return s;
  };
  for (std::size_t i = 0; i < results.size(); ++i)
    if (given && i < given->size() && !(*given)[i].empty()) names[i] = claim((*given)[i]);
  for (std::size_t i = 0; i < results.size(); ++i)
    if (names[i].empty()) names[i] = claim("out" + std::to_string(i));
  return names;
}

void print_graph(std::ostream& os, const Graph& g, std::span<const NodeId> results,
                 const std::vector<bool>& live, const std::vector<std::string>* out_names,
                 bool name_results, const PrintOptions& opts, const std::string& indent,
                 const char* keyword) {
  auto percent = [](const std::string& s) {
    std::string r = "%";  // += : GCC 12 mis-warns (-Wrestrict) on "%" + string
    r += s;
    return r;
  };
  std::vector<std::string> names(g.size());
  for (NodeId id : g.inputs()) names[id] = percent(name_token(g.node(id).name));
  std::size_t counter = g.inputs().size();
  for (NodeId id = 0; id < g.size(); ++id)
    if (g.node(id).kind != NodeKind::input && (live.empty() || live[id]))
      names[id] = percent(std::to_string(counter++));
  auto name_of_id = [&](NodeId id) {
    return id < names.size() && !names[id].empty() ? names[id] : "%<bad:" + std::to_string(id) + ">";
  };

  os << indent << keyword << "(";
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    os << (i ? ", " : "") << names[n.id] << ": " << to_string(n.type);
    os << role_suffix(n.role);
    print_loc(os, n.loc, opts);
  }
  os << ") {\n";
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.kind == NodeKind::input || (!live.empty() && !live[id])) continue;
    os << indent << "  " << names[id] << " = ";
    if (n.kind == NodeKind::constant) {
      os << "constant ";
      print_literal(os, *n.literal);
    } else {
      os << n.op_name() << "(";
      for (std::size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << name_of_id(n.inputs[i]);
      os << ")";
      if (!n.attrs.items().empty()) {
        os << " {";
        bool first = true;
        for (auto& [k, v] : n.attrs.items()) {
          os << (first ? "" : ", ") << name_token(k) << " = " << format_attr(v);
          first = false;
        }
        os << "}";
      }
    }
    os << " : " << to_string(n.type);
    os << role_suffix(n.role);
    print_loc(os, n.loc, opts);
    os << "\n";
    for (const auto& region : n.regions)
      print_graph(os, *region, region->outputs, {}, &region->output_names, false, opts, indent + "    ",
                  "region");
  }
  std::vector<std::string> rn;
  if (name_results) rn = result_names(results, out_names);
  os << indent << "  return";
  for (std::size_t i = 0; i < results.size(); ++i) {
    os << (i ? ", " : " ");
    if (name_results) os << name_token(rn[i]) << " = ";
    else if (out_names && i < out_names->size() && !(*out_names)[i].empty())
      os << name_token((*out_names)[i]) << " = ";
    os << name_of_id(results[i]);
  }
  os << "\n" << indent << "}\n";
}

}  // namespace

void print(std::ostream& os, const Graph& g, std::span<const NodeId> outputs, PrintOptions opts) {
  bool own = outputs.empty() || std::equal(outputs.begin(), outputs.end(), g.outputs.begin(), g.outputs.end());
  std::span<const NodeId> results = outputs.empty() ? std::span<const NodeId>(g.outputs) : outputs;
  std::vector<bool> live;
  if (opts.only_live && !outputs.empty()) live = g.reachable_from(outputs);
  print_graph(os, g, results, live, own ? &g.output_names : nullptr, true, opts, "", "graph");
}

std::string to_text(const Graph& g, std::span<const NodeId> outputs, PrintOptions opts) {
  std::ostringstream os;
  print(os, g, outputs, opts);
  return os.str();
}

}  // namespace mg::ir
