// The ASCII graph view; see ascii_view.hpp.
#include "minigrad/runtime/glassbox/ascii_view.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg::rt::glassbox {

namespace {

const char* role_title(ir::Role r) {
  switch (r) {
    case ir::Role::forward: return "forward";
    case ir::Role::adjoint: return "backward (grad)";
    case ir::Role::second_order: return "second-order backward (grad2)";
    case ir::Role::update: return "optimizer update";
  }
  return "";
}

std::string_view basename(const char* path) {
  std::string_view p(path);
  const auto slash = p.find_last_of('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

struct Line {
  ir::Role role;
  std::string name, what, type, where, note;
  std::vector<std::string> region;  // expanded fused region, already formatted
  std::string op;                   // for the elision summary
};

// Names as the text IR prints them: inputs by name, other values numbered in order.
std::vector<std::string> value_names(const ir::Graph& g, const std::vector<bool>& live) {
  std::vector<std::string> names(g.size());
  std::size_t counter = g.inputs().size();
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) names[id] = "%" + ir::name_token(n.name);
    else if (live.empty() || live[id]) names[id] = "%" + std::to_string(counter++);
  }
  return names;
}

std::string constant_text(const ir::Node& n) {
  const Array& a = *n.literal;
  if (a.numel() == 0) return "constant []";
  const double v0 = a.at(0);
  for (std::int64_t i = 1; i < a.numel(); ++i)
    if (a.at(i) != v0) return "constant [" + std::to_string(a.numel()) + " values]";
  return "constant " + ir::format_f64(v0);
}

std::string operands(const ir::Node& n, const std::vector<std::string>& names) {
  std::string s = "(";
  for (std::size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", " : "") + names[n.inputs[k]];
  return s + ")";
}

Line line_of(const ir::Graph& g, ir::NodeId id, const std::vector<std::string>& names, const AsciiViewOptions& opts) {
  const ir::Node& n = g.node(id);
  Line l{n.role, names[id], "", to_string(n.type), "", "", {}, n.op_name()};
  if (opts.locations && n.loc.known()) l.where = std::string(basename(n.loc.file)) + ":" + std::to_string(n.loc.line);
  if (n.kind == ir::NodeKind::constant) {
    l.what = constant_text(n);
    return l;
  }
  l.what = n.op_name();
  if (n.attrs.has("kind") && !n.regions.empty()) l.what += "<" + n.attrs.str("kind") + ">";
  l.what += operands(n, names);
  if (n.inputs.empty() && !n.attrs.items().empty()) {  // a creation op: what it makes
    std::string a;
    for (auto& [k, v] : n.attrs.items())
      if (k != "dtype" && k != "shape") a += (a.empty() ? "" : ", ") + k + "=" + ir::format_attr(v);
    if (!a.empty()) l.what.insert(l.what.size() - 1, a);  // inside the "()"
  }
  for (const auto& region : n.regions) {
    const ir::Graph& body = *region;
    if (!opts.expand_fused) {  // collapsed: the ops it runs, in order
      std::string ops;
      for (ir::NodeId b = 0; b < body.size(); ++b)
        if (body.node(b).kind == ir::NodeKind::op) ops += (ops.empty() ? "" : " ") + body.node(b).op_name();
      l.what += " [" + ops + "]";
      continue;
    }
    const std::vector<std::string> bnames = value_names(body, {});
    for (ir::NodeId b = 0; b < body.size(); ++b) {
      const ir::Node& bn = body.node(b);
      // A region parameter is the node's operand of the same position.
      std::size_t param = 0;
      while (param < body.inputs().size() && body.inputs()[param] != b) ++param;
      std::string s = bnames[b] + " = " + (bn.kind == ir::NodeKind::input ? (param < n.inputs.size() ? names[n.inputs[param]] : "?") :
                                           bn.kind == ir::NodeKind::constant ? constant_text(bn) :
                                           bn.op_name() + operands(bn, bnames));
      s += " : " + to_string(bn.type);
      if (opts.locations && bn.loc.known()) s += "  " + std::string(basename(bn.loc.file)) + ":" + std::to_string(bn.loc.line);
      l.region.push_back(s);
    }
  }
  return l;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

}  // namespace

std::string ascii_view(const ir::Graph& g, std::span<const ir::NodeId> outputs, const AsciiViewOptions& opts) {
  const std::vector<ir::NodeId> outs = outputs.empty() ? g.outputs : std::vector<ir::NodeId>(outputs.begin(), outputs.end());
  const std::vector<bool> live = g.reachable_from(outs);
  const std::vector<std::string> names = value_names(g, live);
  const bool own_names = outputs.empty() || std::equal(outs.begin(), outs.end(), g.outputs.begin(), g.outputs.end());

  std::vector<Line> inputs, values;
  std::map<ir::Role, std::size_t> per_role;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) {
      if (live[id]) inputs.push_back(line_of(g, id, names, opts));
      continue;
    }
    if (!live[id]) continue;
    values.push_back(line_of(g, id, names, opts));
    ++per_role[n.role];
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (outs[k] != id) continue;
      std::string out = own_names && k < g.output_names.size() && !g.output_names[k].empty() ? g.output_names[k]
                                                                                               : "out" + std::to_string(k);
      values.back().note += (values.back().note.empty() ? "=> " : ", ") + out;
    }
  }

  // Which value lines are shown: all, or the first and last halves of max_lines.
  const std::size_t total = values.size();
  std::size_t head = total, tail = 0;
  if (opts.max_lines && total > opts.max_lines) {
    head = opts.max_lines / 2;
    tail = opts.max_lines - head;
  }
  std::size_t wname = 0, wwhat = 0, wtype = 0;
  auto measure = [&](const Line& l) {
    wname = std::max(wname, l.name.size());
    wwhat = std::max(wwhat, l.what.size());
    wtype = std::max(wtype, l.type.size());
  };
  for (auto& l : inputs) measure(l);
  for (std::size_t i = 0; i < total; ++i)
    if (i < head || i >= total - tail) measure(values[i]);
  wwhat = std::min<std::size_t>(wwhat, 48);  // a long fused op list does not push every column

  auto count = [](std::size_t k, const char* what) { return std::to_string(k) + " " + what + (k == 1 ? "" : "s"); };
  std::string s = "graph: " + count(inputs.size(), "input") + ", " + count(total, "value") + ", " + count(outs.size(), "output");
  std::string roles;
  for (auto& [r, c] : per_role) roles += (roles.empty() ? "" : ", ") + std::string(role_title(r)) + " " + std::to_string(c);
  s += (roles.empty() ? "" : " (" + roles + ")") + "\n";
  auto emit = [&](const Line& l) {
    std::string row = "  " + pad(l.name, wname) + "  " + pad(l.what, wwhat) + "  " + pad(l.type, wtype);
    if (!l.where.empty()) row += "  " + l.where;
    if (!l.note.empty()) row += "  " + l.note;
    while (!row.empty() && row.back() == ' ') row.pop_back();
    s += row + "\n";
    for (auto& r : l.region) s += "  " + std::string(wname, ' ') + "  | " + r + "\n";
  };
  if (!inputs.empty()) {
    s += "inputs\n";
    for (auto& l : inputs) {
      Line shown = l;
      shown.what = "input";
      emit(shown);
    }
  }
  bool have_role = false;
  ir::Role role = ir::Role::forward;
  for (std::size_t i = 0; i < total; ++i) {
    if (i == head && tail != 0) {  // the elided middle: how many values, and of which ops
      std::map<std::string, std::size_t> count;
      for (std::size_t j = head; j < total - tail; ++j) ++count[values[j].op];
      std::vector<std::pair<std::size_t, std::string>> by;
      for (auto& [op, c] : count) by.emplace_back(c, op);
      std::stable_sort(by.begin(), by.end(), [](auto& a, auto& b) { return a.first > b.first; });
      std::string ops;
      for (std::size_t j = 0; j < by.size() && j < 6; ++j)
        ops += (j ? ", " : "") + std::to_string(by[j].first) + " " + by[j].second;
      if (by.size() > 6) ops += ", ...";
      s += "  ... " + std::to_string(total - tail - head) + " values elided (" + ops + ") ...\n";
      // Re-title the tail's block unless the elided values were all of the last role.
      for (std::size_t j = head; j < total - tail; ++j) have_role = have_role && values[j].role == role;
      i = total - tail;
    }
    if (!have_role || values[i].role != role) {
      role = values[i].role;
      have_role = true;
      s += std::string(role_title(role)) + "\n";
    }
    emit(values[i]);
  }
  return s;
}

}  // namespace mg::rt::glassbox
