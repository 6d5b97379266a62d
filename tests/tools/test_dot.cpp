// DOT output and Graphviz rendering: the structure of a small graph with its gradient (node
// and edge counts, the backward cluster holding exactly the adjoint nodes, inputs and
// outputs marked), a training step clustered by role and module and its collapsed view,
// the source lines a training step's nodes carry, regions as nested clusters, label
// escaping, SVG/PNG files, and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/scratch_dir.hpp"
#include "minigrad/ir/dot.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/io/render.hpp"

// A small model with a nested module name ("features.0") and a plain one ("fc").
struct DotNet {
  mg::nn::Sequential<mg::nn::Linear, mg::nn::ReLU> features{mg::nn::Linear(4, 5), mg::nn::ReLU{}};
  mg::nn::Linear fc{5, 3};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc(features(x)); }
};
BOOST_HANA_ADAPT_STRUCT(DotNet, features, fc);

// Every kind of layer with state or randomness: conv, batch norm, pooling, dropout.
struct DotCnn {
  mg::nn::Conv2D conv{1, 2, {3, 3}};
  mg::nn::BatchNorm2D bn{2};
  mg::nn::MaxPool2D pool{{2, 2}};
  mg::nn::Dropout drop{0.25};
  mg::nn::Linear fc{2 * 3 * 3, 3};
  mg::Tensor operator()(const mg::Tensor& x) const {
    return fc(mg::flatten(drop(pool(mg::relu(bn(conv(x))))), 1));
  }
};
BOOST_HANA_ADAPT_STRUCT(DotCnn, conv, bn, pool, drop, fc);

namespace mg {
namespace {

namespace fs = std::filesystem;

// loss = reduce_sum(exp(x) * w) with d loss/dx and d loss/dw appended as outputs.
struct SmallGraph {
  ir::Graph g;
  SmallGraph() {
    ir::Value x = g.add_input("x", Type{f64, {3}});
    ir::Value w = g.add_input("w", Type{f64, {3}});
    ir::Value loss = ir::reduce_sum(ir::mul(ir::exp(x), w), {0}, false);
    std::vector<ir::Value> wrt{x, w};
    auto grads = passes::grad(loss, wrt);
    g.outputs = {loss.id, grads[0].id, grads[1].id};
    g.output_names = {"loss", "grad_x", "grad_w"};
  }
};

// DOT node statements ("  n3 [label=...]") and edges, by the ids they name.
std::vector<std::string> node_ids(const std::string& dot) {
  std::vector<std::string> ids;
  static const std::regex re(R"(^\s*(n[0-9a-z_]*) \[label=)");
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, re)) ids.push_back(m[1]);
  }
  return ids;
}
std::size_t count_edges(const std::string& dot) {
  std::size_t n = 0;
  for (std::size_t p = dot.find(" -> "); p != std::string::npos; p = dot.find(" -> ", p + 1)) ++n;
  return n;
}
// The text between `subgraph "NAME" {` and its matching `}` (clusters here are one level).
std::string cluster_body(const std::string& dot, const std::string& name) {
  const std::size_t start = dot.find("subgraph \"" + name + "\" {");
  if (start == std::string::npos) return "";
  int depth = 0;
  for (std::size_t i = dot.find('{', start); i < dot.size(); ++i) {
    if (dot[i] == '{') ++depth;
    if (dot[i] == '}' && --depth == 0) return dot.substr(start, i - start);
  }
  return "";
}
std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
fs::path temp_path(const std::string& name) {
  static testing::ScratchDir dir("mg_test_dot_");
  return dir / name;
}

TEST(Dot, GradientGraphStructure) {
  SmallGraph s;
  const std::string dot = ir::to_dot(s.g);
  // Expected from the graph itself: every node the outputs need, one edge per operand.
  std::vector<bool> live = s.g.reachable_from(s.g.outputs);
  std::size_t nodes = 0, edges = 0, adjoint = 0;
  for (ir::NodeId id = 0; id < s.g.size(); ++id) {
    if (!live[id]) continue;
    ++nodes;
    edges += s.g.node(id).inputs.size();
    adjoint += s.g.node(id).role == ir::Role::adjoint;
  }
  ASSERT_GT(adjoint, 0u);
  EXPECT_EQ(node_ids(dot).size(), nodes) << dot;
  EXPECT_EQ(count_edges(dot), edges) << dot;
  EXPECT_EQ(dot.rfind("digraph minigrad {", 0), 0u);

  // The backward cluster holds exactly the adjoint nodes.
  const std::string backward = cluster_body(dot, "cluster_backward");
  ASSERT_FALSE(backward.empty()) << dot;
  EXPECT_NE(backward.find("fillcolor=\"#fef5e7\""), std::string::npos);
  std::vector<std::string> in_cluster = node_ids(backward);
  EXPECT_EQ(in_cluster.size(), adjoint);
  for (const std::string& id : in_cluster) {
    const ir::NodeId n = static_cast<ir::NodeId>(std::stoul(id.substr(1)));
    EXPECT_EQ(s.g.node(n).role, ir::Role::adjoint) << id;
  }
  EXPECT_EQ(count_edges(backward), 0u) << "edges are declared at top level";

  // Inputs are ellipses; outputs double-bordered with their names.
  EXPECT_NE(dot.find("n0 [label=\"x\\nf64[3]\", shape=ellipse"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 [label=\"w\\nf64[3]\", shape=ellipse"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\\n-> loss\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("-> grad_x"), std::string::npos) << dot;
  EXPECT_NE(dot.find("-> grad_w"), std::string::npos) << dot;
  std::size_t doubled = 0;
  for (std::size_t p = dot.find("peripheries=2"); p != std::string::npos; p = dot.find("peripheries=2", p + 1))
    ++doubled;
  EXPECT_EQ(doubled, 3u);
  // Attributes are shown, short.
  EXPECT_NE(dot.find("reduce_sum\\n{axes=[0], keepdim=false}\\nf64[]"), std::string::npos) << dot;
}

TEST(Dot, ForwardOnlyHasNoBackwardClusterAndLiveFilter) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {2}});
  ir::Value a = ir::exp(x);
  ir::Value unused = ir::sin(x);
  g.outputs = {a.id};
  std::string dot = ir::to_dot(g);
  EXPECT_EQ(dot.find("cluster_backward"), std::string::npos);
  EXPECT_EQ(node_ids(dot).size(), 2u);
  EXPECT_NE(dot.find("-> out0"), std::string::npos) << "unnamed outputs are numbered";
  ir::DotOptions all;
  all.only_live = false;
  all.title = "my \"title\"";
  dot = ir::to_dot(g, {}, all);
  EXPECT_EQ(node_ids(dot).size(), 3u);
  EXPECT_NE(dot.find("label=\"my \\\"title\\\"\""), std::string::npos) << dot;
  // Explicit outputs override g.outputs.
  const std::vector<ir::NodeId> outs{unused.id};
  dot = ir::to_dot(g, outs);
  EXPECT_NE(dot.find("sin\\nf32[2]\\n-> out0"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("exp"), std::string::npos) << dot;
}

TEST(Dot, NonCommutativeOperandsAreNumbered) {
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{f64, {}});
  ir::Value b = g.add_input("b", Type{f64, {}});
  g.outputs = {ir::sub(a, b).id, ir::add(a, b).id};
  const std::string dot = ir::to_dot(g);
  EXPECT_NE(dot.find("n0 -> n2 [label=\"0\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> n2 [label=\"1\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n3;"), std::string::npos) << dot;  // add commutes: no labels
}

TEST(Dot, RegionsAreNestedClusters) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  auto body = std::make_unique<ir::Graph>();
  ir::Value arg = body->add_input("a", Type{f64, {2}});
  body->outputs = {ir::exp(arg).id};
  ir::Node n;
  n.kind = ir::NodeKind::op;
  n.op = &ir::op("exp");
  n.type = Type{f64, {2}};
  n.regions.push_back(std::move(body));
  g.outputs = {g.append(std::move(n), std::vector<ir::NodeId>{x.id}).id};
  const std::string dot = ir::to_dot(g);
  const std::string region = cluster_body(dot, "cluster_n1r0_");
  ASSERT_FALSE(region.empty()) << dot;
  EXPECT_NE(region.find("label=\"exp region 0 of n1\""), std::string::npos) << region;
  EXPECT_EQ(node_ids(region), (std::vector<std::string>{"n1r0_n0", "n1r0_n1"}));
  EXPECT_NE(dot.find("n1r0_n1 -> n1 [style=dashed"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1r0_n0 -> n1r0_n1;"), std::string::npos) << dot;
  EXPECT_NE(region.find("-> result 0"), std::string::npos) << region;
}

TEST(Dot, QuotingEscapesEverythingGraphvizInterprets) {
  EXPECT_EQ(ir::dot_quote("plain"), "\"plain\"");
  EXPECT_EQ(ir::dot_quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(ir::dot_quote("tab\there\x01"), "\"tabhere\"");
  EXPECT_EQ(ir::dot_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(ir::dot_quote("bad\xff\xc3"), "\"bad??\"");
  EXPECT_EQ(ir::dot_quote("\\N \\G \\l"), "\"\\\\N \\\\G \\\\l\"");
}

TEST(Render, SvgOfTheGradientGraph) {
  SmallGraph s;
  const fs::path svg = temp_path("small.svg");
  io::render(ir::to_dot(s.g), svg.string());
  const std::string text = read_file(svg);
  ASSERT_FALSE(text.empty());
  EXPECT_TRUE(text.rfind("<?xml", 0) == 0 || text.rfind("<svg", 0) == 0) << text.substr(0, 80);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  for (const char* label : {">exp<", ">reduce_sum<", ">f64[3]<", ">&#45;&gt; loss<", "cluster_backward", ">x<", ">w<"})
    EXPECT_NE(text.find(label), std::string::npos) << label;
}

TEST(Render, EscapedLabelsSurviveGraphviz) {
  ir::Graph g;
  ir::Value x = g.add_input("we\"ird\\name\n<b>", Type{f64, {}});
  g.outputs = {ir::exp(x).id};
  const fs::path svg = temp_path("weird.svg");
  io::render(ir::to_dot(g), svg.string());
  const std::string text = read_file(svg);
  EXPECT_NE(text.find("we&quot;ird\\name"), std::string::npos) << text;
  EXPECT_NE(text.find("&lt;b&gt;"), std::string::npos) << text;
}

TEST(Render, PngAndDotFiles) {
  SmallGraph s;
  const std::string dot = ir::to_dot(s.g);
  const fs::path png = temp_path("small.png"), dotfile = temp_path("small.dot");
  io::render(dot, png.string());
  EXPECT_EQ(read_file(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  io::render(dot, dotfile.string());
  EXPECT_EQ(read_file(dotfile), dot);
}

TEST(Render, ErrorsAreUserErrors) {
  const std::string dot = "digraph { a -> b; }";
  EXPECT_THROW(io::render(dot, temp_path("x.pdf").string()), UserError);
  EXPECT_THROW(io::render(dot, "/nonexistent-dir/x.svg"), UserError);
  try {
    io::render("digraph { a -> ; }", temp_path("bad.svg").string());
    FAIL() << "bad DOT accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("rejected the DOT"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(temp_path("bad.svg")));
  io::render(dot, temp_path("after_error.svg").string());  // Graphviz still usable
  EXPECT_TRUE(fs::exists(temp_path("after_error.svg")));
}

// A training step of DotNet (Adam, cross-entropy), built as examples/fashion.hpp does; the
// line of its compile_train call is kept for the location test.
struct TrainGraph {
  DotNet model;
  Graph g;
  int compile_line = 0;
  std::optional<nn::TrainStep> step;
  explicit TrainGraph(std::string passes = "") {
    nn::bind(model, g, 3);
    Tensor x = g.input("x", f32, {8, 4});
    Tensor y = g.input("y", i64, {8});
    Tensor loss = nn::cross_entropy(model(x), y);
    compile_line = __LINE__ + 1;
    step.emplace(nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-2}, {.clip_grad_norm = 1.0, .passes = passes}));
  }
  ir::Graph& ir() { return g.ir(); }
  std::vector<bool> live() { return ir().reachable_from(step->roots()); }
};

std::string role_key(ir::Role r) {
  switch (r) {
    case ir::Role::forward: return "forward";
    case ir::Role::adjoint: return "backward";
    case ir::Role::second_order: return "second_order";
    case ir::Role::update: return "update";
  }
  return "";
}
ir::NodeId id_of(const std::string& dot_id) { return static_cast<ir::NodeId>(std::stoul(dot_id.substr(1))); }

TEST(Dot, TrainingStepClustersByRoleAndModule) {
  TrainGraph t;
  ir::Graph& g = t.ir();
  const std::string dot = ir::to_dot(g, t.step->roots());
  const std::vector<bool> live = t.live();
  const std::vector<std::string> module = ir::node_modules(g, live);

  // Inputs by parameter-name prefix, optimizer state with its parameter, data in none.
  EXPECT_EQ(module[g.input("features.0.weight").id], "features.0");
  EXPECT_EQ(module[g.input("fc.bias").id], "fc");
  EXPECT_EQ(module[g.input("optim.features.0.weight.exp_avg").id], "features.0");
  EXPECT_EQ(module[g.input("optim.fc.weight.exp_avg_sq").id], "fc");
  EXPECT_EQ(module[g.input("x").id], "");
  EXPECT_EQ(module[g.input("optim.lr").id], "");
  // The state update of each parameter (new value) belongs to its module.
  for (ir::NodeId root : t.step->roots()) {
    for (ir::NodeId in : g.node(root).inputs) {
      if (g.node(in).kind == ir::NodeKind::input && g.node(in).name.find('.') != std::string::npos &&
          g.node(in).name.rfind("optim.", 0) != 0) {
        EXPECT_EQ(module[root], module[in]) << g.node(in).name;
      }
    }
  }

  // Every live node is drawn once: in its role's cluster and, with a module, in that
  // module's cluster inside it; nodes read a parameter directly belong to its module.
  std::size_t drawn = 0, in_modules = 0;
  std::set<std::string> module_clusters;
  for (ir::Role r : {ir::Role::forward, ir::Role::adjoint, ir::Role::update}) {
    const std::string body = cluster_body(dot, "cluster_" + role_key(r));
    ASSERT_FALSE(body.empty()) << role_key(r) << "\n" << dot;
    for (const std::string& id : node_ids(body)) {
      EXPECT_EQ(g.node(id_of(id)).role, r) << id;
      ++drawn;
    }
    for (const std::string m : {"features.0", "fc"}) {
      const std::string name = "cluster_" + role_key(r) + "_" + m;
      const std::string sub = cluster_body(body, name);
      ASSERT_FALSE(sub.empty()) << name << "\n" << body;
      EXPECT_NE(sub.find("label=\"" + m + "\""), std::string::npos) << sub;
      for (const std::string& id : node_ids(sub)) {
        EXPECT_EQ(module[id_of(id)], m) << id << " in " << name;
        ++in_modules;
      }
      module_clusters.insert(name);
    }
  }
  EXPECT_EQ(dot.find("cluster_second_order"), std::string::npos);
  std::size_t live_count = 0, with_module = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    if (!live[id]) continue;
    ++live_count;
    with_module += !module[id].empty();
    const ir::Node& n = g.node(id);
    for (ir::NodeId in : n.inputs) {
      if (n.kind == ir::NodeKind::op && g.node(in).kind == ir::NodeKind::input && !module[in].empty()) {
        EXPECT_EQ(module[id], module[in]) << ir::value_name(g, id) << " reads " << g.node(in).name;
      }
    }
  }
  EXPECT_EQ(drawn, live_count);
  EXPECT_EQ(node_ids(dot).size(), live_count);
  EXPECT_EQ(in_modules, with_module);
  EXPECT_EQ(module_clusters.size(), 6u);
  // The weight gradients (matmuls of the backward pass) sit in their modules' clusters.
  EXPECT_NE(cluster_body(dot, "cluster_backward_features.0").find("matmul"), std::string::npos);
  EXPECT_NE(cluster_body(dot, "cluster_backward_fc").find("matmul"), std::string::npos);
  // Graphviz accepts it.
  const fs::path svg = temp_path("train_step.svg");
  io::render(dot, svg.string());
  EXPECT_NE(read_file(svg).find("optimizer update"), std::string::npos);

  // Without modules: role clusters only.
  ir::DotOptions flat;
  flat.modules = false;
  const std::string plain = ir::to_dot(g, t.step->roots(), flat);
  EXPECT_EQ(plain.find("cluster_forward_fc"), std::string::npos);
  EXPECT_EQ(node_ids(plain).size(), live_count);
}

TEST(Dot, CollapsedViewHasOneBoxPerClusterAndTheEdgesBetween) {
  TrainGraph t;
  ir::Graph& g = t.ir();
  ir::DotOptions opts;
  opts.collapse = true;
  const std::string dot = ir::to_dot(g, t.step->roots(), opts);
  const std::vector<bool> live = t.live();
  const std::vector<std::string> module = ir::node_modules(g, live);

  // Expected from the graph: nodes and edges per (role, module) pair.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::size_t> nodes;
  std::map<std::pair<Key, Key>, std::size_t> edges;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    if (!live[id]) continue;
    const Key k{role_key(g.node(id).role), module[id]};
    ++nodes[k];
    for (ir::NodeId in : g.node(id).inputs) {
      const Key from{role_key(g.node(in).role), module[in]};
      if (from != k) ++edges[{from, k}];
    }
  }
  // Boxes: "cK [label="<module or role>\n<N> nodes...", one per pair, inside role clusters.
  static const std::regex box(R"re((c[0-9]+) \[label="([^"\\]*)\\n([0-9]+) nodes)re");
  std::map<std::string, Key> key_of;
  std::map<Key, std::size_t> drawn;
  for (ir::Role r : {ir::Role::forward, ir::Role::adjoint, ir::Role::update}) {
    const std::string body = cluster_body(dot, "cluster_" + role_key(r));
    ASSERT_FALSE(body.empty()) << dot;
    for (std::sregex_iterator it(body.begin(), body.end(), box), end; it != end; ++it) {
      std::string m = (*it)[2];
      if (m == "(no module)" || m == role_key(r)) m = "";
      const Key k{role_key(r), m};
      key_of[(*it)[1]] = k;
      drawn[k] = std::stoul((*it)[3]);
    }
  }
  EXPECT_EQ(drawn, nodes) << dot;
  // 3 roles x 2 modules, the forward pass's data (x, y, labels), the update's shared
  // nodes (learning rate, step counter, gradient clipping).
  EXPECT_EQ(drawn.size(), 8u) << dot;
  static const std::regex edge(R"re((c[0-9]+) -> (c[0-9]+) \[label="([0-9]+)"\])re");
  std::map<std::pair<Key, Key>, std::size_t> drawn_edges;
  for (std::sregex_iterator it(dot.begin(), dot.end(), edge), end; it != end; ++it) {
    ASSERT_NE((*it)[1], (*it)[2]) << "no self-edges";
    drawn_edges[{key_of.at((*it)[1]), key_of.at((*it)[2])}] = std::stoul((*it)[3]);
  }
  EXPECT_EQ(drawn_edges, edges) << dot;
  EXPECT_EQ(count_edges(dot), edges.size());
  EXPECT_TRUE((drawn_edges.count({{"forward", "features.0"}, {"forward", "fc"}}))) << dot;
  EXPECT_TRUE((drawn_edges.count({{"backward", "fc"}, {"backward", "features.0"}}))) << dot;
  EXPECT_TRUE((drawn_edges.count({{"backward", "fc"}, {"update", "fc"}}))) << dot;
  const fs::path svg = temp_path("collapsed.svg");
  io::render(dot, svg.string());
  EXPECT_NE(read_file(svg).find("features.0"), std::string::npos);
}

TEST(Dot, GradOfGradIsASecondOrderCluster) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value y = ir::reduce_sum(ir::mul(ir::square(x), x), {0}, false);
  std::vector<ir::Value> wrt{x};
  ir::Value dx = passes::grad(y, wrt)[0];
  ir::Value ddx = passes::grad(ir::reduce_sum(dx, {0}, false), wrt)[0];
  g.outputs = {dx.id, ddx.id};
  EXPECT_EQ(dx.node().role, ir::Role::adjoint);
  EXPECT_EQ(ddx.node().role, ir::Role::second_order);
  const std::string dot = ir::to_dot(g);
  const std::string second = cluster_body(dot, "cluster_second_order");
  ASSERT_FALSE(second.empty()) << dot;
  EXPECT_NE(second.find("second-order"), std::string::npos);
  ASSERT_FALSE(node_ids(second).empty());
  for (const std::string& id : node_ids(second)) EXPECT_EQ(g.node(id_of(id)).role, ir::Role::second_order) << id;
  for (const std::string& id : node_ids(cluster_body(dot, "cluster_backward")))
    EXPECT_EQ(g.node(id_of(id)).role, ir::Role::adjoint) << id;
}

// Layers with state (batch norm's running statistics, dropout's step counter), SGD with
// momentum: no node carries a line of the library's nn/ folder either.
TEST(Dot, ConvBatchNormDropoutStepNodesCarryUserLines) {
  DotCnn model;
  Graph g;
  nn::bind(model, g, 5);
  Tensor x = g.input("x", f32, {4, 1, 8, 8});
  Tensor y = g.input("y", i64, {4});
  Tensor loss = nn::cross_entropy(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::SGD{.lr = 0.1, .momentum = 0.9});
  for (const ir::Graph* ir : {static_cast<const ir::Graph*>(&g.ir()), &step.executed_graph()})
    for (ir::NodeId id = 0; id < ir->size(); ++id)
      EXPECT_EQ(std::string(ir->node(id).loc.file).find("dsl/nn/"), std::string::npos)
          << ir->node(id).op_name() << " at " << to_string(ir->node(id).loc);
  // The module clusters name every layer with parameters or buffers.
  const std::string dot = ir::to_dot(g.ir(), step.roots());
  for (const char* m : {"cluster_forward_conv", "cluster_forward_bn", "cluster_forward_fc", "cluster_backward_conv",
                        "cluster_update_bn", "cluster_update_fc"})
    EXPECT_FALSE(cluster_body(dot, m).empty()) << m;
}

// Every node of a compiled training step carries a user line: the backward pass its
// forward node's, the optimizer update and its state the compile_train call's, never a
// file of the library's nn/ folder (optim.cpp, train.cpp).
TEST(Dot, TrainingStepNodesCarryUserLines) {
  for (std::string passes : {std::string(""), std::string(passes::kDefaultPipeline)}) {
    TrainGraph t(passes);
    for (const ir::Graph* g : {static_cast<const ir::Graph*>(&t.ir()), &t.step->executed_graph()}) {
      for (ir::NodeId id = 0; id < g->size(); ++id) {
        const ir::Node& n = g->node(id);
        const std::string file = n.loc.file;
        EXPECT_EQ(file.find("dsl/nn/"), std::string::npos)
            << ir::value_name(*g, id) << " = " << n.op_name() << " at " << to_string(n.loc) << " (passes '" << passes << "')";
        if (n.role == ir::Role::update && n.kind != ir::NodeKind::constant) {
          EXPECT_NE(file.find("test_dot.cpp"), std::string::npos) << n.op_name() << " at " << to_string(n.loc);
          EXPECT_EQ(n.loc.line, static_cast<std::uint32_t>(t.compile_line)) << n.op_name();
        }
      }
    }
    EXPECT_EQ(t.ir().node(t.ir().input("optim.step").id).loc.line, static_cast<std::uint32_t>(t.compile_line));
  }
}

}  // namespace
}  // namespace mg
