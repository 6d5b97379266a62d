// The interpreter: the reference executor (DESIGN invariant 6). compile() plans a graph
// once (which nodes are needed, in what order, which buffers can be reused when) and the
// Executable runs it many times. Kernels come from the op registry; nothing here knows
// any op by name.
#pragma once
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/array.hpp"
#include "ir/graph.hpp"

namespace mg::rt {

// Graph inputs by name. An input whose dtype or shape differs from the graph's is a
// UserError naming the input and both types.
using Bindings = std::map<std::string, Array, std::less<>>;

struct MemoryPlan;

class Executable {
 public:
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  std::vector<Array> run(const Bindings& inputs) const;

  // Bytes of intermediate buffers live at the worst point of one run (buffers reused by
  // liveness; inputs, constants and returned outputs not counted).
  std::size_t peak_bytes() const;
  std::size_t num_steps() const;  // op nodes executed per run
  const ir::Graph& graph() const;
  const std::vector<ir::NodeId>& outputs() const;

 private:
  friend Executable compile(const ir::Graph&, std::vector<ir::NodeId>);
  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Verifies the graph, then plans it. The graph must outlive the Executable.
Executable compile(const ir::Graph& graph, std::vector<ir::NodeId> outputs);
Executable compile(std::span<const ir::Value> outputs);

// One-shot convenience: compile and run.
std::vector<Array> evaluate(std::span<const ir::Value> outputs, const Bindings& inputs);

}  // namespace mg::rt
