// Tracing loop bodies into regions; see control.hpp.
#include "minigrad/dsl/control.hpp"

#include <algorithm>
#include <memory>

#include "minigrad/ir/control.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg {

namespace {

std::string where_made(const ir::Value& v) {
  return v.node().loc.known() ? " (made at " + to_string(v.node().loc) + ")" : "";
}

}  // namespace

std::pair<Tensors, Tensors> detail::scan(const ScanBody& fn, const Tensors& init, const Tensors& xs,
                                         const ScanOptions& opt, Loc loc, ir::Graph* hint) {
  const SourceLoc at_loc = SourceLoc::from(loc);
  LocScope at(at_loc);
  std::vector<ir::Value> all;
  for (const Tensor& t : init) {
    if (!t.valid()) throw UserError("scan: an initial carry is an empty Tensor handle", at_loc);
    all.push_back(t.value());
  }
  for (const Tensor& t : xs) {
    if (!t.valid()) throw UserError("scan: a scanned input is an empty Tensor handle", at_loc);
    all.push_back(t.value());
  }
  if (all.empty() && !hint) throw UserError("scan: needs an initial carry or a scanned input (a graph to build in)", at_loc);
  ir::Graph& g = all.empty() ? *hint : *ir::capture_target(all);
  std::int64_t T = opt.length;
  for (const Tensor& x : xs) {
    if (x.rank() == 0) throw ShapeError("scan: a scanned input is " + to_string(x.type()) + ", it needs a leading axis", at_loc);
    if (T >= 0 && x.shape()[0] != T)
      throw ShapeError("scan: scanned inputs need one leading length: " + to_string(x.type()) + " against " +
                           std::to_string(T) + " steps",
                       at_loc);
    T = x.shape()[0];
  }
  if (T < 0) throw UserError("scan: without scanned inputs, give the trip count (ScanOptions::length)", at_loc);
  if (opt.checkpoint_every < 0 || (opt.checkpoint_every > 0 && T % opt.checkpoint_every != 0))
    throw UserError("scan: checkpoint_every (" + std::to_string(opt.checkpoint_every) +
                        ") must divide the trip count " + std::to_string(T),
                    at_loc);

  // The body, traced once. It is owned by a shared_ptr while traced, so graph_of() works
  // on its tensors; then copied into the node with parameters in the op's order.
  auto body = std::make_shared<ir::Graph>();
  body->set_owner(body);
  Tensors carry, x;
  std::vector<ir::NodeId> order;
  for (std::size_t i = 0; i < init.size(); ++i) {
    carry.emplace_back(body->add_input("carry" + std::to_string(i), init[i].type(), at_loc));
    order.push_back(carry.back().value().id);
  }
  for (std::size_t j = 0; j < xs.size(); ++j) {
    Type t = xs[j].type();
    t.shape.erase(t.shape.begin());
    x.emplace_back(body->add_input("x" + std::to_string(j), t, at_loc));
  }
  std::pair<Tensors, Tensors> r;
  std::vector<ir::Value> captured;
  {
    ir::CaptureScope capture(*body, g);
    {
      LocScope own_lines(SourceLoc{}, true);  // the body's calls stamp their own lines
      r = fn(carry, x);
    }
    if (r.first.size() != init.size())
      throw UserError("scan: the body returns " + std::to_string(r.first.size()) + " carries but the loop has " +
                          std::to_string(init.size()),
                      at_loc);
    for (auto* part : {&r.first, &r.second})
      for (Tensor& t : *part) {
        if (!t.valid()) throw UserError("scan: the body returns an empty Tensor handle", at_loc);
        const ir::Value v = ir::capture(t.value(), *body);  // an outer value returned as is
        if (v.graph != body.get()) throw UserError("scan: the body returns a value of an unrelated graph", at_loc);
        t = Tensor(v);
      }
    for (std::size_t i = 0; i < init.size(); ++i)
      if (r.first[i].type() != init[i].type())
        throw ShapeError("scan: the body returns carry " + std::to_string(i) + " as " + to_string(r.first[i].type()) +
                             where_made(r.first[i].value()) + " but it enters the loop as " +
                             to_string(init[i].type()) + ": a carry keeps its type every step",
                         at_loc);
    captured = capture.captured();
    order.insert(order.end(), capture.captured_inputs().begin(), capture.captured_inputs().end());
  }
  for (const Tensor& t : x) order.push_back(t.value().id);
  for (auto* part : {&r.first, &r.second})
    for (const Tensor& t : *part) body->outputs.push_back(t.value().id);

  std::vector<ir::Value> init_v, xs_v;
  for (const Tensor& t : init) init_v.push_back(t.value());
  for (const Tensor& t : xs) xs_v.push_back(t.value());
  const std::vector<ir::Value> parts =
      ir::scan(g, ir::clone_region(*body, order), init_v, captured, xs_v, T, opt.reverse, opt.checkpoint_every);
  std::pair<Tensors, Tensors> out;
  for (std::size_t p = 0; p < parts.size(); ++p) (p < init.size() ? out.first : out.second).emplace_back(parts[p]);
  return out;
}

Tensors detail::checkpoint(const std::function<Tensors(const Tensors&)>& fn, const Tensors& xs, Loc loc) {
  if (xs.empty()) throw UserError("checkpoint: needs at least one input", SourceLoc::from(loc));
  // One step; the inputs ride as carries (unchanged), so fn is traced on body values and
  // all its nodes live in the region (values of the graph fn uses besides are captured).
  auto [carry, ys] = scan([&](const Tensors& c, const Tensors&) { return std::pair{c, fn(c)}; }, xs, Tensors{},
                          ScanOptions{.length = 1, .checkpoint_every = 1}, loc);
  LocScope at(SourceLoc::from(loc));
  Tensors out;
  for (const Tensor& y : ys) {
    Shape s = y.shape();
    s.erase(s.begin());
    out.emplace_back(ir::reshape(y.value(), s));
  }
  return out;
}

Tensors detail::while_loop(const WhileCond& cond_fn, const WhileBody& body_fn, const Tensors& init,
                           std::int64_t max_steps, Loc loc) {
  const SourceLoc at_loc = SourceLoc::from(loc);
  LocScope at(at_loc);
  std::vector<ir::Value> init_v;
  for (const Tensor& t : init) {
    if (!t.valid()) throw UserError("while_loop: an initial carry is an empty Tensor handle", at_loc);
    init_v.push_back(t.value());
  }
  if (init_v.empty()) throw UserError("while_loop: needs at least one carry", at_loc);
  if (max_steps < 0) throw UserError("while_loop: max_steps must be >= 0", at_loc);
  ir::Graph& g = *ir::capture_target(init_v);

  // Both regions are traced with their own captures; each then gets a parameter for every
  // value either captured, so both take (carries, consts) in one order.
  struct Traced {
    std::shared_ptr<ir::Graph> graph = std::make_shared<ir::Graph>();
    std::vector<ir::NodeId> carry;
    std::vector<ir::Value> outer;     // captured values of g
    std::vector<ir::NodeId> inner;    // their parameters
  };
  auto trace = [&](Traced& t, auto&& fn) {
    t.graph->set_owner(t.graph);
    Tensors c;
    for (std::size_t i = 0; i < init.size(); ++i) {
      c.emplace_back(t.graph->add_input("carry" + std::to_string(i), init[i].type(), at_loc));
      t.carry.push_back(c.back().value().id);
    }
    ir::CaptureScope capture(*t.graph, g);
    {
      LocScope own_lines(SourceLoc{}, true);
      Tensors out = fn(c);
      for (Tensor& r : out) {
        if (!r.valid()) throw UserError("while_loop: a region returns an empty Tensor handle", at_loc);
        r = Tensor(ir::capture(r.value(), *t.graph));
        t.graph->outputs.push_back(r.value().id);
      }
    }
    t.outer = capture.captured();
    t.inner = capture.captured_inputs();
  };
  Traced cond, body;
  trace(cond, [&](const Tensors& c) { return Tensors{cond_fn(c)}; });
  trace(body, body_fn);
  const ir::Graph& cg = *cond.graph;
  if (cg.node(cg.outputs[0]).type != Type{DType::boolean, {}})
    throw ShapeError("while_loop: the condition returns " + to_string(cg.node(cg.outputs[0]).type) +
                         where_made({cond.graph.get(), cg.outputs[0]}) + ", not a bool scalar (bool[])",
                     at_loc);
  const ir::Graph& bg = *body.graph;
  if (bg.outputs.size() != init.size())
    throw UserError("while_loop: the body returns " + std::to_string(bg.outputs.size()) + " carries but the loop has " +
                        std::to_string(init.size()),
                    at_loc);
  for (std::size_t i = 0; i < init.size(); ++i)
    if (bg.node(bg.outputs[i]).type != init[i].type())
      throw ShapeError("while_loop: the body returns carry " + std::to_string(i) + " as " +
                           to_string(bg.node(bg.outputs[i]).type) + where_made({body.graph.get(), bg.outputs[i]}) +
                           " but it enters the loop as " + to_string(init[i].type()) +
                           ": a carry keeps its type every step",
                       at_loc);
  std::vector<ir::Value> consts = cond.outer;
  for (const ir::Value& v : body.outer)
    if (std::find(consts.begin(), consts.end(), v) == consts.end()) consts.push_back(v);
  auto ordered = [&](Traced& t) {
    std::vector<ir::NodeId> order = t.carry;
    for (std::size_t k = 0; k < consts.size(); ++k) {
      const auto it = std::find(t.outer.begin(), t.outer.end(), consts[k]);
      order.push_back(it != t.outer.end() ? t.inner[static_cast<std::size_t>(it - t.outer.begin())]
                                          : t.graph->add_input("unused" + std::to_string(k), consts[k].type()).id);
    }
    return ir::clone_region(*t.graph, order);
  };
  auto c = ordered(cond);
  auto b = ordered(body);
  const std::vector<ir::Value> out = ir::while_loop(g, std::move(c), std::move(b), init_v, consts, max_steps);
  return Tensors(out.begin(), out.end());
}

}  // namespace mg
