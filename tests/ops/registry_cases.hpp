// Test graphs built from an op's registry test spec: shared by the registry-driven suites
// (test_registry_ops.cpp: types and gradients; test_registry_transforms.cpp: jvp and vmap).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg::testing {

// The family default for elementwise ops without explicit cases: a matrix, a 0-d
// scalar and a shape with a size-1 axis.
inline std::vector<ir::OpTestCase> cases_of(const ir::OpDef& d) {
  if (!d.test.cases.empty() || !d.traits.elementwise) return d.test.cases;
  std::vector<ir::OpTestCase> out;
  for (Shape s : {Shape{3, 4}, Shape{}, Shape{2, 1, 3}})
    out.push_back({std::vector<Type>(static_cast<std::size_t>(d.arity), Type{f64, s}), {}});
  return out;
}

// One input value of a case, as the spec draws it.
inline Array case_input(const ir::OpDef& d, std::size_t i, const Type& t, std::uint64_t seed) {
  return d.test.make_input ? d.test.make_input(i, t, seed) : sample(t, d.test.domain, seed);
}

struct Built {
  std::unique_ptr<ir::Graph> g = std::make_unique<ir::Graph>();
  std::vector<ir::Value> inputs;
  std::vector<Array> values;
  ir::Value out;
};

inline Built build(const ir::OpDef& d, const ir::OpTestCase& c, std::uint64_t seed) {
  Built b;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    b.inputs.push_back(b.g->add_input("in" + std::to_string(i), c.inputs[i]));
    b.values.push_back(case_input(d, i, c.inputs[i], seed + i));
  }
  b.out = ir::make_op(*b.g, d, b.inputs, c.attrs);
  if (d.test.attach_regions) d.test.attach_regions(*b.g, b.out.id);
  return b;
}

inline rt::Bindings bindings_of(const Built& b) {
  rt::Bindings m;
  for (std::size_t i = 0; i < b.inputs.size(); ++i) m[b.inputs[i].node().name] = b.values[i];
  return m;
}

}  // namespace mg::testing
