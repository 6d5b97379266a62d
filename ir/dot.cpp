// DOT output; see dot.hpp. Nodes are declared inside their cluster (role, module, region) and
// every edge is written once at the top level after all nodes, so an edge never pulls a
// node into the wrong cluster.
#include "minigrad/ir/dot.hpp"

#include <algorithm>
#include <climits>
#include <array>
#include <map>
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
constexpr std::string_view kSecondOrderStyle = R"~(fillcolor="#fadbd8", color="#b03a2e")~";
constexpr std::string_view kUpdateStyle = R"~(fillcolor="#d1f2eb", color="#117a65")~";
constexpr std::string_view kForwardCluster =
    R"~(label="forward"; style="rounded"; color="#aab7b8"; fontcolor="#34495e";)~";
constexpr std::string_view kSecondOrderCluster =
    R"~(label="second-order backward (grad of grad)"; style="rounded,filled"; fillcolor="#fdedec"; )~"
    R"~(color="#cd6155"; fontcolor="#943126";)~";
constexpr std::string_view kUpdateCluster =
    R"~(label="optimizer update"; style="rounded,filled"; fillcolor="#e8f8f5"; color="#48c9b0"; )~"
    R"~(fontcolor="#0e6251";)~";
constexpr std::string_view kModuleCluster = R"~(style="rounded,bold"; color="#5d6d7e"; fontcolor="#2c3e50";)~";
constexpr std::string_view kRegionCluster = R"~(style="rounded,dashed"; color="#7d3c98"; fontcolor="#7d3c98";)~";

constexpr std::size_t kNoBox = ~std::size_t{0};
constexpr std::array<Role, 4> kRoles{Role::forward, Role::adjoint, Role::second_order, Role::update};

// Cluster name part, cluster style, node style and edge colour of each role, in one table.
struct RoleLook {
  std::string_view key, cluster, node, edge;
};
const RoleLook& look(Role r) {
  static const RoleLook forward{"forward", kForwardCluster, "", ""};
  static const RoleLook adjoint{"backward", kBackwardCluster, kAdjointStyle, R"~(color="#ca6f1e")~"};
  static const RoleLook second{"second_order", kSecondOrderCluster, kSecondOrderStyle, R"~(color="#b03a2e")~"};
  static const RoleLook update{"update", kUpdateCluster, kUpdateStyle, R"~(color="#117a65")~"};
  switch (r) {
    case Role::forward: return forward;
    case Role::adjoint: return adjoint;
    case Role::second_order: return second;
    case Role::update: return update;
  }
  return forward;
}
std::string_view role_key(Role r) { return look(r).key; }
std::string_view role_cluster_style(Role r) { return look(r).cluster; }
std::string_view role_node_style(Role r) { return look(r).node; }
std::string_view role_edge_color(Role r) { return look(r).edge; }
bool is_backward(Role r) { return r == Role::adjoint || r == Role::second_order; }

// "fc1.weight" -> "fc1", "optim.fc1.weight.m" -> "fc1", "x" and "optim.lr" -> "".
std::string module_of_input(std::string_view name) {
  if (name.starts_with("optim.")) {
    name.remove_prefix(6);
    const std::size_t slot = name.rfind('.');
    if (slot == std::string_view::npos) return "";
    name = name.substr(0, slot);
  }
  const std::size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? "" : std::string(name.substr(0, dot));
}

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
    if (opts_.collapse)
      emit_collapsed(g, outputs);
    else
      emit_graph(g, outputs, names, "", "out", "  ");  // "out<i>", as the printer names them
    out_ << edges_.str() << "}\n";
    return out_.str();
  }

 private:
  // Emits the nodes of `g` (ids prefixed by `prefix`) at this nesting level in role
  // clusters (none when every node is forward), each role's nodes in module clusters, each
  // node's regions in clusters right after it.
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

    const Clusters c = clusters_of(g, live);
    for (const RoleCluster& rc : c.roles) {
      std::string inner = indent;
      if (c.role_clusters) {
        out_ << indent << "subgraph " << dot_quote("cluster_" + prefix + std::string(role_key(rc.role))) << " {\n"
             << indent << "  " << role_cluster_style(rc.role) << "\n";
        inner += "  ";
      }
      for (NodeId id : rc.loose) emit_node(g.node(id), prefix, out_label[id], inner);
      for (const auto& [module, ids] : rc.modules) {
        out_ << inner << "subgraph " << dot_quote(module_cluster_name(prefix, rc.role, module)) << " {\n"
             << inner << "  label=" << dot_quote(module) << "; " << kModuleCluster << "\n";
        for (NodeId id : ids) emit_node(g.node(id), prefix, out_label[id], inner + "  ");
        out_ << inner << "}\n";
      }
      if (c.role_clusters) out_ << indent << "}\n";
    }
    for (NodeId id = 0; id < g.size(); ++id) {
      const Node& n = g.node(id);
      if (!is_live(id)) continue;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        edges_ << "  " << node_id(prefix, n.inputs[k]) << " -> " << node_id(prefix, id);
        std::vector<std::string> attrs;
        if (n.inputs.size() > 1 && !(n.op && n.op->traits.commutative))
          attrs.push_back("label=" + dot_quote(std::to_string(k)));
        if (n.role != Role::forward) attrs.push_back(std::string(role_edge_color(n.role)));
        emit_edge_attrs(attrs);
      }
    }
  }

  // One box per role/module cluster of the top-level graph, with its node count, inputs
  // and outputs; edges between boxes labelled with the number of IR edges they stand for.
  void emit_collapsed(const Graph& g, std::span<const NodeId> outputs) {
    std::vector<bool> live;
    if (opts_.only_live && !outputs.empty()) live = g.reachable_from(outputs);
    const Clusters c = clusters_of(g, live);
    std::vector<std::size_t> box(g.size(), kNoBox);
    std::vector<std::vector<NodeId>> members;
    auto add_box = [&](const std::vector<NodeId>& ids) {
      for (NodeId id : ids) box[id] = members.size();
      members.push_back(ids);
    };
    std::vector<bool> is_output(g.size(), false);
    for (NodeId o : outputs) is_output.at(o) = true;
    auto emit_box = [&](std::size_t b, const std::string& title, Role role, const std::string& indent) {
      std::size_t inputs = 0, outs = 0;
      for (NodeId id : members[b]) {
        inputs += g.node(id).kind == NodeKind::input;
        outs += is_output[id];
      }
      std::string label = title + "\n" + std::to_string(members[b].size()) + " nodes";
      if (inputs) label += ", " + std::to_string(inputs) + " inputs";
      if (outs) label += "\n-> " + std::to_string(outs) + (outs == 1 ? " output" : " outputs");
      std::string style(role_node_style(role));
      if (outs) style += std::string(style.empty() ? "" : ", ") + "peripheries=2, penwidth=1.5";
      out_ << indent << "c" << b << " [label=" << dot_quote(label) << (style.empty() ? "" : ", ") << style << "];\n";
    };
    for (const RoleCluster& rc : c.roles) {
      std::string inner = "  ";
      if (c.role_clusters) {
        out_ << "  subgraph " << dot_quote("cluster_" + std::string(role_key(rc.role))) << " {\n"
             << "    " << role_cluster_style(rc.role) << "\n";
        inner = "    ";
      }
      if (!rc.loose.empty()) {
        add_box(rc.loose);
        emit_box(members.size() - 1, rc.modules.empty() ? std::string(role_key(rc.role)) : "(no module)", rc.role,
                 inner);
      }
      for (const auto& [module, ids] : rc.modules) {
        add_box(ids);
        emit_box(members.size() - 1, module, rc.role, inner);
      }
      if (c.role_clusters) out_ << "  }\n";
    }
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> between;
    for (NodeId id = 0; id < g.size(); ++id) {
      if (box[id] == kNoBox) continue;
      for (NodeId in : g.node(id).inputs)
        if (box[in] != kNoBox && box[in] != box[id]) ++between[{box[in], box[id]}];
    }
    for (const auto& [edge, count] : between)
      edges_ << "  c" << edge.first << " -> c" << edge.second << " [label=" << dot_quote(std::to_string(count))
             << "];\n";
  }

  // The live nodes of a graph grouped by role (in ir::Role order) and, inside a role, by
  // module (in order of their first node); nodes without a module are `loose`.
  struct RoleCluster {
    Role role;
    std::vector<NodeId> loose;
    std::vector<std::pair<std::string, std::vector<NodeId>>> modules;
  };
  struct Clusters {
    std::vector<RoleCluster> roles;
    bool role_clusters = false;  // any role but forward present
  };
  Clusters clusters_of(const Graph& g, const std::vector<bool>& live) const {
    auto is_live = [&](NodeId id) { return live.empty() || live[id]; };
    const std::vector<std::string> module = opts_.modules ? node_modules(g, live) : std::vector<std::string>(g.size());
    Clusters c;
    for (Role r : kRoles) {
      RoleCluster rc{r, {}, {}};
      for (NodeId id = 0; id < g.size(); ++id) {
        if (!is_live(id) || g.node(id).role != r) continue;
        if (module[id].empty()) {
          rc.loose.push_back(id);
          continue;
        }
        auto it = std::find_if(rc.modules.begin(), rc.modules.end(), [&](auto& m) { return m.first == module[id]; });
        if (it == rc.modules.end()) rc.modules.push_back({module[id], {id}});
        else it->second.push_back(id);
      }
      if (rc.loose.empty() && rc.modules.empty()) continue;
      c.role_clusters = c.role_clusters || r != Role::forward;
      c.roles.push_back(std::move(rc));
    }
    return c;
  }

  static std::string module_cluster_name(const std::string& prefix, Role role, const std::string& module) {
    return "cluster_" + prefix + std::string(role_key(role)) + "_" + module;
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
        style = role_node_style(n.role);
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

std::vector<std::string> node_modules(const Graph& g, const std::vector<bool>& live) {
  auto is_live = [&](NodeId id) { return live.empty() || live[id]; };
  std::vector<std::string> names;  // module index -> name, in order of first input
  const std::size_t n = g.size();
  std::vector<int> mod(n, -1), direct(n, -1), operands(n, -1), feed_lo(n, INT_MAX), feed_hi(n, -1);
  for (NodeId id = 0; id < n; ++id) {
    const Node& node = g.node(id);
    if (node.kind == NodeKind::input) {
      const std::string m = module_of_input(node.name);
      if (m.empty()) continue;
      auto it = std::find(names.begin(), names.end(), m);
      mod[id] = static_cast<int>(it - names.begin());
      if (it == names.end()) names.push_back(m);
    } else if (node.kind == NodeKind::op) {
      for (NodeId in : node.inputs) {
        if (g.node(in).kind == NodeKind::input) direct[id] = std::max(direct[id], mod[in]);
        operands[id] = std::max(operands[id], mod[in]);
      }
      if (node.role == Role::forward) mod[id] = direct[id] >= 0 ? direct[id] : operands[id];
    }
  }
  // Backward and update nodes, consumers first: what they feed decides. A backward node
  // feeding several modules belongs to the latest (gradients flow from the last module to
  // the first); an update node feeding several (the step counter) to none.
  for (NodeId id = static_cast<NodeId>(n); id-- > 0;) {
    const Node& node = g.node(id);
    if (!is_live(id) || node.kind != NodeKind::op) continue;
    if (node.role != Role::forward) {
      int feed = -1;
      if (feed_hi[id] >= 0) feed = is_backward(node.role) || feed_lo[id] == feed_hi[id] ? feed_hi[id] : -1;
      const bool fed = feed_hi[id] >= 0 || feed_lo[id] != INT_MAX;
      mod[id] = direct[id] >= 0 ? direct[id] : fed ? feed : -2;  // -2: by operands, below
    }
    if (mod[id] == -2) continue;  // decided by its operands: feeds no module
    for (NodeId in : node.inputs) {
      if (g.node(in).kind != NodeKind::op || g.node(in).role == Role::forward) continue;
      feed_lo[in] = std::min(feed_lo[in], mod[id]);
      feed_hi[in] = std::max(feed_hi[in], mod[id]);
    }
  }
  // What feeds nothing (a gradient that is an output): the latest module among its operands.
  for (NodeId id = 0; id < n; ++id) {
    if (mod[id] != -2) continue;
    mod[id] = -1;
    for (NodeId in : g.node(id).inputs) mod[id] = std::max(mod[id], mod[in]);
  }
  std::vector<std::string> out(n);
  for (NodeId id = 0; id < n; ++id)
    if (mod[id] >= 0) out[id] = names[static_cast<std::size_t>(mod[id])];
  return out;
}

std::string to_dot(const Graph& g, std::span<const NodeId> outputs, DotOptions opts) {
  return DotWriter(opts).run(g, outputs);
}

}  // namespace mg::ir
