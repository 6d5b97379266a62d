// Tracing loop bodies into regions; see control.hpp.
#include "minigrad/dsl/control.hpp"

#include <memory>

#include "minigrad/ir/control.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg {

namespace {

std::string where_made(const ir::Value& v) {
  return v.node().loc.known() ? " (made at " + to_string(v.node().loc) + ")" : "";
}

}  // namespace

std::pair<Tensors, Tensors> detail::scan(const ScanBody& fn, const Tensors& init, const Tensors& xs,
                                         const ScanOptions& opt, Loc loc) {
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
  if (all.empty()) throw UserError("scan: needs an initial carry or a scanned input (a graph to build in)", at_loc);
  ir::Graph& g = *ir::capture_target(all);
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
      ir::scan(g, ir::clone_region(*body, order), init_v, captured, xs_v, T, opt.reverse);
  std::pair<Tensors, Tensors> out;
  for (std::size_t p = 0; p < parts.size(); ++p) (p < init.size() ? out.first : out.second).emplace_back(parts[p]);
  return out;
}

}  // namespace mg
