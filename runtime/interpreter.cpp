// The interpreter: runs a planned graph by calling each node's registry kernel. Slot
// buffers persist across runs (allocated once); returned outputs are arrays no other run
// writes while the caller holds them (a run reuses an output buffer only once it is let go).
#include "minigrad/runtime/interpreter.hpp"

#include <omp.h>

#include <chrono>
#include <mutex>
#include <unordered_map>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/runtime/memory_plan.hpp"
#include "minigrad/runtime/thread_budget.hpp"
#include "minigrad/runtime/thread_choice.hpp"
#include "minigrad/runtime/view_plan.hpp"
#include "minigrad/runtime/c99/jit.hpp"
#include "minigrad/runtime/glassbox/numerics.hpp"
#include "minigrad/runtime/glassbox/telemetry.hpp"

namespace mg::rt {

struct Executable::Impl {
  const ir::Graph* graph = nullptr;
  std::vector<ir::NodeId> outputs;      // what run() returns
  std::vector<StateUpdate> state;
  std::vector<ir::NodeId> roots;        // outputs and state updates: what one run computes
  mutable std::vector<Array> state_values;  // per state entry; invalid until set
  // Per state entry, the value before the current one: the next run computes the update
  // into it when no handle outside holds it. Why: a training step replaces every
  // parameter and optimizer moment; fresh megabytes per step made glibc hand pages back
  // to the OS and fault them in again (2-3x slower steps in a fresh process).
  mutable std::vector<Array> spare;
  std::vector<std::int32_t> state_of_update;  // node -> state entry it updates, or -1
  std::vector<bool> is_state;                  // node -> it is a state input
  std::vector<ir::NodeId> aliases;      // reshapes that reuse their operand's buffer (plan_aliases)
  ViewPlan views;                       // transposes the kernels read in place
  MemoryPlan plan;                      // planned for the roots
  std::vector<bool> live;               // nodes one run needs (computed once, not per run)
  mutable std::mutex mu;                 // slots are shared state between runs
  mutable std::vector<Array> slots;
  // Per node, its value during a run. Slot-backed values (typed views of the slots) and
  // constants are set once and kept between runs (kept[id]); the rest is cleared after
  // each run, so no caller's array stays referenced. Why: an Array copy allocates its
  // shape, and three per step were most of a batch-1 forward's time outside the GEMV.
  mutable std::vector<Array> run_vals;
  mutable std::vector<bool> kept;
  // Per node, where a run reads its value: &run_vals[id], or the caller's input array, or
  // the state value itself. Why: copying an Array allocates its shape; five input copies
  // per run were a third of a batch-1 forward's overhead outside its GEMV.
  mutable std::vector<const Array*> run_ptrs;
  mutable std::vector<ir::NodeId> cleared;  // what a run may leave in run_vals: steps not kept, inputs
  // Per node: an output computed into a fresh buffer, which run_vals keeps after the run;
  // the next run writes into it again when the caller has let go of it (sole_owner). Why:
  // the buffer, its control block and its shape were three allocations per batch-1 forward.
  mutable std::vector<bool> recycled;
  mutable std::vector<const Array*> run_in_ptrs;
  mutable bool prepared = false;
  mutable std::unordered_map<const ir::Graph*, std::unique_ptr<Impl>> regions;
  std::unique_ptr<c99::NativeRunner> native;  // Backend::c99: the compiled module runs instead
  bool check_numerics = false;  // Checks::numerics: scan every value (regions inherit it)
  std::unique_ptr<glassbox::Profile> prof;  // Checks::profile: per-node times
  mutable ThreadChoice threads;  // under load: the budget's thread count or the full one, measured

  Impl(const ir::Graph& g, std::vector<ir::NodeId> outs, std::vector<StateUpdate> st = {})
      : graph(&g), outputs(std::move(outs)), state(std::move(st)), roots(planned_outputs(outputs, state)),
        state_values(state.size()), spare(state.size()), state_of_update(g.size(), -1), is_state(g.size(), false),
        aliases(plan_aliases(g, roots)), views(plan_views(g, roots, aliases)),
        plan(plan_memory(g, roots, views.viewed, aliases)), live(g.reachable_from(roots)) {
    for (std::size_t i = 0; i < state.size(); ++i) {
      state_of_update[state[i].update] = static_cast<std::int32_t>(i);
      is_state[state[i].input] = true;
    }
  }

  static std::vector<ir::NodeId> planned_outputs(std::vector<ir::NodeId> outs, const std::vector<StateUpdate>& st) {
    for (auto& s : st) outs.push_back(s.update);
    return outs;
  }
  std::size_t state_index(std::string_view name) const {
    for (std::size_t i = 0; i < state.size(); ++i)
      if (graph->node(state[i].input).name == name) return i;
    throw UserError("no state named '" + std::string(name) + "'");
  }

  // By name (named) or, for regions, the non-state inputs in order (positional).
  std::vector<Array> run(std::span<const Array> positional, const Bindings* named) const;
  // One entry per graph input, in order: the value, or null (state; inputs not needed).
  std::vector<Array> run(std::span<const Array* const> given) const;
  const Impl& region(const ir::Graph& body) const;
  // The error path of Checks::numerics: node n's value is not all finite.
  [[noreturn]] void raise_nonfinite(const ir::Node& n, const std::vector<Array>& vals) const;
  // Node n's operands as the glass box reads them (views materialised), and the node
  // each was checked as.
  void operands(const ir::Node& n, const std::vector<Array>& vals, std::vector<Array>& in,
                std::vector<ir::NodeId>& source) const;
};

namespace {

// One run's OpenMP thread count: the caller's, lowered while other processes keep our
// cores busy (thread_budget.hpp: each kernel's barrier would wait a time slice for a
// thread that shares its core) if this executable's runs measured faster so
// (thread_choice.hpp), restored after the run. Set per run, not per kernel, so
// OpenBLAS (its OpenMP build follows omp_get_max_threads at each call), loop bodies and
// the C99 module's loops follow it too. The C99 GEMM alone (dynamic column chunks) would
// not need it: its MLP step beside one busy process is 0.65 ms at 2 threads against 0.80
// at 1; but its convolution and elementwise loops split statically (the CNN step under
// heavy load: 477 ms at 2 threads, 61 ms at 1).
class RunThreads {
 public:
  using Clock = ThreadChoice::Clock;
  explicit RunThreads(ThreadChoice& choice) : choice_(choice), wanted_(omp_in_parallel() ? 1 : omp_get_max_threads()) {
    const int budget = thread_budget(wanted_);
    if (budget >= wanted_) return;  // no load: no clock reads either
    start_ = Clock::now();
    n_ = choice_.pick(wanted_, budget, start_);
    if (n_ != wanted_) omp_set_num_threads(n_);
  }
  ~RunThreads() {
    if (n_ == 0) return;
    if (n_ != wanted_) omp_set_num_threads(wanted_);
    const Clock::time_point end = Clock::now();
    choice_.record(n_, std::chrono::duration<double, std::milli>(end - start_).count(), end);
  }
  RunThreads(const RunThreads&) = delete;
  RunThreads& operator=(const RunThreads&) = delete;

 private:
  ThreadChoice& choice_;
  int wanted_;
  int n_ = 0;  // 0: no load, the caller's count untouched
  Clock::time_point start_{};
};

void check_input(const ir::Node& n, const Array& given) {
  if (given.type() != n.type)
    throw UserError("input '" + n.name + "': expected " + to_string(n.type) + ", got " +
                        to_string(given.type()),
                    n.loc);
  if (!given.valid()) throw UserError("input '" + n.name + "': array has no storage", n.loc);
}

}  // namespace

void Executable::Impl::operands(const ir::Node& n, const std::vector<Array>& vals, std::vector<Array>& in,
                                std::vector<ir::NodeId>& source) const {
  const ir::Graph& g = *graph;
  for (ir::NodeId x : n.inputs) {
    if (!views.viewed[x]) {
      in.push_back(vals[x]);
      source.push_back(x);
      continue;
    }
    // A view read in place has no buffer: materialise it with its own kernel.
    const ir::Node& v = g.node(x);
    const Array* operand = &vals[v.inputs[0]];
    Array out(v.type);
    v.op->kernel(ir::KernelArgs{std::span<const Array* const>(&operand, 1), v, out});
    in.push_back(out);
    source.push_back(v.inputs[0]);
  }
}

void Executable::Impl::raise_nonfinite(const ir::Node& n, const std::vector<Array>& vals) const {
  std::vector<Array> in;
  std::vector<ir::NodeId> source;
  operands(n, vals, in, source);
  glassbox::raise_nonfinite(*graph, roots, n.id, in, source, vals[n.id], "interpreter");
}

const Executable::Impl& Executable::Impl::region(const ir::Graph& body) const {
  auto& slot = regions[&body];
  if (!slot) {
    slot = std::make_unique<Impl>(body, body.outputs);
    slot->check_numerics = check_numerics;
  }
  return *slot;
}

std::vector<Array> Executable::Impl::run(std::span<const Array> positional, const Bindings* named) const {
  const auto& inputs = graph->inputs();
  std::vector<const Array*> given(inputs.size(), nullptr);
  if (named) {
    std::size_t matched = 0;  // named entries that bound an input (all: none is unknown)
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto it = named->find(graph->node(inputs[i]).name);
      if (it != named->end()) given[i] = &it->second, ++matched;
    }
    if (matched != named->size())  // some name is no input: find which
      for (auto& [name, arr] : *named) {
        bool known = false;
        for (auto id : inputs) known |= graph->node(id).name == name;
        if (!known) {
          std::string valid;  // what may be fed: every input that is not persistent state
          for (auto id : inputs) {
            bool is_state = false;
            for (auto& st : state) is_state |= st.input == id;
            if (!is_state) valid += (valid.empty() ? "" : ", ") + graph->node(id).name;
          }
          throw UserError("unknown input '" + name + "'; the inputs to feed are: " + valid);
        }
      }
  } else {
    MG_ASSERT(positional.size() >= inputs.size() - state.size(), "region called with too few arguments");
    for (std::size_t i = 0, k = 0; i < inputs.size(); ++i)
      if (!is_state[inputs[i]]) given[i] = &positional[k++];
  }
  return run(given);
}

std::vector<Array> Executable::Impl::run(std::span<const Array* const> given) const {
  std::lock_guard lock(mu);
  const ir::Graph& g = *graph;
  const auto& inputs = g.inputs();
  MG_ASSERT(given.size() == inputs.size(), "run: one entry per graph input expected");
  for (std::size_t i = 0; i < state.size(); ++i) {
    const ir::Node& n = g.node(state[i].input);
    if (!state_values[i].valid() || (state_values[i].nbytes() == 0 && n.type.nbytes() != 0))
      throw UserError("state '" + n.name + "' (" + to_string(n.type) + ") was never set", n.loc);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ir::Node& n = g.node(inputs[i]);
    if (is_state[n.id]) {
      if (given[i])
        throw UserError("input '" + n.name + "' is persistent state: set it with set_state, not run", n.loc);
    } else if (given[i]) {
      check_input(n, *given[i]);
    } else if (live[n.id]) {
      throw UserError("missing input '" + n.name + "' (" + to_string(n.type) +
                          "): give it to run() by name, or, for a module's parameter, compile with "
                          "nn::compile_with_parameters(graph, outputs, module), which supplies their values",
                      n.loc);
    }
  }
  if (native) return native->run(given, state_values);

  std::vector<Array>& vals = run_vals;
  std::vector<const Array*>& in_ptrs = run_in_ptrs;
  if (!prepared) {
    slots.clear();
    for (auto b : plan.slot_bytes) slots.emplace_back(Type{DType::boolean, {static_cast<std::int64_t>(b)}});
    vals.assign(g.size(), Array());
    kept.assign(g.size(), false);
    for (ir::NodeId id : plan.steps)
      if (const std::size_t slot = plan.slot_of[id]; slot != MemoryPlan::kNoSlot) {
        vals[id] = slots[slot];
        vals[id].retype(g.node(id).type);
        kept[id] = true;
      }
    for (ir::NodeId id = 0; id < g.size(); ++id)
      if (live[id] && g.node(id).kind == ir::NodeKind::constant) vals[id] = *g.node(id).literal, kept[id] = true;
    run_ptrs.resize(g.size());
    for (ir::NodeId id = 0; id < g.size(); ++id) run_ptrs[id] = &vals[id];
    recycled.assign(g.size(), false);
    for (ir::NodeId o : outputs)
      recycled[o] = g.node(o).kind == ir::NodeKind::op && !kept[o] && aliases[o] == ir::kNoNode &&
                    plan.slot_of[o] == MemoryPlan::kNoSlot && state_of_update[o] < 0;
    cleared.assign(inputs.begin(), inputs.end());
    for (ir::NodeId id : plan.steps)
      if (!kept[id] && !recycled[id]) cleared.push_back(id);
    prepared = true;
  }
  std::vector<const Array*>& ptrs = run_ptrs;
  struct Clear {  // however the run ends
    std::vector<Array>& vals;
    const std::vector<ir::NodeId>& cleared;
    std::vector<const Array*>& ptrs;
    const std::vector<ir::NodeId>& inputs;
    ~Clear() {
      for (ir::NodeId id : cleared)
        if (vals[id].valid()) vals[id] = Array();
      for (ir::NodeId id : inputs) ptrs[id] = &vals[id];  // no caller's array stays referenced
    }
  } clear{vals, cleared, ptrs, inputs};
  for (std::size_t i = 0; i < state.size(); ++i) ptrs[state[i].input] = &state_values[i];
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (given[i]) ptrs[inputs[i]] = given[i];
  if (check_numerics)  // the glass box reads operands from vals
    for (ir::NodeId id : inputs) vals[id] = *ptrs[id];

  using Clock = std::chrono::steady_clock;
  const Clock::time_point run_start = prof ? Clock::now() : Clock::time_point{};
  if (prof) {
    prof->calls.resize(g.size());
    prof->total_us.resize(g.size());
    prof->last_run.clear();
    ++prof->runs;
  }
  std::vector<std::int64_t> region_calls;
  ir::RegionRunner run_region = [](std::size_t, std::span<const Array>) -> std::vector<Array> { return {}; };
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const ir::Node& n = g.node(plan.steps[s]);
    std::size_t slot = plan.slot_of[n.id];
    const ir::NodeId alias = aliases[n.id];
    if (slot == MemoryPlan::kNoSlot && alias == ir::kNoNode) {
      const std::int32_t st = state_of_update[n.id];
      Array* reuse = st >= 0 ? &spare[static_cast<std::size_t>(st)] : nullptr;
      if (recycled[n.id]) {
        if (!vals[n.id].sole_owner()) vals[n.id] = Array(n.type);  // else: last run's buffer, free again
      } else {
        vals[n.id] = reuse && reuse->sole_owner() && reuse->type() == n.type ? std::move(*reuse) : Array(n.type);
      }
    }  // else: vals[n.id] is its slot's typed view already
    in_ptrs.clear();
    for (ir::NodeId in : n.inputs) in_ptrs.push_back(ptrs[views.viewed[in] ? g.node(in).inputs[0] : in]);
    if (!n.regions.empty()) {
      // Counts each region's runs in this run of n: a NumericsError from a body names the
      // loop step (RegionStep).
      region_calls.assign(n.regions.size(), 0);
      run_region = [this, &n, &vals, &region_calls](std::size_t r, std::span<const Array> args) {
        const std::int64_t iteration = region_calls.at(r)++;
        try {
          return region(*n.regions.at(r)).run(args, nullptr);
        } catch (const NumericsError& e) {  // raised in the region: restate it here
          std::vector<Array> in;
          std::vector<ir::NodeId> source;
          operands(n, vals, in, source);
          glassbox::raise_in_region(*graph, roots, RegionStep{n.id, r, iteration}, e.report(), in, source);
        }
      };
    }
    ir::KernelArgs args{in_ptrs, n, vals[n.id], n.regions.empty() ? nullptr : &run_region, views.in_views[n.id]};
    const Clock::time_point t0 = prof ? Clock::now() : Clock::time_point{};
    try {
      if (alias != ir::kNoNode) vals[n.id] = ptrs[alias]->reshaped(n.type.shape);  // no copy
      else n.op->kernel(args);
      if (prof) {
        const Clock::time_point t1 = Clock::now();
        const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        prof->total_us[n.id] += us;
        ++prof->calls[n.id];
        prof->last_run.push_back({n.id, std::chrono::duration<double, std::micro>(t0 - run_start).count(), us});
      }
    } catch (const NumericsError&) {  // restated by run_region already
      throw;
    } catch (const UserError& e) {
      if (e.where().known()) throw;
      throw UserError("op '" + n.op->name + "': " + e.message(), n.loc);
    }
    if (check_numerics && !glassbox::all_finite(vals[n.id])) raise_nonfinite(n, vals);
    for (ir::NodeId dead : plan.release_after[s])
      if (!kept[dead]) vals[dead] = Array();
  }

  for (std::size_t i = 0; i < state.size(); ++i) {
    // A copy first: the update may read the state input itself (ptrs points at it).
    Array v = g.node(state[i].update).kind == ir::NodeKind::op ? *ptrs[state[i].update] : ptrs[state[i].update]->clone();
    spare[i] = std::move(state_values[i]);
    state_values[i] = std::move(v);
  }
  std::vector<Array> result;
  result.reserve(outputs.size());
  for (ir::NodeId o : outputs)  // inputs and constants as copies: callers never alias our storage
    result.push_back(g.node(o).kind == ir::NodeKind::op ? *ptrs[o] : ptrs[o]->clone());
  return result;
}

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

std::vector<Array> Executable::run(const Bindings& inputs) const {
  RunThreads threads(impl_->threads);
  return impl_->run({}, &inputs);
}
std::vector<Array> Executable::run_by_position(std::span<const Array* const> by_position) const {
  if (by_position.size() != impl_->graph->inputs().size())
    throw UserError("run: " + std::to_string(by_position.size()) + " inputs given by position, the graph has " +
                    std::to_string(impl_->graph->inputs().size()));
  RunThreads threads(impl_->threads);
  return impl_->run(by_position);
}
void Executable::set_state(std::string_view name, Array value) {
  std::lock_guard lock(impl_->mu);
  std::size_t i = impl_->state_index(name);
  const ir::Node& n = impl_->graph->node(impl_->state[i].input);
  check_input(n, value);
  impl_->state_values[i] = value.clone();
}

Array Executable::state(std::string_view name) const {
  std::lock_guard lock(impl_->mu);
  return impl_->state_values[impl_->state_index(name)];
}

std::vector<std::string> Executable::state_names() const {
  std::vector<std::string> names;
  for (auto& s : impl_->state) names.push_back(impl_->graph->node(s.input).name);
  return names;
}

std::size_t Executable::peak_bytes() const {
  return impl_->native ? impl_->native->module().peak_bytes : impl_->plan.peak_live_bytes;
}
std::string Executable::source_path() const { return impl_->native ? impl_->native->source_path() : std::string(); }
std::size_t Executable::num_steps() const {
  return impl_->native ? impl_->native->module().num_kernels : impl_->plan.steps.size();
}
bool Executable::checks_numerics() const { return impl_->check_numerics; }
const glassbox::Profile* Executable::profile() const { return impl_->prof.get(); }
const MemoryPlan& Executable::memory_plan() const { return impl_->plan; }
const ir::Graph& Executable::graph() const { return *impl_->graph; }
const std::vector<ir::NodeId>& Executable::outputs() const { return impl_->outputs; }

Executable compile(const ir::Graph& graph, std::vector<ir::NodeId> outputs, std::vector<StateUpdate> state,
                   Backend backend, Checks checks) {
  if (outputs.empty() && state.empty()) throw UserError("compile: no outputs requested");
  for (auto o : outputs)
    if (o >= graph.size()) throw UserError("compile: output %" + std::to_string(o) + " is not in the graph");
  for (auto& s : state) {
    if (s.input >= graph.size() || s.update >= graph.size() || graph.node(s.input).kind != ir::NodeKind::input)
      throw UserError("compile: a state entry must pair a graph input with a node of the graph");
    if (graph.node(s.input).type != graph.node(s.update).type)
      throw UserError("compile: state '" + graph.node(s.input).name + "' is " + to_string(graph.node(s.input).type) +
                      " but its update is " + to_string(graph.node(s.update).type));
  }
  ir::verify(graph);
  auto impl = std::make_unique<Executable::Impl>(graph, std::move(outputs), std::move(state));
  impl->check_numerics = checks.numerics || glassbox::numerics_from_env();
  if (checks.profile && backend == Backend::interpreter) impl->prof = std::make_unique<glassbox::Profile>();
  if (backend == Backend::c99)
    impl->native = std::make_unique<c99::NativeRunner>(graph, impl->outputs, impl->state, impl->check_numerics);
  return Executable(std::move(impl));
}

Executable compile(std::span<const ir::Value> outputs) {
  if (outputs.empty()) throw UserError("compile: no outputs requested");
  std::vector<ir::NodeId> ids;
  for (auto& v : outputs) {
    if (v.graph != outputs[0].graph) throw UserError("compile: outputs come from different graphs");
    ids.push_back(v.id);
  }
  return compile(*outputs[0].graph, std::move(ids));
}

std::vector<Array> evaluate(std::span<const ir::Value> outputs, const Bindings& inputs) {
  return compile(outputs).run(inputs);
}

}  // namespace mg::rt
