// make_op: the single construction path for op nodes.
#include "minigrad/ir/builder.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::ir {

namespace {

std::string types_of(std::span<const Type> types) {
  std::string s;
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + to_string(types[i]);
  return s.empty() ? "no inputs" : s;
}

// Fills defaults, rejects unknown attributes and kind mismatches. An f64 attribute may be
// given as an integer (`value = 1`), which is widened.
Attrs check_attrs(const OpDef& def, Attrs given, SourceLoc loc) {
  for (auto& [name, value] : given.items()) {
    bool known = false;
    for (auto& spec : def.attrs) known |= spec.name == name;
    if (!known)
      throw UserError("op '" + def.name + "': unknown attribute '" + name + "'", loc);
  }
  for (auto& spec : def.attrs) {
    const AttrValue* v = given.find(spec.name);
    if (!v) {
      if (!spec.default_value)
        throw UserError("op '" + def.name + "': missing required attribute '" + spec.name + "'", loc);
      given.set(spec.name, *spec.default_value);
      continue;
    }
    AttrKind k = kind_of(*v);
    if (k == AttrKind::i64 && spec.kind == AttrKind::f64) {
      given.set(spec.name, static_cast<double>(std::get<std::int64_t>(*v)));
    } else if (k != spec.kind) {
      throw UserError("op '" + def.name + "': attribute '" + spec.name + "' expects " +
                          std::string(name_of(spec.kind)) + ", got " + std::string(name_of(k)),
                      loc);
    }
  }
  return given;
}

}  // namespace

Value make_op(Graph& g, const OpDef& def, std::vector<Value> inputs, Attrs attrs) {
  SourceLoc loc = ambient_loc();
  if (def.arity >= 0 && static_cast<int>(inputs.size()) != def.arity)
    throw UserError("op '" + def.name + "' takes " + std::to_string(def.arity) + " input(s), got " +
                        std::to_string(inputs.size()),
                    loc);
  if (def.arity < 0 && inputs.empty())
    throw UserError("op '" + def.name + "' needs at least one input", loc);
  std::vector<Type> types;
  for (Value& v : inputs) {
    v = capture(v, g);  // a traced region body may use values of the graphs around it
    if (!v.valid()) throw UserError("op '" + def.name + "': an input is an empty tensor handle", loc);
    if (v.graph != &g)
      throw UserError("op '" + def.name + "': inputs come from different graphs", loc);
    types.push_back(v.type());
  }
  attrs = check_attrs(def, std::move(attrs), loc);
  Type out;
  try {
    out = def.infer(types, attrs);
    check_type_sane(out);  // a rule's arithmetic must not wrap into a plausible size
  } catch (const TypeRuleError& e) {
    throw ShapeError("op '" + def.name + "': " + e.message + " (got " + types_of(types) + ")", loc);
  } catch (const ShapeError& e) {
    throw ShapeError("op '" + def.name + "': " + e.message() + " (got " + types_of(types) + ")", loc);
  }
  Node n;
  n.kind = NodeKind::op;
  n.op = &def;
  n.attrs = std::move(attrs);
  n.type = std::move(out);
  n.loc = loc;
  return g.append(std::move(n), std::span<const Value>(inputs));
}

Value make_op(const OpDef& def, std::vector<Value> inputs, Attrs attrs) {
  if (inputs.empty() || !inputs[0].valid())
    throw UserError("op '" + def.name + "' needs a graph: pass one explicitly", ambient_loc());
  Graph& g = *capture_target(inputs);
  return make_op(g, def, std::move(inputs), std::move(attrs));
}

}  // namespace mg::ir
