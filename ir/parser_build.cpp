// The text-IR builder: turns the syntax tree of ir/parser.cpp into a verified Graph.
// Op nodes go through make_op with the op's schema (attributes checked, defaults filled,
// type re-inferred) and the printed type must equal the inferred one; inputs and constants
// are added directly. Every token is range-checked here (i64, u32 line numbers, dims,
// element counts), so each mistake becomes a ParseError at its own line:column.
#include <charconv>
#include <limits>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/parser_ast.hpp"
#include "minigrad/ir/verifier.hpp"

namespace mg::ir::text {

namespace {

// Largest element count a type may have (so nbytes never overflows), and the largest
// constant materialised from a splat literal.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 56;
constexpr std::int64_t kMaxConstantBytes = std::int64_t{1} << 31;

class Builder {
 public:
  explicit Builder(const Source& src) : src_(src) {}

  std::unique_ptr<Graph> graph(const ast::Graph& t) {
    auto g = std::make_unique<Graph>();
    std::unordered_map<std::string, NodeId> scope;  // "#12" numbered, "n:x" named
    for (const ast::Param& p : t.params) param(*g, scope, p);
    for (const ast::Stmt& s : t.stmts) stmt(*g, scope, s);
    std::unordered_set<std::string> out_names;
    for (const ast::Result& r : t.results) {
      g->outputs.push_back(lookup(scope, r.value));
      std::string name = r.name ? out_name(*r.name) : std::string();
      if (!name.empty() && !out_names.insert(name).second)
        fail(r.name->at, "duplicate output name " + quote_name(name));
      g->output_names.push_back(std::move(name));
    }
    return g;
  }

 private:
  [[noreturn]] void fail(const char* at, const std::string& msg) const { fail_at(src_, at, msg); }
  static std::string quote_name(const std::string& s) { return "'" + s + "'"; }
  static std::string show(const ast::Tok& t) { return "'" + t.text + "'"; }

  // ---- tokens ----
  static bool is_number(const ast::Tok& t) {
    return !t.text.empty() && (t.text[0] == '-' || (t.text[0] >= '0' && t.text[0] <= '9') ||
                               t.text == "inf" || t.text == "nan");
  }
  static bool is_string(const ast::Tok& t) { return !t.text.empty() && t.text[0] == '"'; }

  std::int64_t i64(const ast::Tok& t, const std::string& what) const {
    std::int64_t v = 0;
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range) fail(t.at, what + " out of range of i64: " + show(t));
    if (ec != std::errc() || p != e) fail(t.at, "expected " + what + " (an integer), got " + show(t));
    return v;
  }

  template <class F>
  F floating(const ast::Tok& t, const std::string& what) const {
    if (!is_number(t)) fail(t.at, "expected " + what + " (a number), got " + show(t));
    F v{};
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range)
      fail(t.at, what + " out of range of " + (sizeof(F) == 4 ? "f32" : "f64") + ": " + show(t));
    if (ec != std::errc() || p != e) fail(t.at, "expected " + what + " (a number), got " + show(t));
    return v;
  }

  bool boolean(const ast::Tok& t, const std::string& what) const {
    if (t.text == "true") return true;
    if (t.text == "false") return false;
    fail(t.at, "expected " + what + " (true or false), got " + show(t));
  }

  DType dtype(const ast::Tok& t) const {
    auto d = dtype_from_name(t.text);
    if (!d) fail(t.at, "expected a dtype (f32, f64, i64, bool), got " + show(t));
    return *d;
  }

  // The contents of a string token, escapes resolved.
  std::string unescape(const ast::Tok& t) const {
    if (!is_string(t)) fail(t.at, "expected a string, got " + show(t));
    std::string out;
    const std::string& s = t.text;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      char c = s[++i];
      auto hexval = [](char h) {
        return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      };
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'x': {
          int hi = i + 1 < s.size() - 1 ? hexval(s[i + 1]) : -1;
          int lo = i + 2 < s.size() - 1 ? hexval(s[i + 2]) : -1;
          if (hi < 0 || lo < 0) fail(t.at + i - 1, "expected two hex digits after '\\x'");
          out += static_cast<char>(hi * 16 + lo);
          i += 2;
          break;
        }
        default: fail(t.at + i - 1, "unknown escape '\\" + std::string(1, c) + "' (use \\n \\t \\r \\\" \\\\ \\xHH)");
      }
    }
    return out;
  }

  std::string out_name(const ast::Tok& t) const { return is_string(t) ? unescape(t) : t.text; }

  // ---- names ----
  // Scope key of a value name: numbered (%12) and named (%x, %"x") are distinct spaces.
  std::string key(const ast::Name& n) const {
    if (!n.text.empty() && n.text[0] >= '0' && n.text[0] <= '9') return "#" + n.text;
    return "n:" + (n.text[0] == '"' ? unescape(ast::Tok{{n.at + 1}, n.text}) : n.text);
  }
  NodeId lookup(const std::unordered_map<std::string, NodeId>& scope, const ast::Name& n) const {
    auto it = scope.find(key(n));
    if (it == scope.end()) fail(n.at, "undefined value %" + n.text);
    return it->second;
  }
  void define(std::unordered_map<std::string, NodeId>& scope, const ast::Name& n, NodeId id) const {
    if (!scope.emplace(key(n), id).second) fail(n.at, "value %" + n.text + " is already defined");
  }

  // ---- types and locations ----
  Type type(const ast::Type& t) const {
    Type out{dtype(t.dtype), {}};
    std::int64_t count = 1;
    for (const ast::Tok& d : t.dims) {
      std::int64_t v = i64(d, "a dimension");
      if (v < 0) fail(d.at, "expected a dimension >= 0, got " + show(d));
      if (v > 0 && count > kMaxElements / v)
        fail(d.at, "shape has too many elements (more than 2^56)");
      if (v > 0) count *= v;
      out.shape.push_back(v);
    }
    return out;
  }

  SourceLoc loc(const boost::optional<ast::Loc>& l) const {
    if (!l) return {};
    auto u32 = [&](const ast::Tok& t, std::int64_t lo) {
      std::int64_t v = i64(t, "a line or column number");
      if (v < lo || v > std::numeric_limits<std::uint32_t>::max())
        fail(t.at, "expected a " + std::string(lo ? "line number >= 1" : "column number >= 0") +
                       " that fits 32 bits, got " + show(t));
      return static_cast<std::uint32_t>(v);
    };
    SourceLoc out;
    out.file = intern_file(unescape(l->file));
    out.line = u32(l->line, 1);
    out.column = l->column ? u32(*l->column, 0) : 0;
    return out;
  }

  // ---- statements ----
  void param(Graph& g, std::unordered_map<std::string, NodeId>& scope, const ast::Param& p) {
    if (key(p.name)[0] == '#')
      fail(p.name.at, "expected a named input (%name or %\"name\"), got %" + p.name.text);
    std::string name = key(p.name).substr(2);
    if (g.input(name).valid()) fail(p.name.at, "duplicate input name %" + p.name.text);
    Value v = guarded(p.name.at, [&] { return g.add_input(name, type(p.type), loc(p.loc)); });
    g.mutable_node(v.id).role = p.role;
    define(scope, p.name, v.id);
  }

  void stmt(Graph& g, std::unordered_map<std::string, NodeId>& scope, const ast::Stmt& s) {
    Value v;
    if (s.rhs.is_constant) {
      Type t = type(s.type);
      SourceLoc where = loc(s.loc);
      Array a = literal(s.rhs.literal, t);
      v = g.add_constant(std::move(a), where);
      if (!s.regions.empty()) fail(s.regions[0].at, "only op nodes own regions, not constants");
    } else {
      const ast::OpCall& c = s.rhs.call;
      const OpDef* def = find_op(c.op.text);
      if (!def) fail(c.op.at, "unknown op " + show(c.op));
      std::vector<Value> inputs;
      for (const ast::Name& n : c.args) inputs.push_back(g.value(lookup(scope, n)));
      Attrs attrs;
      if (c.attrs)
        for (const ast::Attr& a : *c.attrs) attrs.set(a.name.text, attribute(*def, a, attrs));
      Type t = type(s.type);
      SourceLoc where = loc(s.loc);
      v = guarded(c.op.at, [&] {
        LocScope at(where, /*force=*/true);
        return make_op(g, *def, std::move(inputs), std::move(attrs));
      });
      if (v.type() != t)
        fail(s.type.at, "expected type " + to_string(v.type()) + " (what '" + def->name +
                            "' infers from its inputs), got " + to_string(t));
      for (const ast::Graph& r : s.regions) {
        auto body = graph(r);
        g.mutable_node(v.id).regions.push_back(std::move(body));
      }
    }
    g.mutable_node(v.id).role = s.role;
    define(scope, s.name, v.id);
  }

  // Runs a graph-building call, turning its errors into a ParseError at `at`.
  template <class F>
  Value guarded(const char* at, F&& f) const {
    try {
      return f();
    } catch (const ParseError&) {
      throw;
    } catch (const UserError& e) {
      fail(at, e.message());
    } catch (const std::bad_alloc&) {
      fail(at, "out of memory building this node");
    } catch (const std::exception& e) {  // an op's rule rejecting absurd input
      fail(at, e.what());
    }
  }

  AttrValue attribute(const OpDef& def, const ast::Attr& a, const Attrs& so_far) const {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs)
      if (s.name == a.name.text) spec = &s;
    if (!spec) {
      std::string known;
      for (const AttrSpec& s : def.attrs) known += (known.empty() ? "" : ", ") + s.name;
      fail(a.name.at, "op '" + def.name + "' has no attribute " + show(a.name) +
                          (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
    }
    if (so_far.has(a.name.text)) fail(a.name.at, "attribute " + show(a.name) + " given twice");
    std::string what = "attribute '" + spec->name + "' of '" + def.name + "'";
    const ast::Lit& v = a.value;
    if (spec->kind == AttrKind::i64_list) {
      if (!v.is_list) fail(v.at, "expected an i64 list [..] for " + what + ", got " + show(v.items.at(0)));
      I64List out;
      for (const ast::Tok& t : v.items) out.push_back(i64(t, "an element of " + what));
      return out;
    }
    if (v.is_list) fail(v.at, "expected " + std::string(name_of(spec->kind)) + " for " + what + ", got a list");
    const ast::Tok& t = v.items.at(0);
    switch (spec->kind) {
      case AttrKind::i64: return i64(t, what);
      case AttrKind::f64: return floating<double>(t, what);
      case AttrKind::boolean: return boolean(t, what);
      case AttrKind::string:
        if (!is_string(t)) fail(t.at, "expected a string for " + what + ", got " + show(t));
        return unescape(t);
      case AttrKind::dtype: return dtype(t);
      case AttrKind::i64_list: break;
    }
    fail(t.at, "unsupported attribute kind");
  }

  // A constant's value: `[]` for empty, one element for a splat, else all elements.
  Array literal(const ast::Lit& lit, const Type& t) const {
    std::int64_t n = t.numel();
    auto count = static_cast<std::int64_t>(lit.items.size());
    if (lit.is_list ? count != n : n == 0)
      fail(lit.at, "expected " + std::to_string(n) + " element(s) for a constant of type " + to_string(t) +
                       ", got " + (lit.is_list ? std::to_string(count) : "a scalar"));
    if (n * static_cast<std::int64_t>(size_of(t.dtype)) > kMaxConstantBytes)
      fail(lit.at, "constant of type " + to_string(t) + " is too large to build (over 2 GiB)");
    Array a(t);
    visit_dtype(t.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto element = [&](const ast::Tok& tok) -> T {
        if constexpr (std::is_same_v<T, std::uint8_t>) return boolean(tok, "a bool element");
        else if constexpr (std::is_same_v<T, std::int64_t>) return i64(tok, "an i64 element");
        else return floating<T>(tok, "a float element");
      };
      T* p = a.data<T>();
      if (lit.is_list) {
        for (std::int64_t i = 0; i < n; ++i) p[i] = element(lit.items[static_cast<std::size_t>(i)]);
      } else {
        T x = element(lit.items.at(0));
        for (std::int64_t i = 0; i < n; ++i) p[i] = x;
      }
    });
    return a;
  }

  const Source& src_;
};

}  // namespace

std::unique_ptr<Graph> build_graph(const Source& src, const ast::Graph& tree) {
  std::unique_ptr<Graph> g = Builder(src).graph(tree);
  try {
    verify(*g);
  } catch (const VerifyError& e) {
    fail_at(src, tree.at, "the graph does not verify: " + e.message());
  }
  return g;
}

}  // namespace mg::ir::text
