// Runs a DSL graph's outputs on every executor the transformations must work on: the
// interpreter, the C99 backend, and the interpreter after the optimizing pipeline.
#pragma once
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/minigrad.hpp"
#include "minigrad/passes/pass_manager.hpp"

namespace mg::testing {

// `outs` run by the interpreter, by the C99 backend and by the interpreter after the
// default pipeline (fold, cse, fuse, dce); every run must agree with the first.
inline std::vector<Array> run_everywhere(const Graph& g, const std::vector<Tensor>& outs, const rt::Bindings& b,
                                  double tol = 1e-12) {
  std::vector<ir::NodeId> ids;
  for (auto& t : outs) ids.push_back(t.value().id);
  std::vector<Array> ref = rt::compile(g.ir(), ids).run(b);
  std::vector<Array> c99 = rt::compile(g.ir(), ids, {}, rt::Backend::c99).run(b);
  ir::Graph& ig = const_cast<ir::Graph&>(g.ir());
  const auto saved = ig.outputs;
  ig.outputs = ids;
  auto piped = passes::run_pipeline(ig, passes::kDefaultPipeline).graph;
  ig.outputs = saved;
  std::vector<Array> opt = rt::compile(*piped, piped->outputs).run(b);
  for (std::size_t k = 0; k < ref.size(); ++k) {
    EXPECT_EQ(to_string(c99[k].type()), to_string(ref[k].type()));
    for (std::int64_t i = 0; i < ref[k].numel(); ++i) {
      EXPECT_NEAR(c99[k].at(i), ref[k].at(i), tol * (1 + std::fabs(ref[k].at(i)))) << "c99, output " << k << " [" << i << "]";
      EXPECT_NEAR(opt[k].at(i), ref[k].at(i), tol * (1 + std::fabs(ref[k].at(i)))) << "pipeline, output " << k << " [" << i << "]";
    }
  }
  return ref;
}

}  // namespace mg::testing
