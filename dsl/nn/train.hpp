// compile_train: ONE graph for a whole training step (DESIGN invariant 5) — the forward
// pass already in the graph, the grad pass, optional global-norm clipping, and the
// optimizer's update — compiled once; parameters and optimizer state are persistent
// state of the executable, read and replaced by every run.
//
//   auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-3});
//   for (auto& batch : loader) double l = step.run({{"x", batch.x}, {"y", batch.y}});
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/dsl/compile.hpp"
#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/dsl/nn/optim.hpp"
#include "minigrad/dsl/nn/private_grad.hpp"
#include "minigrad/passes/pass_manager.hpp"

namespace mg::rt { class Executable; }

namespace mg::nn {

struct TrainOptions {
  std::optional<double> clip_grad_norm = std::nullopt;  // max global L2 norm of all gradients
  Schedule schedule = constant_lr();
  std::vector<Tensor> extra_outputs = {};  // also returned by run_all (e.g. logits)
  // The optimizer pipeline run on the step's graph before it is compiled (passes/
  // pass_manager.hpp); "" runs the graph as built. Results are bit-identical either way.
  std::string passes = std::string(passes::kDefaultPipeline);
  Backend backend = Backend::interpreter;  // c99: the whole step runs as compiled C
  // Scan every value of the step (forward, backward, update) for NaN/Inf; the first raises
  // mg::NumericsError naming its root cause (runtime/glassbox/numerics.hpp).
  bool check_numerics = false;
  // Time every node of the step (the interpreter): mg::telemetry(step.executable()).
  bool profile = false;
  // DP-SGD (dsl/nn/private_grad.hpp): set it with the per-example form of compile_train;
  // clip_grad_norm then clips the noisy average as usual (normally left unset).
  std::optional<Privacy> privacy = std::nullopt;
};

// Builds the update for one parameter given its gradient.
using UpdateRule = std::function<Tensor(OptimContext&, const Parameter&, Tensor grad)>;

class TrainStep {
 public:
  // Every node the step adds (backward pass, clipping, optimizer update and its state
  // inputs) carries `loc`, the user's compile_train line, not a library file; the update's
  // nodes have the role ir::Role::update.
  TrainStep(Graph& g, const Tensor& loss, std::vector<Parameter*> params, UpdateRule rule, double base_lr,
            TrainOptions options, Loc loc = Loc::current());
  // The private step (options.privacy): gradients of the per-example `loss` over `batch`
  // (inputs whose axis 0 runs over the examples) by DP-SGD; run() returns the mean loss.
  TrainStep(Graph& g, const ExampleLoss& loss, const std::vector<Tensor>& batch, std::vector<Parameter*> params,
            UpdateRule rule, double base_lr, TrainOptions options, Loc loc = Loc::current());
  TrainStep(TrainStep&&) noexcept;
  ~TrainStep();

  double run(const std::vector<Feed>& batch);                    // returns the loss
  std::vector<Array> run_all(const std::vector<Feed>& batch);    // loss, then extra outputs
  std::int64_t steps_done() const { return steps_; }
  double current_lr() const;

  // Current parameter values by dotted name (also written back to the model's Parameters).
  std::map<std::string, Array> parameters() const;
  void load_parameters(const std::map<std::string, Array>& values);  // type-checked

  // The whole training state: parameters and buffers (Dropout's random-stream counters
  // among them), optimizer state ("optim.<param>.<slot>", "optim.step") and the number of
  // steps done ("train.steps_done", which the learning-rate schedule is a function of).
  // Loading it into a step built the same way and running on gives bit-identical results
  // to never having stopped. load_state_dict is strict: a missing or unexpected key or a
  // type mismatch is a UserError listing every one; nothing is changed then.
  std::map<std::string, Array> state_dict() const;
  void load_state_dict(const std::map<std::string, Array>& state);
  // The state dict as one SafeTensors file (written atomically), and back.
  void save(const std::string& path) const;
  void load(const std::string& path);
  const rt::Executable& executable() const;
  std::string ir_text() const;  // the whole step: forward, backward and updates
  const std::vector<ir::NodeId>& roots() const { return roots_; }  // what one step computes
  // The graph the executable runs: the optimized copy, or the built graph without passes.
  const ir::Graph& executed_graph() const;
  const std::vector<passes::PassStats>& pass_stats() const { return pass_stats_; }
  // In the built graph (graph()): per trainable parameter, its name, its input, its
  // gradient (after clipping) and its update's node (nn::explain_gradients reads them).
  struct GradientNodes {
    std::string name;
    ir::NodeId param, grad, update;
  };
  const std::vector<GradientNodes>& gradient_nodes() const { return gradient_nodes_; }
  const ir::Graph& graph() const { return *graph_; }  // as built: forward, backward, update

 private:
  // (loss, gradients of the trainable tensors) given them, their names and the step counter.
  using GradFn = std::function<std::pair<Tensor, std::vector<Tensor>>(const std::vector<Tensor>& trainable,
                                                                      const std::vector<std::string>& names,
                                                                      const Tensor& step)>;
  void build(Graph& g, const GradFn& grads, std::vector<Parameter*> params, const UpdateRule& rule);
  void sync_model();
  std::shared_ptr<ir::Graph> graph_;
  // The parameters' shared storage (not the model: it may move or die after compiling).
  std::vector<std::shared_ptr<ParameterStorage>> params_;
  std::unique_ptr<ir::Graph> optimized_;  // null without passes
  std::vector<passes::PassStats> pass_stats_;
  std::unique_ptr<rt::Executable> exe_;
  std::vector<ir::NodeId> roots_;  // outputs and state updates: what one step computes
  std::vector<GradientNodes> gradient_nodes_;
  double base_lr_;
  TrainOptions options_;
  std::int64_t steps_ = 0;
};

template <class M, class Opt>
TrainStep compile_train(Graph& g, const Tensor& loss, M& model, Opt opt, TrainOptions options = {},
                        Loc loc = Loc::current()) {
  return TrainStep(g, loss, parameters(model, /*include_buffers=*/true),
                   [opt](OptimContext& c, const Parameter& p, Tensor grad) { return opt.update(c, p, grad); },
                   opt.lr, std::move(options), loc);
}

// The private (DP-SGD) training step, still ONE graph: `loss` is the loss of one example
// (the `batch` inputs without their axis 0); options.privacy must be set.
//   auto step = nn::compile_train(g, [&](const std::vector<Tensor>& e) {
//     return nn::cross_entropy(model(e[0].unsqueeze(0)), e[1].reshape({1}));
//   }, {x, y}, model, nn::SGD{.lr = 0.1}, {.privacy = nn::Privacy{.noise_multiplier = 1.1, .max_grad_norm = 1}});
template <class M, class Opt>
TrainStep compile_train(Graph& g, const ExampleLoss& loss, const std::vector<Tensor>& batch, M& model, Opt opt,
                        TrainOptions options, Loc loc = Loc::current()) {
  return TrainStep(g, loss, batch, parameters(model, /*include_buffers=*/true),
                   [opt](OptimContext& c, const Parameter& p, Tensor grad) { return opt.update(c, p, grad); },
                   opt.lr, std::move(options), loc);
}

// An executable for inference with the parameters bound as inputs. It shares their storage:
// every run reads the current values (after more training, too), and it stays valid when
// the model moves or dies.
Executable compile_with_parameters(const Graph& g, std::vector<Tensor> outputs, const std::vector<Parameter*>& params,
                                   Backend backend = Backend::interpreter);
template <class M>
Executable compile_with_parameters(const Graph& g, std::vector<Tensor> outputs, M& model,
                                   Backend backend = Backend::interpreter) {
  return compile_with_parameters(g, std::move(outputs), parameters(model, /*include_buffers=*/true), backend);
}

// An executable for inference with the parameters' current values frozen in as constants
// (like torch.jit.freeze), optimized by `passes`: what depends only on parameters is
// computed once, at compile time (a Linear's transposed weight, say, so a batch-1
// forward streams the weights in the order they are stored). Later changes to the
// parameters are not seen: compile again. Constants stay out of the C99 backend's source.
Executable compile_frozen(const Graph& g, std::vector<Tensor> outputs, const std::vector<Parameter*>& params,
                          Backend backend = Backend::interpreter,
                          std::string_view passes = passes::kDefaultPipeline);
template <class M>
Executable compile_frozen(const Graph& g, std::vector<Tensor> outputs, M& model, Backend backend = Backend::interpreter,
                          std::string_view passes = passes::kDefaultPipeline) {
  return compile_frozen(g, std::move(outputs), parameters(model, /*include_buffers=*/true), backend, passes);
}

}  // namespace mg::nn
