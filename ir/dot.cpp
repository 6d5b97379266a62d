// DOT output; see dot.hpp. Nodes are declared inside their cluster (backward, region) and
// every edge is written once at the top level after all nodes, so an edge never pulls a
// node into the wrong cluster.
#include "minigrad/ir/dot.hpp"

#include <sstream>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg::ir {

namespace {

// Colours: forward ops plain, adjoint ops and the backward cluster orange, inputs blue,
// constants grey, outputs green.
constexpr std::string_view kNodeDefaults =
    R"~(node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#34495e", )~"
    R"~(fontname="Helvetica", fontsize=10];)~";
constexpr std::string_view kAdjointStyle = R"~(fillcolor="#fdebd0", color="#ca6f1e")~";
constexpr std::string_view kInputStyle = R"~(shape=ellipse, fillcolor="#d6eaf8", color="#2e86c1")~";
constexpr std::string_view kConstantStyle = R"~(shape=note, style=filled, fillcolor="#eaecee", color="#7f8c8d")~";
constexpr std::string_view kOutputStyle = R"~(peripheries=2, penwidth=1.5, fillcolor="#d5f5e3", color="#1e8449")~";
constexpr std::string_view kBackwardCluster =
    R"~(label="backward (adjoint)"; style="rounded,filled"; fillcolor="#fef5e7"; color="#e59866"; )~"
    R"~(fontcolor="#a04000";)~";
constexpr std::string_view kRegionCluster = R"~(style="rounded,dashed"; color="#7d3c98"; fontcolor="#7d3c98";)~";

// Length of the valid UTF-8 sequence starting at s[i], 0 if it is not valid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) >> 6) != 0x2) return 0;
  return n;
}

std::string cut(std::string s, std::size_t max) {
  if (max >= 4 && s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

// A constant's value: one number for a splat (all elements equal), else the first few.
std::string short_literal(const Array& a, std::size_t max_chars) {
  std::ostringstream os;
  const std::int64_t n = a.numel();
  bool splat = n > 0;
  for (std::int64_t i = 1; i < n && splat; ++i) splat = a.at(i) == a.at(0);
  if (a.rank() == 0 || splat) {
    os << a.at(0);
  } else {
    os << "[";
    const std::int64_t shown = std::min<std::int64_t>(n, 4);
    for (std::int64_t i = 0; i < shown; ++i) os << (i ? ", " : "") << a.at(i);
    if (n > shown) os << ", ...";
    os << "]";
  }
  return cut(os.str(), max_chars);
}

std::string_view basename(const char* path) {
  std::string_view p(path);
  std::size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

class DotWriter {
 public:
  explicit DotWriter(const DotOptions& opts) : opts_(opts) {}

  std::string run(const Graph& g, std::span<const NodeId> outputs) {
    out_ << "digraph minigrad {\n";
    out_ << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, labelloc=t";
    if (!opts_.title.empty()) out_ << ", label=" << dot_quote(opts_.title);
    out_ << "];\n  " << kNodeDefaults << "\n";
    out_ << "  edge [color=\"#566573\", arrowsize=0.7, fontname=\"Helvetica\", fontsize=8];\n";
    std::vector<std::string> names;
    if (outputs.empty()) {
      outputs = g.outputs;
      names = g.output_names;
    } else {
      // Explicit outputs take their names from g.outputs where they appear there.
      for (NodeId o : outputs) {
        std::string name;
        for (std::size_t i = 0; i < g.outputs.size() && i < g.output_names.size(); ++i)
          if (g.outputs[i] == o) name = g.output_names[i];
        names.push_back(name);
      }
    }
    emit_graph(g, outputs, names, "", "out", "  ");  // "out<i>", as the printer names them
    out_ << edges_.str() << "}\n";
    return out_.str();
  }

 private:
  // Emits the nodes of `g` (ids prefixed by `prefix`) at this nesting level, adjoint nodes
  // in a backward cluster, each node's regions in clusters right after it.
  void emit_graph(const Graph& g, std::span<const NodeId> outputs, std::span<const std::string> names,
                  const std::string& prefix, const std::string& default_name, const std::string& indent) {
    std::vector<bool> live;
    if (opts_.only_live && !outputs.empty()) live = g.reachable_from(outputs);
    auto is_live = [&](NodeId id) { return live.empty() || live[id]; };

    std::vector<std::string> out_label(g.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      std::string name = i < names.size() && !names[i].empty() ? names[i] : default_name + std::to_string(i);
      std::string& l = out_label.at(outputs[i]);
      l += (l.empty() ? "-> " : ", ") + name;
    }

    bool any_adjoint = false;
    for (NodeId id = 0; id < g.size(); ++id) {
      const Node& n = g.node(id);
      if (!is_live(id)) continue;
      if (n.role == Role::adjoint) {
        any_adjoint = true;
        continue;
      }
      emit_node(n, prefix, out_label[id], indent);
    }
    if (any_adjoint) {
      out_ << indent << "subgraph " << dot_quote("cluster_" + prefix + "backward") << " {\n"
           << indent << "  " << kBackwardCluster << "\n";
      for (NodeId id = 0; id < g.size(); ++id)
        if (is_live(id) && g.node(id).role == Role::adjoint)
          emit_node(g.node(id), prefix, out_label[id], indent + "  ");
      out_ << indent << "}\n";
    }
    for (NodeId id = 0; id < g.size(); ++id) {
      const Node& n = g.node(id);
      if (!is_live(id)) continue;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        edges_ << "  " << node_id(prefix, n.inputs[k]) << " -> " << node_id(prefix, id);
        std::vector<std::string> attrs;
        if (n.inputs.size() > 1 && !(n.op && n.op->traits.commutative))
          attrs.push_back("label=" + dot_quote(std::to_string(k)));
        if (n.role == Role::adjoint) attrs.push_back("color=\"#ca6f1e\"");
        emit_edge_attrs(attrs);
      }
    }
  }

  void emit_node(const Node& n, const std::string& prefix, const std::string& out_label,
                 const std::string& indent) {
    std::string label;
    std::string style;
    switch (n.kind) {
      case NodeKind::input:
        label = n.name;
        style = kInputStyle;
        break;
      case NodeKind::constant:
        label = "const " + (n.literal ? short_literal(*n.literal, opts_.attr_chars) : std::string("?"));
        style = kConstantStyle;
        break;
      case NodeKind::op:
        label = n.op_name();
        if (!n.attrs.items().empty()) {
          std::string a;
          for (const auto& [k, v] : n.attrs.items())
            a += (a.empty() ? "" : ", ") + k + "=" + cut(format_attr(v), opts_.attr_chars);
          label += "\n{" + a + "}";
        }
        if (n.role == Role::adjoint) style = kAdjointStyle;
        break;
    }
    label += "\n" + to_string(n.type);
    if (opts_.locations && n.loc.known())
      label += "\n" + std::string(basename(n.loc.file)) + ":" + std::to_string(n.loc.line);
    if (!out_label.empty()) {
      label += "\n" + out_label;
      style += std::string(style.empty() ? "" : ", ") + std::string(kOutputStyle);
    }
    out_ << indent << node_id(prefix, n.id) << " [label=" << dot_quote(label);
    if (!style.empty()) out_ << ", " << style;
    out_ << "];\n";

    for (std::size_t r = 0; r < n.regions.size(); ++r) {
      const Graph& body = *n.regions[r];
      const std::string sub = prefix + "n" + std::to_string(n.id) + "r" + std::to_string(r) + "_";
      out_ << indent << "subgraph " << dot_quote("cluster_" + sub) << " {\n"
           << indent << "  label=" << dot_quote(n.op_name() + " region " + std::to_string(r) + " of " +
                                                node_id(prefix, n.id))
           << "; " << kRegionCluster << "\n";
      emit_graph(body, body.outputs, body.output_names, sub, "result ", indent + "  ");
      out_ << indent << "}\n";
      // Region results flow into the op that owns the region.
      for (NodeId res : body.outputs) {
        edges_ << "  " << node_id(sub, res) << " -> " << node_id(prefix, n.id);
        emit_edge_attrs({"style=dashed", "color=\"#7d3c98\""});
      }
    }
  }

  void emit_edge_attrs(const std::vector<std::string>& attrs) {
    if (!attrs.empty()) {
      edges_ << " [";
      for (std::size_t i = 0; i < attrs.size(); ++i) edges_ << (i ? ", " : "") << attrs[i];
      edges_ << "]";
    }
    edges_ << ";\n";
  }

  static std::string node_id(const std::string& prefix, NodeId id) {
    return prefix + "n" + std::to_string(id);
  }

  const DotOptions& opts_;
  std::ostringstream out_;
  std::ostringstream edges_;
};

}  // namespace

std::string dot_quote(std::string_view s) {
  std::string q = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const std::size_t len = utf8_length(s, i);
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (c == '\n') {
      q += "\\n";
    } else if (len == 0) {
      q += '?';  // a byte that is not valid UTF-8: Graphviz would reject the label
      i += 1;
      continue;
    } else if (len == 1 && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)) {
      // other control characters are dropped
    } else {
      q.append(s.substr(i, len));
    }
    i += len == 0 ? 1 : len;
  }
  q += '"';
  return q;
}

std::string to_dot(const Graph& g, std::span<const NodeId> outputs, DotOptions opts) {
  return DotWriter(opts).run(g, outputs);
}

}  // namespace mg::ir
