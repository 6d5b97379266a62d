// A big module's steps go into functions of about 300 lines each, called in order by the
// entry (runtime/c99/emit_steps.cpp, `outline`; GCC compiles many short functions faster
// than one long one); a small module keeps its steps in the entry. A step function takes
// the arena and the pointers its loops name that live elsewhere (const where the value is
// an input or a constant) and derives its arena buffers itself; a step's run-time error
// still leaves the entry with its node's code; what the steps call (libm's tanhf) still
// gets glibc's vector variants declared, which the entry alone no longer shows
// (miniGPT's step ran 3x slower on scalar tanhf when the declarations looked only there).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// `layers` times x <- tanh(x w_k): 2 steps a layer (tanh's loop, the product's GEMM).
void tanh_chain(ir::Graph& g, int layers) {
  ir::Value x = g.add_input("x", Type{f32, {16, 24}});
  for (int k = 0; k < layers; ++k)
    x = ir::matmul(ir::unary("tanh", x), g.add_input("w" + std::to_string(k), Type{f32, {24, 24}}));
  g.outputs = {x.id};
}

void expect_c99_matches_the_interpreter(const ir::Graph& g) {
  rt::Bindings in;
  std::uint64_t seed = 1;
  for (ir::NodeId id : g.inputs()) {
    Array a = testing::randn(g.node(id).type, seed++);
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, a.at(i) * 0.2);  // keep tanh off saturation
    in[g.node(id).name] = a;
  }
  const Array want = rt::compile(g, g.outputs).run(in)[0];
  const Array got = rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in)[0];
  for (std::int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got.at(i), want.at(i), 1e-4 * (1 + std::abs(want.at(i))));
}

TEST(C99StepFunctions, ASmallModuleKeepsItsStepsInTheEntry) {
  ir::Graph g;
  tanh_chain(g, 2);
  rt::c99::Options o;
  o.standalone = false;
  const std::string src = rt::c99::emit_module(g, g.outputs, {}, o).source;
  EXPECT_EQ(count(src, "MG_NOINLINE int mg_step"), 0u) << src;
  EXPECT_NE(src.find("tanhf(", src.find("int " + o.name + "_run(")), std::string::npos) << src;
  expect_c99_matches_the_interpreter(g);
}

TEST(C99StepFunctions, ABigModulesStepsAreFunctionsTakingThePointersTheyName) {
  ir::Graph g;
  tanh_chain(g, 60);
  rt::c99::Options o;
  o.standalone = false;
  const rt::c99::Module m = rt::c99::emit_module(g, g.outputs, {}, o);
  const std::string& src = m.source;
  const std::size_t entry = src.find("int " + m.name + "_run(");
  ASSERT_NE(entry, std::string::npos) << src;
  // Functions before the entry, each called from it once, in order, none much over 300 lines.
  const std::size_t fns = count(src, "static MG_NOINLINE int mg_step");
  EXPECT_GE(fns, 3u) << src;
  EXPECT_EQ(count(src.substr(entry), "mg_rc = mg_step"), fns) << src;
  EXPECT_EQ(src.find("tanhf(", entry), std::string::npos) << "a step left in the entry";
  std::size_t steps = 0, prev_call = entry;
  for (std::size_t at = src.find("static MG_NOINLINE int mg_step"); at < entry;
       at = src.find("static MG_NOINLINE int mg_step", at + 1)) {
    const std::size_t name = at + std::string("static MG_NOINLINE int ").size();
    const std::string fn = src.substr(name, src.find('(', name) - name);
    const std::string body = src.substr(at, src.find("\n}\n", at) - at);
    EXPECT_LE(count(body, "\n"), 600u) << fn;  // 300 lines of steps, the last step whole, declarations
    steps += count(body, "/* %");
    const std::size_t call = src.find("mg_rc = " + fn + "(", entry);
    EXPECT_GT(call, prev_call) << fn << " is called out of order";
    prev_call = call;
    // Arena buffers are derived inside; only the inputs (x, the weights; const) and the
    // output come in.
    const std::string sig = body.substr(0, body.find('\n'));
    const std::string out = ", float* const v" + std::to_string(g.outputs[0]) + ")";
    EXPECT_EQ(count(sig, ", "), count(sig, ", const float* const v") + count(sig, out)) << sig;
    EXPECT_NE(body.find("* const v"), std::string::npos) << body.substr(0, 600);
  }
  EXPECT_EQ(steps, m.num_kernels);
  // libmvec's tanhf is declared although only the step functions call it.
  EXPECT_NE(src.find("float tanhf(float) __attribute__((__simd__(\"notinbranch\")));"), std::string::npos)
      << src.substr(0, 4000);
  expect_c99_matches_the_interpreter(g);
}

// An index out of range inside a step function still names its node (the code the step
// returns reaches the entry's caller).
TEST(C99StepFunctions, AStepsRunTimeErrorNamesItsNode) {
  ir::Graph g;
  ir::Value table = g.add_input("table", Type{f64, {4, 3}});
  ir::Value idx = g.add_input("idx", Type{i64, {2}});
  ir::Value y = ir::unary("exp", ir::index_select(table, idx, 0));
  g.outputs = {y.id};
  Array ids(Type{i64, {2}});
  ids.set(0, 1);
  ids.set(1, 7);
  rt::Bindings in{{"table", testing::randn(Type{f64, {4, 3}}, 3)}, {"idx", ids}};
  try {
    rt::compile(g, g.outputs, {}, rt::Backend::c99).run(in);
    ADD_FAILURE() << "expected a UserError for index 7 of 4 rows";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("index_select"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("C99 backend"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg
