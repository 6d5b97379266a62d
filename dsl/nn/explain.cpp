// explain_gradients and visualize(step); see explain.hpp. The activation checks know the
// three activations by name: they are a diagnosis of what those functions do (a ReLU
// that is zero for every sample passes no gradient), not a property of the IR.
#include "minigrad/dsl/nn/explain.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg::nn {

namespace {

double norm(const Array& a) {
  double s = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) s += a.at(i) * a.at(i);
  return std::sqrt(s);
}

double diff_norm(const Array& a, const Array& b) {
  double s = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) s += (a.at(i) - b.at(i)) * (a.at(i) - b.at(i));
  return std::sqrt(s);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

ActivationHealth activation(const ir::Graph& g, ir::NodeId id, const Array& out) {
  const ir::Node& n = g.node(id);
  ActivationHealth h{ir::value_name(g, id) + " " + n.op_name(), n.loc.known() ? to_string(n.loc) : "", n.op_name()};
  const std::int64_t batch = n.type.rank() ? n.type.shape[0] : 1;
  h.units = batch ? out.numel() / batch : 0;
  if (h.op == "relu") {
    std::int64_t dead = 0;
    for (std::int64_t u = 0; u < h.units; ++u) {
      bool never = true;
      for (std::int64_t b = 0; b < batch && never; ++b) never = out.at(b * h.units + u) <= 0;
      dead += never;
    }
    h.dead = h.units ? static_cast<double>(dead) / static_cast<double>(h.units) : 0;
  } else {
    const double lo = h.op == "sigmoid" ? 0.0 : -1.0;
    std::int64_t sat = 0;
    for (std::int64_t i = 0; i < out.numel(); ++i) sat += out.at(i) < lo + 0.01 || out.at(i) > 0.99;
    h.saturated = out.numel() ? static_cast<double>(sat) / static_cast<double>(out.numel()) : 0;
  }
  return h;
}

}  // namespace

GradientReport explain_gradients(const TrainStep& step, const std::vector<Feed>& batch, const ExplainThresholds& t) {
  const ir::Graph& g = step.graph();
  std::vector<ir::NodeId> roots;
  for (auto& p : step.gradient_nodes()) roots.insert(roots.end(), {p.grad, p.update});
  std::vector<ir::NodeId> acts;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.kind == ir::NodeKind::op && n.role == ir::Role::forward &&
        (n.op_name() == "relu" || n.op_name() == "sigmoid" || n.op_name() == "tanh"))
      acts.push_back(id);
  }
  roots.insert(roots.end(), acts.begin(), acts.end());
  // Parameters and optimizer state as plain inputs: nothing here is persistent.
  rt::Bindings b;
  for (auto& f : batch) b.emplace(f.name, f.value);
  const std::map<std::string, Array> state = step.state_dict();
  for (ir::NodeId id : g.inputs())
    if (auto it = state.find(g.node(id).name); it != state.end()) b.emplace(it->first, it->second);
  b["optim.lr"] = Array::scalar(f64, step.current_lr());
  const std::vector<Array> vals = rt::compile(g, roots).run(b);

  GradientReport r;
  r.thresholds = t;
  std::size_t k = 0;
  for (auto& p : step.gradient_nodes()) {
    const Array& w = state.at(p.name);
    const Array& gr = vals[k++];
    const Array& next = vals[k++];
    r.parameters.push_back({p.name, norm(w), norm(gr), diff_norm(next, w)});
  }
  for (ir::NodeId id : acts) r.activations.push_back(activation(g, id, vals[k++]));

  double largest = 0;
  for (auto& p : r.parameters) largest = std::max(largest, std::isfinite(p.grad_norm) ? p.grad_norm : 0.0);
  for (auto& p : r.parameters) {
    if (!std::isfinite(p.grad_norm) || p.grad_norm > t.exploding_grad_norm)
      r.diagnosis.push_back("exploding gradient: " + p.name + " has ||grad|| = " + fmt("%.3g", p.grad_norm) + " (> " +
                            fmt("%g", t.exploding_grad_norm) + ")");
    else if (p.grad_norm < t.vanishing_grad_norm || p.grad_norm < t.vanishing_vs_largest * largest)
      r.diagnosis.push_back("vanishing gradient: " + p.name + " has ||grad|| = " + fmt("%.3g", p.grad_norm) + " (< " +
                            fmt("%g", t.vanishing_grad_norm) + ", or < " + fmt("%g", t.vanishing_vs_largest) +
                            " x the largest, " + fmt("%.3g", largest) + ")");
    if (p.weight_norm > 0 && p.update_ratio() < t.not_learning_ratio)
      r.diagnosis.push_back("not learning: " + p.name + " moves by " + fmt("%.3g", p.update_ratio()) +
                            " of its norm per step (< " + fmt("%g", t.not_learning_ratio) + "; about 1e-3 is healthy)");
  }
  for (auto& a : r.activations) {
    if (a.op == "relu" && a.dead > t.dead_fraction)
      r.diagnosis.push_back("dead units: " + fmt("%.0f", 100 * a.dead) + "% of the ReLU units of " + a.node + " at " +
                            a.where + " are zero for every sample of the batch (> " +
                            fmt("%.0f", 100 * t.dead_fraction) + "%): no gradient flows through them");
    if (a.op != "relu" && a.saturated > t.saturated_fraction)
      r.diagnosis.push_back("saturated units: " + fmt("%.0f", 100 * a.saturated) + "% of the " + a.op + " outputs of " +
                            a.node + " at " + a.where + " are within 0.01 of their bounds (> " +
                            fmt("%.0f", 100 * t.saturated_fraction) + "%): their derivative is nearly 0");
  }
  return r;
}

std::string GradientReport::text() const {
  std::string s;
  char buf[512];
  std::size_t w = 9;
  for (auto& p : parameters) w = std::max(w, p.name.size());
  std::snprintf(buf, sizeof buf, "%-*s %12s %12s %14s\n", static_cast<int>(w), "parameter", "||w||", "||grad||",
                "||update||/||w||");
  s += buf;
  for (auto& p : parameters) {
    std::snprintf(buf, sizeof buf, "%-*s %12.4g %12.4g %14.4g\n", static_cast<int>(w), p.name.c_str(), p.weight_norm,
                  p.grad_norm, p.update_ratio());
    s += buf;
  }
  if (!activations.empty()) {
    s += "activation                  units    dead  saturated  where\n";
    for (auto& a : activations) {
      std::snprintf(buf, sizeof buf, "%-24s %8lld %6.1f%% %9.1f%%  %s\n", a.node.c_str(),
                    static_cast<long long>(a.units), 100 * a.dead, 100 * a.saturated, a.where.c_str());
      s += buf;
    }
  }
  if (diagnosis.empty()) s += "diagnosis: healthy (no threshold crossed)\n";
  for (auto& d : diagnosis) s += "diagnosis: " + d + "\n";
  s += "thresholds: exploding ||grad|| > " + fmt("%g", thresholds.exploding_grad_norm) + "; vanishing ||grad|| < " +
       fmt("%g", thresholds.vanishing_grad_norm) + " or < " + fmt("%g", thresholds.vanishing_vs_largest) +
       " x the largest; not learning ||update||/||w|| < " + fmt("%g", thresholds.not_learning_ratio) + "; dead ReLU > " +
       fmt("%.0f", 100 * thresholds.dead_fraction) + "% of units; saturated > " +
       fmt("%.0f", 100 * thresholds.saturated_fraction) + "% of outputs\n";
  return s;
}

std::string visualize(const TrainStep& step, const rt::glassbox::AsciiViewOptions& options) {
  if (&step.executed_graph() == &step.graph()) return rt::glassbox::ascii_view(step.graph(), step.roots(), options);
  return rt::glassbox::ascii_view(step.executed_graph(), {}, options);  // optimized: its outputs are the roots
}

}  // namespace mg::nn
