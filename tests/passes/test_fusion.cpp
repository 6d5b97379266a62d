// fuse_elementwise and the `fused` op: fusion fires (node counts), keeps results bit for
// bit (tiles, parallel tiles, broadcasts, `full` splats, matmul prologues, bool/where
// chains), removes full-size intermediates (the memory plan's peak drops), respects shared
// values, and the fused node prints, parses back, draws in DOT and is verified.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "minigrad/ir/dot.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/passes/pass_test_util.hpp"

namespace mg {
namespace {

using testing::count_op;
using testing::expect_bit_equal;
using testing::randn;
using testing::run_outputs;

// relu(x @ w + b) * 0.5 + tanh(x @ w2): two matmul groups.
TEST(Fusion, MatmulBiasActivationBecomesOneNode) {
  for (std::int64_t m : {7, 300, 600}) {  // one tile, several tiles, parallel tiles
    ir::Graph g;
    ir::Value x = g.add_input("x", Type{f32, {m, 64}});
    ir::Value w = g.add_input("w", Type{f32, {64, 256}});
    ir::Value b = g.add_input("b", Type{f32, {256}});
    ir::Value h = ir::unary("relu", ir::add(ir::matmul(x, w), ir::broadcast_to(b, {m, 256})));
    ir::Value y = ir::scale(h, 0.5);
    g.outputs = {y.id};
    auto f = passes::fuse_elementwise(g);
    ASSERT_NO_THROW(ir::verify(*f));
    EXPECT_EQ(count_op(*f, "fused"), 1u) << ir::to_text(*f);
    EXPECT_EQ(count_op(*f, "matmul"), 0u);
    EXPECT_EQ(f->size(), 4u) << ir::to_text(*f);  // three inputs and the fused node
    const ir::Node& fused = f->node(f->outputs[0]);
    EXPECT_EQ(fused.attrs.str("kind"), "matmul");
    EXPECT_EQ(fused.regions.at(0)->node(3).op_name(), "matmul");  // the prologue comes first
    rt::Bindings in{{"x", randn(Type{f32, {m, 64}}, 1)}, {"w", randn(Type{f32, {64, 256}}, 2)},
                    {"b", randn(Type{f32, {256}}, 3)}};
    expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "m = " + std::to_string(m));
  }
}

// A Linear layer's weight gradient, (xᵀ g)ᵀ: the GEMM writes gᵀ x in the weight's layout
// (one matmul, no transposed copy of its [in, out] result), the same sums in the same
// order, so the same bits in both executors; a matmul read elsewhere too stays as it is.
TEST(Fusion, TransposedProductBecomesProductOfTransposes) {
  for (auto [batch, in, out] : {std::array<std::int64_t, 3>{128, 784, 128}, {64, 40, 10}, {3, 5, 2}}) {
    ir::Graph g;
    ir::Value x = g.add_input("x", Type{f32, {batch, in}});
    ir::Value gy = g.add_input("g", Type{f32, {batch, out}});
    ir::Value dw = ir::permute(ir::matmul(ir::permute(x, {1, 0}), gy), {1, 0});
    g.outputs = {dw.id};
    auto f = passes::fuse_elementwise(g);
    ASSERT_NO_THROW(ir::verify(*f));
    EXPECT_EQ(count_op(*f, "matmul"), 1u) << ir::to_text(*f);
    EXPECT_EQ(count_op(*f, "permute"), 1u) << ir::to_text(*f);  // gᵀ, read in place
    const ir::Node& mm = f->node(f->outputs[0]);
    ASSERT_EQ(mm.op_name(), "matmul") << ir::to_text(*f);
    EXPECT_EQ(f->node(mm.inputs[1]).op_name(), "input");
    rt::Bindings b{{"x", randn(Type{f32, {batch, in}}, 6)}, {"g", randn(Type{f32, {batch, out}}, 7)}};
    const std::string what = std::to_string(batch) + "x" + std::to_string(in) + "x" + std::to_string(out);
    if (batch >= 8) expect_bit_equal(run_outputs(g, b), run_outputs(*f, b), what);  // our GEMM both ways
    expect_bit_equal(rt::compile(g, g.outputs, {}, rt::Backend::c99).run(b),
                     rt::compile(*f, f->outputs, {}, rt::Backend::c99).run(b), what + ", C99");
  }
  // The product is an output as well: it is computed once, and transposed.
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {16, 8}});
  ir::Value p = ir::matmul(ir::permute(x, {1, 0}), x);
  g.outputs = {p.id, ir::permute(p, {1, 0}).id};
  auto f = passes::fuse_elementwise(g);
  EXPECT_EQ(count_op(*f, "matmul"), 1u) << ir::to_text(*f);
}

TEST(Fusion, ReluMaskWithACastIsOneLoop) {
  // The backward pass of relu: g * cast(x > 0, f32) -- compare, cast, multiply in one node.
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {300, 70}});
  ir::Value gy = g.add_input("g", Type{f32, {300, 70}});
  ir::Value mask = ir::cast(ir::binary("gt", x, ir::zeros_like(x)), f32);
  ir::Value dx = ir::mul(gy, mask);
  g.outputs = {dx.id};
  auto f = passes::fuse_elementwise(g);
  ASSERT_NO_THROW(ir::verify(*f));
  EXPECT_EQ(count_op(*f, "fused"), 1u) << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, "cast"), 0u) << ir::to_text(*f);
  rt::Bindings in{{"x", randn(Type{f32, {300, 70}}, 4)}, {"g", randn(Type{f32, {300, 70}}, 5)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "relu mask");
  // The C99 backend's fused loop converts the compare's byte to f32 the same way.
  expect_bit_equal(run_outputs(g, in), rt::compile(*f, f->outputs, {}, rt::Backend::c99).run(in), "relu mask, C99");
}

TEST(Fusion, RemovesFullSizeIntermediates) {
  ir::Graph g;
  const Shape s{512, 256};
  ir::Value x = g.add_input("x", Type{f32, s});
  ir::Value v = g.add_input("v", Type{f32, s});
  ir::Value b = g.add_input("b", Type{f32, {256}});
  // An Adam-like update: scalars as `full`s, a broadcast bias, sqrt, div (every value
  // read once: a value read twice would end a group).
  ir::Value m = ir::add(ir::scale(v, 0.9), ir::scale(ir::square(x), 0.1));
  ir::Value y = ir::sub(x, ir::div(ir::scale(m, 1e-3), ir::add_scalar(ir::sqrt(v), 1e-8)));
  y = ir::add(y, ir::broadcast_to(b, s));
  g.outputs = {y.id};
  auto f = passes::run_pipeline(g, "fold,cse,fuse,dce").graph;
  EXPECT_EQ(count_op(*f, "fused"), 1u) << ir::to_text(*f);
  EXPECT_EQ(f->size(), 4u) << ir::to_text(*f);
  rt::Bindings in{{"x", randn(Type{f32, s}, 4)}, {"v", randn(Type{f32, s}, 5)}, {"b", randn(Type{f32, {256}}, 6)}};
  in["v"] = Array::full(Type{f32, s}, 0.25);
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "adam-like chain");
  rt::Executable before = rt::compile(g, g.outputs), after = rt::compile(*f, f->outputs);
  EXPECT_GE(before.peak_bytes(), 2 * (Type{f32, s}.nbytes()));
  EXPECT_EQ(after.peak_bytes(), 0u) << "the fused node's only full-size buffer is the output";
  EXPECT_EQ(after.num_steps(), 1u);
}

TEST(Fusion, SharedValuesEndGroupsAndBoolChainsFuse) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {40, 30}});
  ir::Value t = ir::tanh(x);             // read by two chains: computed once
  ir::Value a = ir::exp(ir::neg(t));
  ir::Value c = ir::binary("gt", t, ir::zeros_like(t));
  ir::Value w = ir::where(ir::logical_not(c), a, ir::square(t));
  g.outputs = {w.id, t.id};
  auto f = passes::fuse_elementwise(g);
  ASSERT_NO_THROW(ir::verify(*f));
  EXPECT_EQ(count_op(*f, "tanh"), 1u) << ir::to_text(*f);
  EXPECT_EQ(count_op(*f, "fused"), 1u) << ir::to_text(*f);
  rt::Bindings in{{"x", randn(Type{f64, {40, 30}}, 7)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), "shared tanh");
}

// Broadcast patterns across tile boundaries: leading, middle and trailing size-1 axes,
// splats, every element size (f64, f32, i64, bool through `where`).
TEST(Fusion, BroadcastsOfEveryPatternAcrossTiles) {
  const Shape loop{6, 5, 300, 7};  // 63000 elements: many tiles, runs of 7 crossing tiles
  for (DType dt : {f64, f32}) {
    ir::Graph g;
    rt::Bindings in;
    ir::Value x = g.add_input("x", Type{dt, loop});
    in["x"] = randn(Type{dt, loop}, 20);
    ir::Value acc = ir::tanh(x);
    int k = 0;
    for (Shape s : {Shape{7}, Shape{300, 1}, Shape{5, 1, 7}, Shape{6, 1, 1, 1}, Shape{}, Shape{1, 5, 300, 1}}) {
      std::string name = "b" + std::to_string(k++);
      ir::Value b = g.add_input(name, Type{dt, s});
      in[name] = randn(Type{dt, s}, 30 + static_cast<std::uint64_t>(k));
      acc = ir::add(ir::mul(acc, ir::broadcast_to(b, loop)), x);
    }
    ir::Value n = g.add_input("n", Type{i64, {300, 1}});
    Array nv(Type{i64, {300, 1}});
    for (std::int64_t i = 0; i < 300; ++i) nv.set(i, i % 3 - 1);
    in["n"] = nv;
    ir::Value nb = ir::broadcast_to(n, loop);
    ir::Value c = ir::binary("gt", nb, ir::zeros_like(nb));  // i64 elements, a bool result
    ir::Value y = ir::where(c, acc, ir::neg(acc));
    g.outputs = {y.id};
    auto f = passes::run_pipeline(g, "fold,cse,fuse,dce").graph;
    EXPECT_GE(count_op(*f, "fused"), 1u);
    EXPECT_EQ(count_op(*f, "broadcast_to"), 0u) << ir::to_text(*f);
    expect_bit_equal(run_outputs(g, in), run_outputs(*f, in), std::string("broadcasts ") + std::string(name_of(dt)));
  }
}

TEST(Fusion, PrintsParsesAndDraws) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3, 5}});
  ir::Value w = g.add_input("w", Type{f64, {5, 4}});
  ir::Value b = g.add_input("b", Type{f64, {4}});
  ir::Value y = ir::unary("gelu", ir::add(ir::matmul(x, w), ir::broadcast_to(b, {3, 4})));
  ir::Value z = ir::add(ir::scale(ir::exp(x), 2.0), ir::broadcast_to(ir::sum_to(x, {5}), {3, 5}));
  g.outputs = {y.id, z.id};
  g.output_names = {"y", "z"};
  auto f = passes::fuse_elementwise(g);
  EXPECT_EQ(count_op(*f, "fused"), 2u);
  const std::string text = ir::to_text(*f);
  EXPECT_NE(text.find("fused(%x, %w, %b) {dtype = f64, kind = \"matmul\", shape = [3, 4]}"), std::string::npos) << text;
  auto p = ir::parse(text, "fused.mgir");
  EXPECT_EQ(ir::to_text(*p), text);
  rt::Bindings in{{"x", randn(Type{f64, {3, 5}}, 8)}, {"w", randn(Type{f64, {5, 4}}, 9)}, {"b", randn(Type{f64, {4}}, 10)}};
  expect_bit_equal(run_outputs(g, in), run_outputs(*p, in), "parsed fused graph");
  const std::string dot = ir::to_dot(*f);
  EXPECT_NE(dot.find("fused"), std::string::npos);
  EXPECT_NE(dot.find("label=\"fused region 0 of n3\""), std::string::npos) << dot;
}

TEST(Fusion, TheReadmeExampleParsesAndPrintsBack) {
  namespace fs = std::filesystem;
  std::string doc;
  for (fs::path p : {fs::path(__FILE__).parent_path() / "../../ir/README.md", fs::current_path() / "ir/README.md"}) {
    std::ifstream in(p);
    if (!in) continue;
    std::ostringstream s;
    s << in.rdbuf();
    doc = s.str();
    break;
  }
  auto at = doc.find("## Fused nodes");
  ASSERT_NE(at, std::string::npos);
  auto begin = doc.find("```mgir\n", at) + 8;
  std::string example = doc.substr(begin, doc.find("```", begin) - begin);
  auto g = ir::parse(example, "README.md");
  EXPECT_EQ(ir::to_text(*g), example);
}

TEST(Fusion, TheVerifierRejectsBodiesOutsideTheContract) {
  auto bad = [](const std::string& body, const std::string& attrs, const std::string& type) {
    return "graph(%x: f64[2,3]) {\n  %1 = fused(%x) {" + attrs + "} : " + type + "\n    region(%a0: f64[2,3]) {\n" +
           body + "    }\n  return %1\n}\n";
  };
  const std::string ew = "dtype = f64, kind = \"elementwise\", shape = [2, 3]";
  // A reduction inside, a result of the wrong type, an unknown kind, a missing region.
  EXPECT_THROW(ir::parse(bad("      %1 = reduce_sum(%a0) {axes = [1], keepdim = true} : f64[2,1]\n"
                             "      %2 = broadcast_to(%1) {shape = [2, 3]} : f64[2,3]\n      return %2\n",
                             ew, "f64[2,3]")),
               ParseError);
  EXPECT_THROW(ir::parse(bad("      %1 = exp(%a0) : f64[2,3]\n      return %1\n",
                             "dtype = f32, kind = \"elementwise\", shape = [2, 3]", "f32[2,3]")),
               ParseError);
  EXPECT_THROW(ir::parse(bad("      %1 = exp(%a0) : f64[2,3]\n      return %1\n",
                             "dtype = f64, kind = \"loop\", shape = [2, 3]", "f64[2,3]")),
               ParseError);
  EXPECT_NO_THROW(ir::parse(bad("      %1 = exp(%a0) : f64[2,3]\n      %2 = neg(%1) : f64[2,3]\n      return %2\n", ew,
                                "f64[2,3]")));
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value f = ir::make_op(ir::op("fused"), {x}, {{"kind", std::string("elementwise")}, {"shape", I64List{2}}, {"dtype", f64}});
  g.outputs = {f.id};
  EXPECT_THROW(ir::verify(g), VerifyError);  // no region
}

}  // namespace
}  // namespace mg
