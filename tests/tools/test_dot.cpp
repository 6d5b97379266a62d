// DOT output and Graphviz rendering: the structure of a small graph with its gradient (node
// and edge counts, the backward cluster holding exactly the adjoint nodes, inputs and
// outputs marked), regions as nested clusters, label escaping, SVG/PNG files, and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/scratch_dir.hpp"
#include "minigrad/ir/dot.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/io/render.hpp"

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
  auto n = std::make_unique<ir::Node>();
  n->kind = ir::NodeKind::op;
  n->op = &ir::op("exp");
  n->inputs = {x.id};
  n->type = Type{f64, {2}};
  n->regions.push_back(std::move(body));
  g.outputs = {g.append(std::move(n)).id};
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

}  // namespace
}  // namespace mg
