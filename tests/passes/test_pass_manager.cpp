// The pass manager: the pipeline spec parser (Spirit X3) and its errors, the pass table,
// statistics, verification and --dump-after, the `grad` pipeline pass, and training
// steps compiled with the default pipeline giving the unoptimized step's bits while
// running fewer nodes.
#include <gtest/gtest.h>

#include <sstream>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tests/passes/pass_test_util.hpp"

namespace mg {

struct SmallMlp {
  nn::Linear fc1{20, 32}, fc2{32, 8};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
};

}  // namespace mg

BOOST_HANA_ADAPT_STRUCT(mg::SmallMlp, fc1, fc2);

namespace mg {
namespace {

TEST(Pipeline, ParsesSpecs) {
  using V = std::vector<std::string>;
  EXPECT_EQ(passes::parse_pipeline("grad,rewrite,fold,cse,fuse,dce"), (V{"grad", "rewrite", "fold", "cse", "fuse", "dce"}));
  EXPECT_EQ(passes::parse_pipeline(" fold , cse,fold "), (V{"fold", "cse", "fold"}));
  EXPECT_EQ(passes::parse_pipeline(""), V{});
}

TEST(Pipeline, NonAsciiBytesAreAnErrorNotUndefinedBehaviour) {
  // x3::alpha/space called isalpha/isspace on negative chars (aborts in debug builds).
  EXPECT_THROW(passes::parse_pipeline("fold,\xe9\xff"), UserError);
  EXPECT_THROW(passes::parse_pipeline("\x80"), UserError);
  EXPECT_THROW(passes::parse_pipeline("fold\xa0,cse"), UserError);
}

TEST(Pipeline, ReportsBadSpecsWithTheColumn) {
  auto message = [](std::string_view spec) {
    try {
      passes::parse_pipeline(spec);
    } catch (const UserError& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_NE(message("fold,,cse").find("column 6: expected a pass name after ',', got ','"), std::string::npos)
      << message("fold,,cse");
  EXPECT_NE(message("fold, ").find("column 7: expected a pass name after ',', got the end"), std::string::npos)
      << message("fold, ");
  EXPECT_NE(message("fold cse").find("column 6: expected ',' or the end, got 'c'"), std::string::npos) << message("fold cse");
  EXPECT_NE(message("1fold").find("column 1: expected a pass name, got '1'"), std::string::npos) << message("1fold");
  EXPECT_NE(message("fold,fusion").find("column 6: unknown pass 'fusion' (known: grad, rewrite, rewrite-fast, fold, cse, fuse, dce, hoist)"),
            std::string::npos)
      << message("fold,fusion");
  EXPECT_NE(message("fold;").find("column 5: expected ',' or the end, got ';'"), std::string::npos) << message("fold;");
}

TEST(Pipeline, RunsPassesWithStatsVerifyAndDumps) {
  testing::RandomGraph r = testing::random_graph(3);
  std::ostringstream dump;
  passes::PipelineOptions opts{.verify = true, .dump_after = "fuse", .dump = &dump};
  passes::PipelineResult res = passes::run_pipeline(*r.g, "fold,cse,fuse,dce", opts);
  ASSERT_EQ(res.stats.size(), 4u);
  EXPECT_EQ(res.stats[0].name, "fold");
  EXPECT_EQ(res.stats[0].nodes_before, r.g->size());
  for (std::size_t i = 1; i < res.stats.size(); ++i) EXPECT_EQ(res.stats[i].nodes_before, res.stats[i - 1].nodes_after);
  EXPECT_EQ(res.stats.back().nodes_after, res.graph->size());
  EXPECT_LT(res.graph->size(), r.g->size());
  EXPECT_EQ(dump.str().rfind("// after fuse\ngraph(", 0), 0u) << dump.str().substr(0, 200);
  EXPECT_NE(passes::format_stats(res.stats).find("fuse"), std::string::npos);
  testing::expect_bit_equal(testing::run_outputs(*r.g, r.inputs), testing::run_outputs(*res.graph, r.inputs), "pipeline");
  EXPECT_THROW(passes::run_pipeline(*r.g, "fold", {.dump_after = "nope"}), UserError);
}

TEST(Pipeline, RewriteRunsInPipelinesAndKeepsResults) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    testing::RandomGraph r = testing::random_graph(seed);
    auto want = testing::run_outputs(*r.g, r.inputs);
    testing::expect_bit_equal(want, testing::run_outputs(*passes::run_pipeline(*r.g, "rewrite").graph, r.inputs),
                              "rewrite, seed " + std::to_string(seed));
    testing::expect_bit_equal(
        want, testing::run_outputs(*passes::run_pipeline(*r.g, "rewrite,fold,cse,fuse,dce").graph, r.inputs),
        "rewrite,fold,cse,fuse,dce, seed " + std::to_string(seed));
  }
}

TEST(Pipeline, RewriteFastAppliesRealRules) {
  // The backward pass's dW = (x.T @ g).T becomes g.T @ x (rule "transpose-matmul-transpose",
  // real: a BLAS may sum in another order): no transpose of the product is copied.
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {5, 4}});
  ir::Value d = g.add_input("g", Type{f64, {5, 3}});
  ir::Value dw = ir::transpose_last2(ir::matmul(ir::transpose_last2(x), d));
  g.outputs = {dw.id};
  const auto strict = passes::run_pipeline(g, "rewrite").graph;
  const auto fast = passes::run_pipeline(g, "rewrite-fast").graph;
  EXPECT_EQ(testing::count_op(*strict, "permute"), 2u) << ir::to_text(*strict);
  EXPECT_EQ(testing::count_op(*fast, "permute"), 1u) << ir::to_text(*fast);  // g.T, read in place by the GEMM
  EXPECT_EQ(fast->node(fast->outputs[0]).op_name(), "matmul");
  const rt::Bindings in{{"x", testing::randn(Type{f64, {5, 4}}, 1)}, {"g", testing::randn(Type{f64, {5, 3}}, 2)}};
  const auto want = testing::run_outputs(g, in), got = testing::run_outputs(*fast, in);
  for (std::int64_t i = 0; i < 12; ++i) EXPECT_NEAR(got[0].at(i), want[0].at(i), 1e-12);
}

TEST(Pipeline, GradAppendsInputGradients) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value n = g.add_input("n", Type{i64, {3}});
  ir::Value loss = ir::reduce_sum(ir::mul(ir::tanh(x), ir::cast(n, f64)), {0}, false);
  g.outputs = {loss.id};
  g.output_names = {"loss"};
  auto h = passes::run_pipeline(g, "grad,fold,cse,fuse,dce").graph;
  ASSERT_EQ(h->outputs.size(), 2u);
  EXPECT_EQ(h->output_names, (std::vector<std::string>{"loss", "grad_x"}));
  rt::Bindings in{{"x", Array::from<double>({3}, {0.1, -0.5, 2})}, {"n", Array::from<std::int64_t>({3}, {1, 2, 3})}};
  auto got = testing::run_outputs(*h, in);
  for (std::int64_t i = 0; i < 3; ++i) {
    double t = std::tanh(in["x"].at(i));
    EXPECT_NEAR(got[1].at(i), (1 - t * t) * in["n"].at(i), 1e-15);
  }
  ir::Graph vec;
  ir::Value v = vec.add_input("v", Type{f64, {3}});
  vec.outputs = {ir::exp(v).id};
  EXPECT_THROW(passes::run_pipeline(vec, "grad"), UserError);  // not a scalar
}

// Three Adam steps of a small MLP: the optimized step must give the same bits.
std::map<std::string, Array> train(const std::string& pipeline, std::size_t* nodes, std::size_t* steps_run) {
  SmallMlp model;
  Graph g;
  nn::bind(model, g, 11);
  Tensor x = g.input("x", f32, {16, 20});
  Tensor y = g.input("y", f32, {16, 8});
  Tensor loss = nn::mse_loss(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-2}, {.passes = pipeline});
  Array xs = testing::randn_f32({16, 20}, 1), ys = testing::randn_f32({16, 8}, 2);
  for (int i = 0; i < 3; ++i) step.run({{"x", xs}, {"y", ys}});
  *nodes = step.executed_graph().size();
  *steps_run = step.executable().num_steps();
  return step.parameters();
}

TEST(Pipeline, OptimizedTrainingStepsGiveTheSameBits) {
  std::size_t plain_nodes = 0, opt_nodes = 0, plain_steps = 0, opt_steps = 0;
  auto plain = train("", &plain_nodes, &plain_steps);
  auto opt = train(std::string(passes::kDefaultPipeline), &opt_nodes, &opt_steps);
  ASSERT_EQ(plain.size(), opt.size());
  for (auto& [name, value] : plain) testing::expect_bit_equal({value}, {opt.at(name)}, name);
  EXPECT_LT(opt_steps * 2, plain_steps) << plain_steps << " ops unoptimized, " << opt_steps << " optimized";
  EXPECT_LT(opt_nodes, plain_nodes);
}

}  // namespace
}  // namespace mg
