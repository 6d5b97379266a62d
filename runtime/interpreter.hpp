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

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/runtime/backend.hpp"

namespace mg::rt {

// Graph inputs by name. An input whose dtype or shape differs from the graph's is a
// UserError naming the input and both types.
using Bindings = std::map<std::string, Array, std::less<>>;

struct MemoryPlan;
namespace glassbox { struct Profile; }

// Persistent state (DESIGN invariant 5): a graph input whose value the executable owns,
// and the node whose value replaces it after every run (e.g. a parameter and its
// optimizer update, Adam's moments, a step counter).
struct StateUpdate {
  ir::NodeId input;
  ir::NodeId update;
};

class Executable {
 public:
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  // Runs once: binds `inputs` (every non-state input the outputs need), reads the state,
  // computes the outputs, then replaces each state value by its update.
  std::vector<Array> run(const Bindings& inputs) const;
  // The same with one entry per graph().inputs(), in order: the value, or null for state
  // and for inputs the outputs do not need. No name lookups and no copies of the inputs:
  // for callers that run the same graph many times (batch-1 inference).
  std::vector<Array> run_by_position(std::span<const Array* const> by_position) const;

  // State access by input name; set_state checks the type. A state never set is an
  // error at the first run that needs it.
  void set_state(std::string_view name, Array value);
  Array state(std::string_view name) const;  // a handle to the current value
  std::vector<std::string> state_names() const;

  // Bytes of intermediate buffers live at the worst point of one run (buffers reused by
  // liveness; inputs, constants and returned outputs not counted).
  std::size_t peak_bytes() const;
  std::size_t num_steps() const;  // op nodes executed per run
  bool checks_numerics() const;   // compiled with Checks::numerics (or MG_CHECK_NUMERICS)
  // Checks::profile (interpreter): per-node times of every run so far; null otherwise.
  const glassbox::Profile* profile() const;
  const MemoryPlan& memory_plan() const;  // the interpreter's plan (also for Backend::c99)
  // Backend::c99: the generated C source the module was compiled from; "" otherwise.
  std::string source_path() const;
  const ir::Graph& graph() const;
  const std::vector<ir::NodeId>& outputs() const;

 private:
  friend Executable compile(const ir::Graph&, std::vector<ir::NodeId>, std::vector<StateUpdate>, Backend, Checks);
  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Verifies the graph, then plans it (the interpreter) or emits and compiles it (c99).
// The graph must outlive the Executable.
Executable compile(const ir::Graph& graph, std::vector<ir::NodeId> outputs,
                   std::vector<StateUpdate> state = {}, Backend backend = Backend::interpreter,
                   Checks checks = {});
Executable compile(std::span<const ir::Value> outputs);

// One-shot convenience: compile and run.
std::vector<Array> evaluate(std::span<const ir::Value> outputs, const Bindings& inputs);

}  // namespace mg::rt
