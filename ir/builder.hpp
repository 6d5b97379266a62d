// The one place nodes are made: checks arity, fills and validates attributes against
// the op's schema, runs its shape/dtype rule and appends the node stamped with the
// ambient source location and role. A rule violation becomes a ShapeError naming the op,
// the input types and the user's line.
#pragma once
#include <vector>

#include "minigrad/ir/op_registry.hpp"

namespace mg::ir {

Value make_op(const OpDef& def, std::vector<Value> inputs, Attrs attrs = {});
// For ops without inputs (full, arange, random): the graph must be given.
Value make_op(Graph& g, const OpDef& def, std::vector<Value> inputs, Attrs attrs = {});
inline Value make_op(std::string_view name, std::vector<Value> inputs, Attrs attrs = {}) {
  return make_op(op(name), std::move(inputs), std::move(attrs));
}

}  // namespace mg::ir
