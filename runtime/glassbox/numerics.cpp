// First-NaN root cause: the scan, the statistics and the report (numerics.hpp). Runs only
// on the error path, except all_finite, which checking executors call once per value.
#include "minigrad/runtime/glassbox/numerics.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <tuple>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

std::string index_text(const std::vector<std::int64_t>& idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? "," : "") + std::to_string(idx[i]);
  return s + "]";
}

}  // namespace

std::string ValueStats::text() const {
  std::string s = name + ": " + to_string(type);
  if (type.numel() == 0) return s + " (empty)";
  const std::int64_t bad = nan + pos_inf + neg_inf;
  if (bad < type.numel()) s += "  min " + num(min) + "  max " + num(max) + "  mean " + num(mean);
  s += "  | NaN " + std::to_string(nan) + "  Inf " + std::to_string(pos_inf + neg_inf) + "  zero " +
       std::to_string(zero) + "  negative " + std::to_string(negative);
  if (!shown.empty()) {
    s += "  |";
    for (auto& [idx, v] : shown) s += " " + index_text(idx) + "=" + num(v);
  }
  return s;
}

std::string NumericsReport::text() const {
  std::string s;
  if (!input_name.empty()) {
    s = "non-finite value in graph input '" + input_name + "' (" + (op == "constant" ? "a constant" : "user data") +
        "), not made by any op\n";
    if (!first_use.empty()) s += "  first read by " + first_use + "\n";
  } else {
    s = "first non-finite value made from finite operands: " + node_text + "\n";
    if (!inside.empty()) s += "  inside the region of " + inside + "\n";
  }
  if (ir_line) s += "  text IR line " + std::to_string(ir_line) + ": " + ir_line_text + "\n";
  if (loc.known()) {
    s += "  at " + to_string(loc);
    if (!differentiating.empty()) s += ", while differentiating " + differentiating;
    else if (role == ir::Role::update) s += " (the optimizer update)";
    s += "\n";
  }
  s += "  result    " + result.text() + "\n";
  for (std::size_t k = 0; k < operands.size(); ++k)
    s += "  operand " + std::to_string(k) + " " + operands[k].text() + "\n";
  if (!hint.empty()) s += "  hint: " + hint + "\n";
  if (!executor.empty()) s += "  (found by the " + executor + " with numerics checks on)\n";
  return s;
}

bool NumericsReport::same_root_cause(const NumericsReport& o) const {
  auto positions = [](const ValueStats& v) {
    std::vector<std::vector<std::int64_t>> p;
    for (auto& [idx, x] : v.shown) p.push_back(idx);
    return p;
  };
  auto bad = [](const ValueStats& v) { return std::tuple(v.type, v.nan, v.pos_inf, v.neg_inf); };
  if (std::tie(node, op, input_name, node_text, ir_line, ir_line_text, role, differentiating, inside, first_use, hint) !=
          std::tie(o.node, o.op, o.input_name, o.node_text, o.ir_line, o.ir_line_text, o.role, o.differentiating, o.inside,
                   o.first_use, o.hint) ||
      !(loc == o.loc) || bad(result) != bad(o.result) || positions(result) != positions(o.result) ||
      operands.size() != o.operands.size())
    return false;
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (bad(operands[k]) != bad(o.operands[k])) return false;
  return true;
}

NumericsError::NumericsError(NumericsReport r) : UserError(r.text(), r.loc), report_(std::move(r)) {}

namespace rt::glassbox {

namespace {

template <class Bits>
bool finite_bits(const Bits* p, std::int64_t n, Bits mask) {
  Bits any = 0;  // branch-free so the loop vectorises: exponent all ones is inf or NaN
  for (std::int64_t i = 0; i < n; ++i) any |= static_cast<Bits>((p[i] & mask) == mask);
  return any == 0;
}

double element(const Array& a, std::int64_t i) {
  return visit_dtype(a.dtype(), [&](auto tag) -> double { return static_cast<double>(a.data<typename decltype(tag)::type>()[i]); });
}

std::vector<std::int64_t> unravel(const Shape& s, std::int64_t flat) {
  std::vector<std::int64_t> idx(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return idx;
}

constexpr std::size_t kShown = 3;

// Stats of `a`; `at`: flat positions to show (empty: pick by the rules in ValueStats).
ValueStats stats(const std::string& name, const Array& a, const std::vector<std::int64_t>& at) {
  ValueStats st;
  st.name = name;
  st.type = a.type();
  const std::int64_t n = a.numel();
  double sum = 0;
  std::int64_t finite = 0;
  std::vector<std::int64_t> bad, big;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = element(a, i);
    if (std::isnan(v)) ++st.nan;
    else if (std::isinf(v)) (v > 0 ? st.pos_inf : st.neg_inf)++;
    if (!std::isfinite(v)) {
      if (bad.size() < kShown) bad.push_back(i);
      continue;
    }
    st.zero += v == 0;
    st.negative += v < 0;
    st.min = finite ? std::min(st.min, v) : v;
    st.max = finite ? std::max(st.max, v) : v;
    sum += v;
    ++finite;
    // The largest |x| (kept sorted, at most kShown).
    auto pos = big.begin();
    while (pos != big.end() && std::abs(element(a, *pos)) >= std::abs(v)) ++pos;
    if (static_cast<std::size_t>(pos - big.begin()) < kShown) {
      big.insert(pos, i);
      if (big.size() > kShown) big.pop_back();
    }
  }
  st.mean = finite ? sum / static_cast<double>(finite) : 0;
  const std::vector<std::int64_t>& pick = !at.empty() ? at : !bad.empty() ? bad : big;
  for (std::int64_t i : pick) st.shown.emplace_back(unravel(a.shape(), i), element(a, i));
  return st;
}

std::vector<std::int64_t> nonfinite_positions(const Array& a) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < a.numel() && out.size() < kShown; ++i)
    if (!std::isfinite(element(a, i))) out.push_back(i);
  return out;
}

// Value names as the text IR prints them for `roots` (inputs by name, the rest numbered
// in order), so the report reads like the line it cites.
using Names = std::vector<std::string>;
Names printed_names(const ir::Graph& g, std::span<const ir::NodeId> roots) {
  const std::vector<bool> live = g.reachable_from(roots);
  Names names(g.size());
  std::size_t counter = g.inputs().size();
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) names[id] = "%" + ir::name_token(n.name);
    else names[id] = live[id] ? "%" + std::to_string(counter++) : ir::value_name(g, id);
  }
  return names;
}

std::string describe(const ir::Graph& g, const Names& names, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  std::string s = names[id] + " = " + n.op_name() + "(";
  for (std::size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", " : "") + names[n.inputs[k]];
  return s + ") : " + to_string(n.type);
}

// An adjoint node carries its forward node's line: name the forward op written there.
std::string forward_at(const ir::Graph& g, const Names& names, const SourceLoc& loc) {
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& f = g.node(id);
    if (f.kind == ir::NodeKind::op && f.role == ir::Role::forward && f.loc == loc) return describe(g, names, id);
  }
  return "the forward code on that line";
}

// The region of a node whose single region computes the node from its operands (a fused
// node): re-run op by op with checks on. Returns the inner error, if it reproduces.
bool rerun_region(const ir::Node& n, std::span<const Array> in, NumericsReport& inner) {
  if (n.regions.size() != 1) return false;
  const ir::Graph& body = *n.regions[0];
  if (body.inputs().size() != in.size() || body.outputs.size() != 1 || body.node(body.outputs[0]).type != n.type)
    return false;
  std::vector<const Array*> ptrs;
  for (auto& a : in) ptrs.push_back(&a);
  try {
    rt::compile(body, body.outputs, {}, Backend::interpreter, Checks{.numerics = true}).run_by_position(ptrs);
  } catch (const NumericsError& e) {
    inner = e.report();
    return inner.input_name.empty();
  }
  return false;
}

}  // namespace

bool all_finite(DType dt, const void* data, std::int64_t n) {
  switch (dt) {
    case DType::f32: return finite_bits(static_cast<const std::uint32_t*>(data), n, std::uint32_t{0x7f800000u});
    case DType::f64: return finite_bits(static_cast<const std::uint64_t*>(data), n, std::uint64_t{0x7ff0000000000000ull});
    default: return true;
  }
}

bool all_finite(const Array& a) { return all_finite(a.dtype(), a.raw(), a.numel()); }

bool numerics_from_env() {
  const char* v = std::getenv("MG_CHECK_NUMERICS");
  return v && *v && std::strcmp(v, "0") != 0;
}

std::pair<int, std::string> ir_line(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id) {
  const std::string text = ir::to_text(g, roots);
  // The printer numbers printed non-input values from the input count up, in id order.
  const std::vector<bool> live = g.reachable_from(roots);
  std::string want;
  if (g.node(id).kind == ir::NodeKind::input) {
    want = "graph(";
  } else {
    std::size_t k = g.inputs().size();
    for (ir::NodeId i = 0; i < id; ++i) k += g.node(i).kind != ir::NodeKind::input && live[i];
    want = "  %" + std::to_string(k) + " = ";
  }
  std::istringstream is(text);
  std::string line;
  for (int no = 1; std::getline(is, line); ++no)
    if (line.rfind(want, 0) == 0) return {no, line};
  return {0, ""};
}

NumericsReport in_region(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id, NumericsReport r) {
  const Names names = printed_names(g, roots);
  r.inside = describe(g, names, id) + (r.inside.empty() ? "" : ", in the region of " + r.inside);
  // A single region prints right below its node (a header line, then its values), so a
  // line of the region's own text is offset by the node's line.
  const int outer = ir_line(g, roots, id).first;
  r.ir_line = outer && r.ir_line && g.node(id).regions.size() == 1 ? outer + r.ir_line : 0;
  r.ir_line_text.clear();
  std::istringstream text(ir::to_text(g, roots));
  for (int no = 1; no <= r.ir_line && std::getline(text, r.ir_line_text); ++no) {
  }
  if (r.role == ir::Role::adjoint || r.role == ir::Role::second_order) r.differentiating = forward_at(g, names, r.loc);
  return r;
}

void raise_nonfinite(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id, std::span<const Array> in,
                     std::span<const ir::NodeId> source, const Array& out, const char* executor) {
  const ir::Node& n = g.node(id);
  const Names names = printed_names(g, roots);
  NumericsReport r;
  r.executor = executor;
  // A non-finite operand was not made by an op (every op's value is checked when made):
  // it is a graph input or a constant. Report that value, read by this node.
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ir::Node& s = g.node(source[k]);
    if (s.kind == ir::NodeKind::op || all_finite(in[k])) continue;
    r.node = s.id;
    r.op = s.op_name();
    r.input_name = s.kind == ir::NodeKind::input ? s.name : names[s.id];
    r.node_text = describe(g, names, s.id);
    std::tie(r.ir_line, r.ir_line_text) = ir_line(g, roots, s.id);
    r.loc = s.loc;
    r.first_use = describe(g, names, id) + (n.loc.known() ? " at " + to_string(n.loc) : "");
    r.result = stats(names[s.id], in[k], {});
    throw NumericsError(std::move(r));
  }
  std::tie(r.ir_line, r.ir_line_text) = ir_line(g, roots, id);
  NumericsReport inner;
  if (rerun_region(n, in, inner)) {  // the op inside the region that made it
    inner.executor = executor;
    throw NumericsError(in_region(g, roots, id, std::move(inner)));
  }
  r.node = id;
  r.op = n.op_name();
  r.node_text = describe(g, names, id);
  r.loc = n.loc;
  r.role = n.role;
  if (n.role == ir::Role::adjoint || n.role == ir::Role::second_order) r.differentiating = forward_at(g, names, n.loc);
  const std::vector<std::int64_t> bad = nonfinite_positions(out);
  r.result = stats(names[id], out, bad);
  for (std::size_t k = 0; k < in.size(); ++k)
    r.operands.push_back(stats(names[n.inputs[k]], in[k], in[k].numel() == out.numel() ? bad : std::vector<std::int64_t>{}));
  r.hint = n.op ? n.op->numerics_hint : "";
  throw NumericsError(std::move(r));
}

}  // namespace rt::glassbox
}  // namespace mg
