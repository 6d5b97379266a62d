// The closed set of rule preconditions and replacement attribute functions. A value
// condition (nonzero, positive, finite) has a Z3 encoding, so the checker proves a rule
// under it; a structural one (is_const, same_shape, is_identity, selects, ...) only
// constrains shapes or how a value was made, and is `true` in the proof. At rewrite time
// a value condition holds only when the pass can see it (a splat constant), never by hope.
#pragma once
#include <optional>
#include <span>
#include <string_view>

#include "minigrad/ir/attrs.hpp"
#include "minigrad/ir/smt.hpp"
#include "minigrad/ir/type.hpp"

namespace mg::passes::rules {

// One argument of a condition or function, as bound by a match.
struct BoundArg {
  const Type* type = nullptr;          // a node variable: its type
  std::optional<double> splat;         // ... and its value when it is a splat constant
  bool const_valued = false;           // ... computed from constants only
  const AttrValue* attr = nullptr;     // an attribute variable
  std::optional<std::int64_t> number;  // an integer literal
};

struct CondDef {
  std::string_view name;
  int arity;   // -1: at least one
  bool value;  // has a Z3 encoding over node variables
  std::string_view doc;
  bool (*holds)(std::span<const BoundArg> args);
  ir::SmtTerm (*smt)(ir::SmtBuilder& b, std::span<const ir::SmtTerm> args);  // value conditions
};
std::span<const CondDef> conditions();
const CondDef* find_condition(std::string_view name);

struct AttrFnDef {
  std::string_view name;
  int arity;
  std::string_view doc;
  // nullopt: not applicable to these arguments (the rule does not fire)
  std::optional<AttrValue> (*eval)(std::span<const BoundArg> args);
};
std::span<const AttrFnDef> attr_functions();
const AttrFnDef* find_attr_function(std::string_view name);

}  // namespace mg::passes::rules
