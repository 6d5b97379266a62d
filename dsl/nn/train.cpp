// The one-graph training step; see train.hpp.
#include "minigrad/dsl/nn/train.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "minigrad/dsl/autodiff.hpp"
#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/io/safetensors.hpp"

namespace mg::nn {

TrainStep::TrainStep(Graph& g, const Tensor& loss, std::vector<Parameter*> params, UpdateRule rule, double base_lr,
                     TrainOptions options, Loc loc)
    : graph_(g.shared()), base_lr_(base_lr), options_(std::move(options)) {
  // The outermost scope wins: the library calls below stamp the user's line, not theirs.
  // (Adjoint nodes take their forward node's line from the grad pass.)
  LocScope at(SourceLoc::from(loc));
  if (!loss.valid() || loss.rank() != 0 || !is_float(loss.dtype()))
    throw UserError("compile_train: the loss must be a float scalar", ambient_loc());
  if (options_.privacy)
    throw UserError("compile_train: a private step (options.privacy) needs the per-example loss: "
                    "compile_train(g, example_loss, batch_inputs, model, optimizer, options)",
                    ambient_loc());
  build(
      g, [&](const std::vector<Tensor>& trainable, const std::vector<std::string>&, const Tensor&) {
        return std::pair{loss, grad(loss, trainable)};
      },
      std::move(params), rule);
}

TrainStep::TrainStep(Graph& g, const ExampleLoss& loss, const std::vector<Tensor>& batch, std::vector<Parameter*> params,
                     UpdateRule rule, double base_lr, TrainOptions options, Loc loc)
    : graph_(g.shared()), base_lr_(base_lr), options_(std::move(options)) {
  LocScope at(SourceLoc::from(loc));
  if (!options_.privacy)
    throw UserError("compile_train: the per-example form is the private step: set options.privacy", ambient_loc());
  const Privacy privacy = *options_.privacy;
  build(
      g, [&](const std::vector<Tensor>& trainable, const std::vector<std::string>& names, const Tensor& step) {
        PrivateGradients p = private_gradients(loss, batch, trainable, names, step, privacy);
        return std::pair{p.loss, p.grads};
      },
      std::move(params), rule);
}

void TrainStep::build(Graph& g, const GradFn& gradients, std::vector<Parameter*> params, const UpdateRule& rule) {
  std::vector<Tensor> trainable;
  std::vector<std::string> names;
  for (Parameter* p : params) {
    if (!p->tensor.valid() || &p->tensor.graph() != graph_.get())
      throw UserError("compile_train: parameter '" + p->name() + "' is not bound to this graph (nn::bind)");
    if (p->trainable) {
      trainable.push_back(p->tensor);
      names.push_back(p->name());
    }
  }
  if (trainable.empty()) throw UserError("compile_train: the model has no trainable parameters");

  // The optimizer's update (clipping, state, new values) has the role `update`.
  std::optional<ir::RoleScope> update_role(std::in_place, *graph_, ir::Role::update);
  Tensor lr = g.input("optim.lr", f64, {});
  Tensor step = g.input("optim.step", f64, {});
  Tensor step_next = Tensor(step + 1.0);
  OptimContext ctx(g, lr, step_next);

  update_role.reset();
  auto [loss, grads] = gradients(trainable, names, Tensor(cast(step, i64)));
  update_role.emplace(*graph_, ir::Role::update);
  if (options_.clip_grad_norm) {  // torch.nn.utils.clip_grad_norm_
    Tensor total;
    for (auto& gr : grads) {
      Tensor s = cast(square(gr).sum(), f64);
      total = total.valid() ? Tensor(total + s) : s;
    }
    Tensor coef = Tensor(minimum(*options_.clip_grad_norm / (sqrt(total) + 1e-6), 1.0));
    for (auto& gr : grads) gr = Tensor(gr * cast(coef, gr.dtype()));
  }

  std::vector<rt::StateUpdate> state;
  std::vector<std::pair<std::string, Array>> initial;
  std::size_t k = 0;
  for (Parameter* p : params) {
    params_.push_back(p->storage);
    if (p->trainable) gradient_nodes_.push_back({p->name(), p->tensor.value().id, grads[k].value().id, ir::kNoNode});
    Tensor next = p->trainable ? rule(ctx, *p, grads[k++]) : (p->update.valid() ? p->update : p->tensor);
    if (p->trainable) gradient_nodes_.back().update = next.value().id;
    if (next.type() != p->tensor.type())
      throw UserError("compile_train: the update of '" + p->name() + "' has type " + to_string(next.type()));
    state.push_back({p->tensor.value().id, next.value().id});
    initial.emplace_back(p->name(), p->value());
  }
  for (auto& slot : ctx.slots()) {
    if (!slot.next.valid()) throw UserError("optimizer state '" + slot.name + "' has no update (a bug in the rule)");
    state.push_back({slot.input.value().id, slot.next.value().id});
    initial.emplace_back(slot.name, slot.initial);
  }
  state.push_back({step.value().id, step_next.value().id});
  initial.emplace_back("optim.step", Array::scalar(f64, 0));

  std::vector<ir::NodeId> outputs{loss.value().id};
  for (auto& t : options_.extra_outputs) outputs.push_back(t.value().id);
  roots_ = outputs;
  for (auto& s : state) roots_.push_back(s.update);
  if (!options_.passes.empty()) {
    // The pipeline's roots are the graph's outputs: set them for the run, then restore.
    std::vector<ir::NodeId> saved_outputs = std::exchange(graph_->outputs, roots_);
    std::vector<std::string> saved_names = std::exchange(graph_->output_names, {});
    passes::PipelineResult opt;
    try {
      opt = passes::run_pipeline(*graph_, options_.passes);
    } catch (...) {
      graph_->outputs = std::move(saved_outputs);
      graph_->output_names = std::move(saved_names);
      throw;
    }
    graph_->outputs = std::move(saved_outputs);
    graph_->output_names = std::move(saved_names);
    optimized_ = std::move(opt.graph);
    pass_stats_ = std::move(opt.stats);
    // Outputs map one to one; state inputs are found by name (passes keep every input).
    std::vector<ir::NodeId> new_outputs(optimized_->outputs.begin(), optimized_->outputs.begin() + outputs.size());
    for (std::size_t i = 0; i < state.size(); ++i) {
      state[i].update = optimized_->outputs[outputs.size() + i];
      state[i].input = optimized_->input(graph_->node(state[i].input).name).id;
    }
    exe_ = std::make_unique<rt::Executable>(rt::compile(*optimized_, new_outputs, state, options_.backend, rt::Checks{.numerics = options_.check_numerics, .profile = options_.profile}));
  } else {
    exe_ = std::make_unique<rt::Executable>(rt::compile(*graph_, outputs, state, options_.backend, rt::Checks{.numerics = options_.check_numerics, .profile = options_.profile}));
  }
  for (auto& [name, value] : initial) exe_->set_state(name, value);
}

TrainStep::TrainStep(TrainStep&&) noexcept = default;
TrainStep::~TrainStep() = default;

double TrainStep::current_lr() const { return options_.schedule(base_lr_, steps_); }

std::vector<Array> TrainStep::run_all(const std::vector<Feed>& batch) {
  rt::Bindings b;
  for (auto& f : batch)
    if (!b.emplace(f.name, f.value).second) throw UserError("run: input '" + f.name + "' given twice");
  b["optim.lr"] = Array::scalar(f64, current_lr());
  auto out = exe_->run(b);
  ++steps_;
  sync_model();
  return out;
}

double TrainStep::run(const std::vector<Feed>& batch) { return run_all(batch)[0].at(0); }

void TrainStep::sync_model() {
  for (auto& p : params_) p->value = exe_->state(p->name);
}

std::map<std::string, Array> TrainStep::parameters() const {
  std::map<std::string, Array> out;
  for (auto& p : params_) out[p->name] = exe_->state(p->name);
  return out;
}

namespace {
constexpr const char* kStepsKey = "train.steps_done";
}

std::map<std::string, Array> TrainStep::state_dict() const {
  std::map<std::string, Array> out;
  for (const std::string& name : exe_->state_names()) out[name] = exe_->state(name);
  out[kStepsKey] = Array::scalar(i64, static_cast<double>(steps_));
  return out;
}

void TrainStep::load_state_dict(const std::map<std::string, Array>& state) {
  std::vector<std::string> names = exe_->state_names();
  names.push_back(kStepsKey);
  std::string missing, unexpected, mismatched;
  for (const std::string& name : names) {
    auto it = state.find(name);
    if (it == state.end()) {
      missing += (missing.empty() ? "" : ", ") + name;
      continue;
    }
    const Type want = name == kStepsKey ? Type{i64, {}} : exe_->state(name).type();
    if (!it->second.valid() || it->second.type() != want)
      mismatched += (mismatched.empty() ? "" : "; ") + name + ": expected " + to_string(want) + ", got " +
                    (it->second.valid() ? to_string(it->second.type()) : "no data");
  }
  for (const auto& [name, value] : state)
    if (std::find(names.begin(), names.end(), name) == names.end())
      unexpected += (unexpected.empty() ? "" : ", ") + name;
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty())
    throw UserError("load_state_dict: the state does not match this training step" +
                    (missing.empty() ? "" : "\n  missing keys: " + missing) +
                    (unexpected.empty() ? "" : "\n  unexpected keys: " + unexpected) +
                    (mismatched.empty() ? "" : "\n  type mismatches: " + mismatched));
  for (const std::string& name : exe_->state_names()) exe_->set_state(name, state.at(name).clone());
  steps_ = static_cast<std::int64_t>(state.at(kStepsKey).at(0));
  sync_model();
}

void TrainStep::save(const std::string& path) const {
  io::save_safetensors(path, state_dict(), {{"format", "minigrad.train_state"}, {"steps_done", std::to_string(steps_)}});
}

void TrainStep::load(const std::string& path) {
  try {
    load_state_dict(io::load_safetensors(path).tensors);
  } catch (const UserError& e) {
    throw UserError(path + ": " + e.what());
  }
}

void TrainStep::load_parameters(const std::map<std::string, Array>& values) {
  for (auto& [name, value] : values) exe_->set_state(name, value);
  sync_model();
}

const rt::Executable& TrainStep::executable() const { return *exe_; }
const ir::Graph& TrainStep::executed_graph() const { return optimized_ ? *optimized_ : *graph_; }

std::string TrainStep::ir_text() const { return ir::to_text(*graph_, roots_); }

Executable compile_with_parameters(const Graph& g, std::vector<Tensor> outputs, const std::vector<Parameter*>& params,
                                   Backend backend) {
  Executable exe = compile(g, std::move(outputs), backend);
  for (Parameter* p : params) exe.bind_live(p->name(), std::shared_ptr<const Array>(p->storage, &p->storage->value));
  return exe;
}

}  // namespace mg::nn
