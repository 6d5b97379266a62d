// IR core: types, attributes, graph construction, the builder's checks, the verifier and
// the printer.
#include <gtest/gtest.h>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/ir/verifier.hpp"

namespace mg::ir {
namespace {

std::vector<NodeId> ids(const Operands& in) { return {in.begin(), in.end()}; }

TEST(Types, ShapesAndNames) {
  EXPECT_EQ(to_string(Type{f64, {3, 4}}), "f64[3,4]");
  EXPECT_EQ(to_string(Type{boolean, {}}), "bool[]");
  EXPECT_EQ((Type{f32, {}}).numel(), 1);
  EXPECT_EQ((Type{f32, {2, 0, 3}}).numel(), 0);
  EXPECT_EQ((Type{f64, {2, 3}}).nbytes(), 48u);
  EXPECT_EQ(strides_of({2, 3, 4}), (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(dtype_from_name("i64"), i64);
  EXPECT_FALSE(dtype_from_name("f16").has_value());
}

TEST(Attrs, SortedTypedAccess) {
  Attrs a{{"b", std::int64_t{2}}, {"a", 1.5}};
  EXPECT_EQ(a.items()[0].first, "a");
  EXPECT_DOUBLE_EQ(a.f64("a"), 1.5);
  EXPECT_EQ(a.i64("b"), 2);
  EXPECT_THROW(a.f64("b"), std::logic_error);
  EXPECT_THROW(a.i64("missing"), std::logic_error);
  a.set("a", 3.0);
  EXPECT_EQ(a.items().size(), 2u);
}

TEST(ArrayBasics, FullCastCloneReshape) {
  Array a = Array::from<double>({2, 2}, {1.5, -2.7, 0, 3});
  Array i = a.cast(i64);
  EXPECT_EQ(i.data<std::int64_t>()[1], -2);  // truncation toward zero
  Array b = a.cast(boolean);
  EXPECT_EQ(b.data<std::uint8_t>()[2], 0);
  EXPECT_EQ(b.data<std::uint8_t>()[0], 1);
  Array c = a.clone();
  c.set(0, 9);
  EXPECT_EQ(a.at(0), 1.5);
  EXPECT_EQ(a.reshaped({4}).shape(), (Shape{4}));
  EXPECT_THROW(a.reshaped({3}), std::invalid_argument);
  EXPECT_THROW(Array::from<double>({3}, {1, 2}), std::invalid_argument);
}

TEST(ArrayBasics, FromAVector) {
  const std::vector<float> xs{1, 2, 3, 4, 5, 6};
  Array a = Array::from({2, 3}, xs);  // the dtype from the vector's
  EXPECT_EQ(a.type(), (Type{f32, {2, 3}}));
  EXPECT_EQ(a.at(5), 6);
  const std::vector<std::int64_t> is{7, 8};
  EXPECT_EQ(Array::from<std::int64_t>({2}, is).at(1), 8);
  EXPECT_THROW(Array::from({4}, xs), std::invalid_argument);
  EXPECT_EQ(Array::from<double>({2}, {1, 2}).dtype(), f64);  // a braced list still picks the list overload
}

TEST(GraphBuild, InputsAreUniqueAndOrdered) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  EXPECT_THROW(g.add_input("x", Type{f64, {3}}), UserError);
  EXPECT_THROW(g.add_input("", Type{f64, {3}}), UserError);
  EXPECT_THROW(g.add_input("neg", Type{f64, {-1}}), ShapeError);
  EXPECT_EQ(g.input("x"), x);
  EXPECT_FALSE(g.input("nope").valid());
  Value y = exp(x);
  EXPECT_GT(y.id, x.id);
  EXPECT_EQ(ids(y.node().inputs), std::vector<NodeId>{x.id});
}

TEST(Builder, ChecksArityAttributesAndTypes) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  Value y = g.add_input("y", Type{f64, {4}});
  EXPECT_THROW(make_op(op("add"), {x}), UserError);                       // arity
  EXPECT_THROW(make_op(op("exp"), {x}, {{"bogus", 1.0}}), UserError);     // unknown attr
  EXPECT_THROW(make_op(op("leaky_relu"), {x}, {{"alpha", std::string("a")}}), UserError);  // kind
  EXPECT_THROW(add(x, y), ShapeError);                                     // shapes
  EXPECT_THROW(op("no_such_op"), UserError);
  Value l = make_op(op("leaky_relu"), {x}, {{"alpha", std::int64_t{1}}});  // int widens to f64
  EXPECT_DOUBLE_EQ(l.node().attrs.f64("alpha"), 1.0);
  Value d = make_op(op("leaky_relu"), {x});  // default filled in
  EXPECT_DOUBLE_EQ(d.node().attrs.f64("alpha"), 0.01);
  Graph other;
  Value z = other.add_input("z", Type{f64, {3}});
  EXPECT_THROW(add(x, z), UserError);  // inputs from two graphs
}

TEST(Builder, ShapeErrorNamesOpTypesAndLine) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  Value y = g.add_input("y", Type{f32, {3}});
  LocScope at(SourceLoc{"model.cpp", 42, 7});
  try {
    add(x, y);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("model.cpp:42"), std::string::npos) << m;
    EXPECT_NE(m.find("'add'"), std::string::npos) << m;
    EXPECT_NE(m.find("f64[3]"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[3]"), std::string::npos) << m;
  }
}

TEST(Verifier, AcceptsBuiltGraphsAndRejectsTampering) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  Value y = reduce_sum(exp(x), {1}, false);
  EXPECT_NO_THROW(verify(g));
  g.mutable_node(y.id).type = Type{f64, {5}};  // a type the rule does not give
  try {
    verify(g);
    FAIL() << "expected a VerifyError";
  } catch (const VerifyError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("reduce_sum"), std::string::npos) << m;
    EXPECT_NE(m.find("f64[5]"), std::string::npos) << m;
    EXPECT_NE(m.find("> %"), std::string::npos) << m;  // the context marks the node
  }
}

TEST(Verifier, RejectsMissingAttributeAndBadOutput) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2}});
  Value y = make_op(op("leaky_relu"), {x});
  g.mutable_node(y.id).attrs = Attrs{};
  EXPECT_THROW(verify(g), VerifyError);
  Graph h;
  h.add_input("x", Type{f64, {2}});
  h.outputs = {7};
  EXPECT_THROW(verify(h), VerifyError);
}

TEST(Verifier, RecursesIntoRegions) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2}});
  Value y = exp(x);
  auto body = std::make_unique<Graph>();
  Value a = body->add_input("a", Type{f64, {2}});
  Value b = neg(a);
  body->outputs = {b.id};
  body->mutable_node(b.id).type = Type{f32, {2}};  // broken inside the region
  g.mutable_node(y.id).regions.push_back(std::move(body));
  EXPECT_THROW(verify(g), VerifyError);
}

TEST(Printer, OneOpPerLineWithTypesAttrsAndLocations) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  Value y;
  {
    LocScope at(SourceLoc{"net.cpp", 9, 1});
    y = reduce_sum(exp(x), {1}, true);
  }
  std::vector<NodeId> outs{y.id};
  std::string t = to_text(g, outs);
  EXPECT_NE(t.find("graph(%x: f64[2,3])"), std::string::npos) << t;
  EXPECT_NE(t.find("= exp(%x) : f64[2,3]  loc(\"net.cpp\":9:1)"), std::string::npos) << t;
  EXPECT_NE(t.find("reduce_sum(%1) {axes = [1], keepdim = true} : f64[2,1]"), std::string::npos) << t;
  EXPECT_NE(t.find("return out0 = %2"), std::string::npos) << t;
}

TEST(Registry, EveryFamilyRegistered) {
  for (const char* name : {"exp", "add", "where", "reduce_sum", "softmax", "reshape", "slice", "matmul",
                           "gather", "cumsum", "full", "random_normal", "cast"})
    EXPECT_NE(find_op(name), nullptr) << name;
  EXPECT_GE(all_ops().size(), 70u);
}

}  // namespace
}  // namespace mg::ir

namespace mg::ir {
namespace {

TEST(Graph, RetainLiveDropsDeadNodesInPlace) {
  Graph g;
  // Rank 5: past Shape's inline dims, so the shape's heap array witnesses a move.
  Value x = g.add_input("x", Type{f64, {1, 1, 1, 1, 3}});
  Value dead1 = exp(x);
  Value y = g.add_input("y", Type{f64, {1, 1, 1, 1, 3}});
  Value dead2 = mul(dead1, y);
  Value live = add(x, y);
  Value out = neg(live);
  (void)dead2;
  g.outputs = {out.id, live.id};
  const std::int64_t* live_shape = g.node(live.id).type.shape.data();
  g.retain_live();
  ASSERT_EQ(g.size(), 4u) << to_text(g);                // x, y, add, neg
  EXPECT_EQ(g.node(2).type.shape.data(), live_shape);  // moved into its new slot, not copied
  for (NodeId id = 0; id < g.size(); ++id) EXPECT_EQ(g.node(id).id, id);
  EXPECT_EQ(g.inputs(), (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(g.input("y").id, 1u);
  EXPECT_EQ(g.outputs, (std::vector<NodeId>{3, 2}));
  EXPECT_EQ(ids(g.node(2).inputs), (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(ids(g.node(3).inputs), (std::vector<NodeId>{2}));
  EXPECT_NO_THROW(verify(g));
}

}  // namespace
}  // namespace mg::ir
