// The verifier; see verifier.hpp.
#include "minigrad/ir/verifier.hpp"

#include <set>
#include <sstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg::ir {

namespace {

[[noreturn]] void fail(const Graph& g, NodeId id, const std::string& what) {
  std::ostringstream os;
  os << "invalid IR at " << value_name(g, id) << " (" << g.node(id).op_name() << "): " << what
     << "\n  context:\n";
  NodeId lo = id >= 5 ? id - 5 : 0;
  for (NodeId i = lo; i < g.size() && i <= id + 5; ++i) {
    const Node& n = g.node(i);
    os << (i == id ? "  > " : "    ") << value_name(g, i) << " = " << n.op_name() << " : "
       << to_string(n.type) << "\n";
  }
  throw VerifyError(os.str(), g.node(id).loc);
}

void verify_graph(const Graph& g) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.id != id) fail(g, id, "node id does not match its position");
    for (NodeId in : n.inputs)
      if (in >= id) fail(g, id, "input " + std::to_string(in) + " is not defined before use");
    switch (n.kind) {
      case NodeKind::input:
        if (!n.inputs.empty()) fail(g, id, "graph input with operands");
        if (!names.insert(n.name).second) fail(g, id, "duplicate input name '" + n.name + "'");
        break;
      case NodeKind::constant:
        if (!n.literal) fail(g, id, "constant without a value");
        if (n.literal->type() != n.type) fail(g, id, "constant value type differs from node type");
        break;
      case NodeKind::op: {
        if (!n.op) fail(g, id, "op node without an op");
        if (find_op(n.op->name) != n.op) fail(g, id, "op '" + n.op->name + "' is not registered");
        if (n.op->arity >= 0 && static_cast<int>(n.inputs.size()) != n.op->arity)
          fail(g, id, "wrong number of inputs");
        for (auto& spec : n.op->attrs) {
          const AttrValue* v = n.attrs.find(spec.name);
          if (!v) fail(g, id, "missing attribute '" + spec.name + "'");
          if (kind_of(*v) != spec.kind) fail(g, id, "attribute '" + spec.name + "' has the wrong kind");
        }
        if (n.attrs.items().size() != n.op->attrs.size()) fail(g, id, "unknown attribute");
        std::vector<Type> types;
        for (NodeId in : n.inputs) types.push_back(g.node(in).type);
        try {
          Type t = n.op->infer(types, n.attrs);
          if (t != n.type)
            fail(g, id, "stored type " + to_string(n.type) + " but the op's rule gives " + to_string(t));
        } catch (const TypeRuleError& e) {
          fail(g, id, e.message);
        }
        if (!n.regions.empty() && !n.op->check_regions)
          fail(g, id, "op '" + n.op->name + "' owns no regions, but this node has " + std::to_string(n.regions.size()));
        for (auto& r : n.regions) verify_graph(*r);
        if (n.op->check_regions) {
          try {
            n.op->check_regions(n, types);
          } catch (const TypeRuleError& e) {
            fail(g, id, e.message);
          }
        }
        break;
      }
    }
  }
  for (NodeId out : g.outputs)
    if (out >= g.size()) throw VerifyError("graph output %" + std::to_string(out) + " does not exist");
}

}  // namespace

void verify(const Graph& g) { verify_graph(g); }

}  // namespace mg::ir
