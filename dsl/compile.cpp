// The DSL's Executable over the runtime's interpreter.
#include "minigrad/dsl/compile.hpp"

#include <array>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {

Executable::Executable(std::shared_ptr<ir::Graph> graph, std::vector<Tensor> outputs, Backend backend, rt::Checks checks)
    : graph_(std::move(graph)), outputs_(std::move(outputs)) {
  std::vector<ir::NodeId> ids;
  for (auto& t : outputs_) {
    if (!t.valid() || &t.graph() != graph_.get())
      throw UserError("compile: every output must be a Tensor of the compiled graph", ambient_loc());
    ids.push_back(t.value().id);
  }
  impl_ = std::make_unique<rt::Executable>(rt::compile(*graph_, std::move(ids), {}, backend, checks));
}

Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

std::vector<Array> Executable::run(std::initializer_list<Feed> feeds) const {
  return run(std::span<const Feed>(feeds.begin(), feeds.size()));
}

std::vector<Array> Executable::run(const std::vector<Feed>& feeds) const { return run(std::span<const Feed>(feeds)); }

// Feeds and bound values by position among the graph's inputs: no map, no copies (a
// batch-1 forward through the C99 backend takes a few microseconds; this is on its path).
std::vector<Array> Executable::run(std::span<const Feed> feeds) const {
  const auto& inputs = graph_->inputs();
  const auto position = [&](const std::string& name) {
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (graph_->node(inputs[i]).name == name) return i;
    std::string valid;
    for (auto id : inputs) valid += (valid.empty() ? "" : ", ") + graph_->node(id).name;
    throw UserError("run: unknown input '" + name + "'; the graph's inputs are: " + valid);
  };
  // On the stack for the usual few inputs (a heap vector was one more allocation per run).
  constexpr std::size_t kOnStack = 32;
  std::array<const Array*, kOnStack> stack{};
  std::vector<const Array*> heap;
  if (inputs.size() > kOnStack) heap.assign(inputs.size(), nullptr);
  const std::span<const Array*> given =
      heap.empty() ? std::span<const Array*>(stack.data(), inputs.size()) : std::span<const Array*>(heap);
  for (auto& f : feeds) {
    const std::size_t i = position(f.name);
    if (given[i]) throw UserError("run: input '" + f.name + "' given twice");
    given[i] = &f.value;
  }
  for (auto& f : bound_) {  // feeds win
    const std::size_t i = position(f.name);
    if (!given[i]) given[i] = &f.value;
  }
  for (auto& [name, value] : live_) {
    const std::size_t i = position(name);
    if (!given[i]) given[i] = value.get();
  }
  return impl_->run_by_position(given);
}

void Executable::bind(std::string name, Array value) {
  for (auto& f : bound_)
    if (f.name == name) {
      f.value = std::move(value);
      return;
    }
  bound_.emplace_back(std::move(name), std::move(value));
}

void Executable::bind_live(std::string name, std::shared_ptr<const Array> value) {
  for (auto& [n, v] : live_)
    if (n == name) {
      v = std::move(value);
      return;
    }
  live_.emplace_back(std::move(name), std::move(value));
}

std::vector<std::string> Executable::input_names() const {
  std::vector<std::string> out;
  for (auto id : graph_->inputs()) out.push_back(graph_->node(id).name);
  return out;
}

std::size_t Executable::peak_bytes() const { return impl_->peak_bytes(); }
std::size_t Executable::num_steps() const { return impl_->num_steps(); }
std::string Executable::source_path() const { return impl_->source_path(); }
std::string Executable::ir_text() const { return ir::to_text(*graph_, impl_->outputs()); }

Executable compile(const Graph& g, std::vector<Tensor> outputs, Backend backend) {
  return Executable(g.shared(), std::move(outputs), backend);
}

Executable compile(const Graph& g, std::vector<Tensor> outputs, CompileOptions options) {
  return Executable(g.shared(), std::move(outputs), options.backend, rt::Checks{.numerics = options.check_numerics, .profile = options.profile});
}

}  // namespace mg
