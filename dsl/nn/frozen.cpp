// compile_frozen: parameters become constants of a copy of the graph, then the optimizer
// runs over it; see train.hpp.
#include <map>
#include <utility>

#include "minigrad/dsl/nn/train.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::nn {

Executable compile_frozen(const Graph& g, std::vector<Tensor> outputs, const std::vector<Parameter*>& params,
                          Backend backend, std::string_view passes) {
  const ir::Graph& src = g.ir();
  std::map<ir::NodeId, const Parameter*> param_of;  // bound input node -> its parameter
  for (const Parameter* p : params) {
    if (!p->tensor.valid() || &p->tensor.graph() != &src)
      throw UserError("compile_frozen: parameter '" + p->name() + "' is not bound to this graph (nn::bind)");
    if (p->value().type() != p->tensor.value().type())
      throw UserError("compile_frozen: parameter '" + p->name() + "' holds " + to_string(p->value().type()) +
                      " but the graph reads " + to_string(p->tensor.value().type()));
    param_of[p->tensor.value().id] = p;
  }
  std::unique_ptr<ir::Graph> work = passes::clone_graph(src);
  work->outputs.clear();
  work->output_names.clear();
  for (const Tensor& t : outputs) {
    if (!t.valid() || &t.graph() != &src)
      throw UserError("compile_frozen: every output must be a Tensor of the compiled graph", ambient_loc());
    work->outputs.push_back(t.value().id);
  }

  // Every read of a parameter (at the top level; region bodies read their own inputs)
  // reads a constant holding its current value instead.
  std::map<ir::NodeId, ir::Value> constant_of;
  passes::GraphRewriter freeze([&](passes::GraphRewriter& rw, const ir::Node& old, std::span<const ir::Value> ins) {
    if (!rw.at_top() || old.kind != ir::NodeKind::op) return ir::Value{};
    std::vector<ir::Value> operands(ins.begin(), ins.end());
    bool changed = false;
    for (std::size_t k = 0; k < old.inputs.size(); ++k) {
      auto p = param_of.find(old.inputs[k]);
      if (p == param_of.end()) continue;
      auto [c, fresh] = constant_of.try_emplace(p->first);
      if (fresh) c->second = rw.dst().add_constant(p->second->value().clone(), rw.src().node(p->first).loc);
      operands[k] = c->second;
      changed = true;
    }
    return changed ? rw.copy(old, operands) : ir::Value{};
  });
  std::unique_ptr<ir::Graph> frozen = freeze.run(*work);
  std::shared_ptr<ir::Graph> optimized = passes::run_pipeline(*frozen, passes).graph;

  std::vector<Tensor> outs;
  for (ir::NodeId id : optimized->outputs) outs.emplace_back(optimized->value(id));
  return Executable(std::move(optimized), std::move(outs), backend);
}

}  // namespace mg::nn
