// Parameter's value semantics: copies get storage of their own; moves keep it (so what a
// training step or executable shares follows the model wherever it moves).
#include "minigrad/dsl/nn/parameter.hpp"

#include "minigrad/ir/errors.hpp"

namespace mg::nn {

Parameter::Parameter(const Parameter& o)
    : shape(o.shape), dtype(o.dtype), init(o.init), trainable(o.trainable), tensor(o.tensor), update(o.update),
      storage(std::make_shared<ParameterStorage>(
          ParameterStorage{o.storage->name, o.storage->value.valid() ? o.storage->value.clone() : Array()})) {}

Parameter& Parameter::operator=(const Parameter& o) {
  if (this != &o) *this = Parameter(o);
  return *this;
}

void Parameter::assign(Array v) const {
  const Type want{dtype, shape};
  if (!v.valid() || v.type() != want)
    throw UserError("parameter '" + name() + "': cannot assign " + (v.valid() ? to_string(v.type()) : "an empty array") +
                    ", it holds " + to_string(want));
  storage->value = std::move(v);
}

}  // namespace mg::nn
