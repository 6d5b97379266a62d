// First-NaN root cause: the scan, the statistics and the report (numerics.hpp). Runs only
// on the error path, except all_finite, which checking executors call once per value.
#include "minigrad/runtime/glassbox/numerics.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
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
  if (region_path != o.region_path ||
      std::tie(node, op, input_name, node_text, ir_line, ir_line_text, role, differentiating, inside, first_use, hint) !=
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
// in order), so the report reads like the line it cites. No roots: a region, printed whole.
using Names = std::vector<std::string>;
Names printed_names(const ir::Graph& g, std::span<const ir::NodeId> roots) {
  const std::vector<bool> live = roots.empty() ? std::vector<bool>(g.size(), true) : g.reachable_from(roots);
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

// An adjoint node carries its forward node's line: name the forward op written there
// (in the graph, else in a region: a loop body's adjoint differentiates the forward body).
std::string forward_at(const ir::Graph& g, std::span<const ir::NodeId> roots, const SourceLoc& loc) {
  std::function<std::string(const ir::Graph&, const Names&)> search = [&](const ir::Graph& G, const Names& names) {
    for (ir::NodeId id = 0; id < G.size(); ++id) {
      const ir::Node& f = G.node(id);
      if (f.kind == ir::NodeKind::op && f.role == ir::Role::forward && f.loc == loc) return describe(G, names, id);
    }
    for (ir::NodeId id = 0; id < G.size(); ++id)
      for (const auto& region : G.node(id).regions) {
        std::string found = search(*region, printed_names(*region, {}));
        if (!found.empty()) return found;
      }
    return std::string();
  };
  std::string found = search(g, printed_names(g, roots));
  return found.empty() ? "the forward code on that line" : found;
}

// Lines a region takes in the text IR (printed whole, under its node): the header, each
// value with its own regions, `return`, `}`.
int region_lines(const ir::Graph& r) {
  int n = 3;
  for (ir::NodeId id = 0; id < r.size(); ++id) {
    const ir::Node& x = r.node(id);
    if (x.kind == ir::NodeKind::input) continue;
    n += 1;
    for (const auto& sub : x.regions) n += region_lines(*sub);
  }
  return n;
}

// The line of node `id` of a region whose header is on line `header`.
int region_node_line(int header, const ir::Graph& r, ir::NodeId id) {
  if (r.node(id).kind == ir::NodeKind::input) return header;
  int line = header + 1;
  for (ir::NodeId x = 0; x < id; ++x) {
    const ir::Node& n = r.node(x);
    if (n.kind == ir::NodeKind::input) continue;
    line += 1;
    for (const auto& sub : n.regions) line += region_lines(*sub);
  }
  return line;
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

NumericsReport locate(const ir::Graph& g, std::span<const ir::NodeId> roots, NumericsReport r) {
  const ir::Graph* G = &g;
  Names names = printed_names(g, roots);
  int header = 0;  // the current region's header line (0: the top-level graph)
  std::vector<std::string> levels;
  for (const RegionStep& st : r.region_path) {
    const ir::Node& L = G->node(st.node);
    std::string d = describe(*G, names, st.node);
    if (st.iteration >= 0)
      d += " (region " + std::to_string(st.region) + ", iteration " + std::to_string(st.iteration) + ")";
    levels.push_back(std::move(d));
    const int at = header ? region_node_line(header, *G, st.node) : ir_line(g, roots, st.node).first;
    header = at ? at + 1 : 0;  // regions print right below their node, in order
    for (std::size_t q = 0; header && q < st.region; ++q) header += region_lines(*L.regions[q]);
    G = L.regions.at(st.region).get();
    names = printed_names(*G, {});
    if (!header) break;  // not printed (cannot happen for a node the run computed)
  }
  const ir::Node& n = G->node(r.node);
  r.ir_line = r.region_path.empty() ? ir_line(g, roots, r.node).first : header ? region_node_line(header, *G, r.node) : 0;
  r.ir_line_text.clear();
  std::istringstream text(ir::to_text(g, roots));
  for (int no = 1; no <= r.ir_line && std::getline(text, r.ir_line_text); ++no) {
  }
  r.node_text = describe(*G, names, r.node);
  r.inside.clear();
  for (std::size_t k = levels.size(); k-- > 0;) r.inside += (r.inside.empty() ? "" : ", in the region of ") + levels[k];
  if (r.input_name.empty()) {
    r.differentiating = r.role == ir::Role::adjoint || r.role == ir::Role::second_order ? forward_at(g, roots, r.loc) : "";
    for (std::size_t k = 0; k < r.operands.size() && k < n.inputs.size(); ++k) r.operands[k].name = names[n.inputs[k]];
  } else {
    r.input_name = n.kind == ir::NodeKind::input ? n.name : names[r.node];
  }
  r.result.name = names[r.node];
  return r;
}

namespace {

// A non-finite operand was not made by an op (every op's value is checked when made): it
// is a graph input or a constant. Raises the report of that value, read by node `id`.
void raise_bad_operand(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id,
                       std::span<const Array> in, std::span<const ir::NodeId> source, const char* executor) {
  const ir::Node& n = g.node(id);
  const Names names = printed_names(g, roots);
  NumericsReport r;
  r.executor = executor;
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
}

}  // namespace

void raise_in_region(const ir::Graph& g, std::span<const ir::NodeId> roots, RegionStep step, NumericsReport r,
                     std::span<const Array> in, std::span<const ir::NodeId> source) {
  // A region's parameter holds NaN/Inf: it came in through the node's operands, from a
  // graph input or constant (an op's value would have been caught when made).
  if (!r.input_name.empty() && r.region_path.empty()) raise_bad_operand(g, roots, step.node, in, source, r.executor.c_str());
  r.region_path.insert(r.region_path.begin(), step);
  throw NumericsError(locate(g, roots, std::move(r)));
}

void rerun_regions_checked(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id,
                           std::span<const Array> in, std::span<const ir::NodeId> source, const char* executor) {
  const ir::Node& n = g.node(id);
  if (n.regions.empty() || !n.op || !n.op->runs_regions) return;
  std::vector<std::unique_ptr<rt::Executable>> exes(n.regions.size());
  std::vector<std::int64_t> calls(n.regions.size(), 0);
  const ir::RegionRunner runner = [&](std::size_t r, std::span<const Array> args) -> std::vector<Array> {
    const ir::Graph& body = *n.regions.at(r);
    if (!exes[r])
      exes[r] = std::make_unique<rt::Executable>(
          rt::compile(body, body.outputs, {}, Backend::interpreter, Checks{.numerics = true}));
    const std::int64_t iteration = calls[r]++;
    std::vector<const Array*> ptrs;
    for (const Array& a : args) ptrs.push_back(&a);
    try {
      return exes[r]->run_by_position(ptrs);
    } catch (const NumericsError& e) {
      NumericsReport inner = e.report();
      inner.executor = executor;
      raise_in_region(g, roots, RegionStep{id, r, iteration}, std::move(inner), in, source);
    }
  };
  std::vector<const Array*> ptrs;
  for (const Array& a : in) ptrs.push_back(&a);
  Array out(n.type);
  n.op->kernel(ir::KernelArgs{ptrs, n, out, &runner});
}

void raise_nonfinite(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id, std::span<const Array> in,
                     std::span<const ir::NodeId> source, const Array& out, const char* executor) {
  const ir::Node& n = g.node(id);
  const Names names = printed_names(g, roots);
  raise_bad_operand(g, roots, id, in, source, executor);
  NumericsReport r;
  r.executor = executor;
  NumericsReport inner;
  if (rerun_region(n, in, inner)) {  // the op inside the fused region that made it
    inner.executor = executor;
    raise_in_region(g, roots, RegionStep{id, 0, -1}, std::move(inner), in, source);
  }
  // A loop's value: the root is inside its body (a step's check would have named it).
  rerun_regions_checked(g, roots, id, in, source, executor);
  std::tie(r.ir_line, r.ir_line_text) = ir_line(g, roots, id);
  r.node = id;
  r.op = n.op_name();
  r.node_text = describe(g, names, id);
  r.loc = n.loc;
  r.role = n.role;
  if (n.role == ir::Role::adjoint || n.role == ir::Role::second_order) r.differentiating = forward_at(g, roots, n.loc);
  const std::vector<std::int64_t> bad = nonfinite_positions(out);
  r.result = stats(names[id], out, bad);
  for (std::size_t k = 0; k < in.size(); ++k)
    r.operands.push_back(stats(names[n.inputs[k]], in[k], in[k].numel() == out.numel() ? bad : std::vector<std::int64_t>{}));
  r.hint = n.op ? n.op->numerics_hint : "";
  throw NumericsError(std::move(r));
}

}  // namespace rt::glassbox
}  // namespace mg
