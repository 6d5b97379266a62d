// The DSL's Executable over the runtime's interpreter.
#include "dsl/compile.hpp"

#include "ir/errors.hpp"
#include "ir/printer.hpp"
#include "runtime/interpreter.hpp"

namespace mg {

Executable::Executable(std::shared_ptr<ir::Graph> graph, std::vector<Tensor> outputs, Backend backend)
    : graph_(std::move(graph)), outputs_(std::move(outputs)) {
  std::vector<ir::NodeId> ids;
  for (auto& t : outputs_) {
    if (!t.valid() || &t.graph() != graph_.get())
      throw UserError("compile: every output must be a Tensor of the compiled graph", ambient_loc());
    ids.push_back(t.value().id);
  }
  impl_ = std::make_unique<rt::Executable>(rt::compile(*graph_, std::move(ids), {}, backend));
}

Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

std::vector<Array> Executable::run(std::initializer_list<Feed> feeds) const {
  return run(std::vector<Feed>(feeds));
}

std::vector<Array> Executable::run(const std::vector<Feed>& feeds) const {
  rt::Bindings b;
  for (auto& f : feeds)
    if (!b.emplace(f.name, f.value).second) throw UserError("run: input '" + f.name + "' given twice");
  for (auto& f : bound_) b.emplace(f.name, f.value);  // feeds win
  return impl_->run(b);
}

void Executable::bind(std::string name, Array value) {
  for (auto& f : bound_)
    if (f.name == name) {
      f.value = std::move(value);
      return;
    }
  bound_.emplace_back(std::move(name), std::move(value));
}

std::size_t Executable::peak_bytes() const { return impl_->peak_bytes(); }
std::size_t Executable::num_steps() const { return impl_->num_steps(); }
std::string Executable::ir_text() const { return ir::to_text(*graph_, impl_->outputs()); }

Executable compile(const Graph& g, std::vector<Tensor> outputs, Backend backend) {
  return Executable(g.shared(), std::move(outputs), backend);
}

}  // namespace mg
