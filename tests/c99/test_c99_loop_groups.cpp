// The C99 emitter's loop groups (runtime/c99/loop_groups.hpp): an Adam update's three flat
// loops over one parameter (moment, second moment, update; scalars read whole) run chunk
// by chunk in one loop and give the interpreter's values; loops of other lengths, and one
// element count not past a chunk, stay alone.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using mg::testing::randn;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Adam over a parameter of `shape` (moments m, v; step size lr and bias correction c, scalars).
void adam(ir::Graph& g, const Shape& shape, const std::string& p) {
  const Type t{f32, shape};
  ir::Value w = g.add_input(p + "w", t), grad = g.add_input(p + "g", t);
  ir::Value m = g.add_input(p + "m", t), v = g.add_input(p + "v", t);
  ir::Value lr = g.add_input(p + "lr", Type{f32, {}}), c = g.add_input(p + "c", Type{f32, {}});
  ir::Value m1 = ir::add(m, ir::scale(ir::sub(grad, m), 0.1));
  ir::Value v1 = ir::add(ir::scale(v, 0.999), ir::scale(ir::mul(grad, grad), 0.001));
  ir::Value den = ir::add(ir::div(ir::unary("sqrt", v1), ir::broadcast_to(c, shape)), ir::full_like(v1, 1e-8));
  ir::Value w1 = ir::sub(w, ir::mul(ir::broadcast_to(lr, shape), ir::div(m1, den)));
  for (ir::Value o : {m1, v1, w1}) g.outputs.push_back(o.id);
}

// The bodies of the loop groups: the entry calls each group's function right after its
// `/* steps a-b: one loop over chunks ... */` comment.
std::vector<std::string> group_bodies(const std::string& src) {
  std::vector<std::string> bodies;
  for (std::size_t at = src.find("one loop over chunks"); at != std::string::npos;
       at = src.find("one loop over chunks", at + 1)) {
    const std::size_t call = src.find("mg_rc = ", at) + 8;
    const std::string name = src.substr(call, src.find('(', call) - call);
    const std::size_t def = src.find("static MG_NOINLINE int " + name + "(");
    EXPECT_NE(def, std::string::npos) << name << " is not defined:\n" << src;
    if (def == std::string::npos) continue;
    bodies.push_back(src.substr(def, src.find("\n}\n", def) - def));
  }
  return bodies;
}

// `g`'s C99 module loops by rows of `row` elements somewhere, never inside a loop group,
// and computes what the interpreter does.
void expect_rows_outside_groups(const ir::Graph& g, const rt::Bindings& in, int row) {
  rt::c99::Options o;
  o.standalone = false;
  const std::string src = rt::c99::emit_module(g, g.outputs, {}, o).source;
  const std::string rows = "io * " + std::to_string(row);
  ASSERT_NE(src.find("const int64_t i = " + rows + " + ii;"), std::string::npos) << src;
  for (const std::string& body : group_bodies(src)) {
    EXPECT_NE(body.find("mg_lo"), std::string::npos) << body;
    EXPECT_EQ(body.find(rows), std::string::npos) << body;
  }
  const auto want = rt::compile(g, g.outputs).run(in);
  const auto got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in);
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::int64_t i = 0; i < want[k].numel(); ++i)
      ASSERT_NEAR(got[k].at(i), want[k].at(i), 16 * FLT_EPSILON * std::max(1.0, std::abs(want[k].at(i))));
}

TEST(C99LoopGroups, AdamUpdatesRunAsOneChunkedLoop) {
  ir::Graph g;
  adam(g, {128, 784}, "a.");  // 98 chunks: one group of three loops
  adam(g, {10, 128}, "b.");   // two chunks: a group of its own (another length)
  adam(g, {128}, "c.");       // one chunk: nothing to gain, loops alone
  auto f = passes::fuse_elementwise(g);
  rt::Bindings in;
  std::uint64_t seed = 1;
  for (ir::NodeId id : f->inputs()) {
    const ir::Node& n = f->node(id);
    Array a = randn(n.type, seed++);
    if (n.name.back() == 'v' || n.name.back() == 'c')  // second moments and sqrt(1 - b2^t): positive
      for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, std::abs(a.at(i)) + 0.1);
    in[n.name] = a;
  }
  rt::c99::Options o;
  o.standalone = false;
  const std::string src = rt::c99::emit_module(*f, f->outputs, {}, o).source;
  EXPECT_EQ(count(src, "one loop over chunks"), 2u) << src;
  EXPECT_NE(src.find("for (int64_t i = mg_lo; i < mg_hi; ++i)"), std::string::npos);
  const auto want = rt::compile(*f, f->outputs).run(in);
  const auto got = rt::compile(*f, f->outputs, {}, rt::Backend::c99).run(in);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::int64_t i = 0; i < want[k].numel(); ++i)
      ASSERT_NEAR(got[k].at(i), want[k].at(i), 16 * FLT_EPSILON * std::max(1.0, std::abs(want[k].at(i))))
          << "output " << k << " element " << i;
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

// A fused node reading a bias broadcast along rows loops over rows (io, ii), not flat: it
// must stay out of a group. Inside one it ran whole in every chunk (the miniGPT step, 7x).
TEST(C99LoopGroups, ARowLoopStaysOutOfGroups) {
  ir::Graph g;
  const Type t{f32, {64, 128}};
  ir::Value x = g.add_input("x", t), y = g.add_input("y", t), bs = g.add_input("b", Type{f32, {4, 128}});
  ir::Value b = ir::reduce("reduce_sum", bs, {0}, false);  // in the arena: a group may read it whole
  ir::Value a = ir::mul(ir::add(x, y), x);                           // flat
  ir::Value r = ir::mul(ir::add(a, ir::broadcast_to(b, t.shape)), y);  // rows: the bias divides
  ir::Value z = ir::sub(ir::unary("exp", r), r);                      // flat again
  g.outputs = {a.id, r.id, z.id};
  auto f = passes::fuse_elementwise(g);
  rt::Bindings in{{"x", randn(t, 1)}, {"y", randn(t, 2)}, {"b", randn(Type{f32, {4, 128}}, 3)}};
  expect_rows_outside_groups(*f, in, 128);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

// An elementwise expression reading a permuted view (read in place, strided) loops by rows
// too: after a flat step of its length it stays alone. In a group it ran whole in every
// chunk (attention's q * scale after the heads' permute: 128 chunks, a third of the step).
TEST(C99LoopGroups, AnExpressionReadingAStridedViewStaysOutOfGroups) {
  ir::Graph g;
  const Type t{f32, {8, 4, 64, 16}};
  ir::Value qs = g.add_input("q", Type{f32, {2, 8, 64, 4, 16}}), y = g.add_input("y", t);
  ir::Value q = ir::reduce("reduce_sum", qs, {0}, false);  // in the arena, written before the group
  ir::Value a = ir::add(y, y);                             // flat
  ir::Value r = ir::mul(ir::permute(q, {0, 2, 1, 3}), a);  // the view: rows
  g.outputs = {a.id, r.id};
  auto f = passes::fuse_elementwise(g);
  rt::Bindings in{{"q", randn(Type{f32, {2, 8, 64, 4, 16}}, 1)}, {"y", randn(t, 2)}};
  expect_rows_outside_groups(*f, in, 16);
}

}  // namespace
}  // namespace mg
