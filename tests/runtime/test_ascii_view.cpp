// The ASCII graph view (runtime/glassbox/ascii_view.hpp) against golden text: a small
// MLP loss with its gradient appended and fused (forward and backward blocks, a fused
// node collapsed and expanded, outputs marked), and the elided middle of a long chain.
#include <gtest/gtest.h>

#include "minigrad/ir/parser.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "minigrad/runtime/glassbox/ascii_view.hpp"

namespace mg::rt::glassbox {
namespace {

constexpr const char* kMlp = R"(graph(%x: f32[2,3], %w: f32[3,4]) {
  %2 = matmul(%x, %w) : f32[2,4]  loc("mlp.cpp":10)
  %3 = tanh(%2) : f32[2,4]  loc("mlp.cpp":11)
  %4 = constant 0.5 : f32[2,4]
  %5 = mul(%3, %4) : f32[2,4]  loc("mlp.cpp":11)
  %6 = reduce_sum(%5) {axes = [0, 1], keepdim = false} : f32[]  loc("mlp.cpp":12)
  return loss = %6
}
)";

std::unique_ptr<ir::Graph> mlp_step() {
  auto g = ir::parse(kMlp, "mlp.mgir");
  return passes::run_pipeline(*g, "grad,fuse,dce").graph;
}

TEST(AsciiView, CollapsedGolden) {
  const auto g = mlp_step();
  EXPECT_EQ(ascii_view(*g), R"(graph: 2 inputs, 9 values, 3 outputs (forward 2, backward (grad) 7)
inputs
  %x   input                                             f32[2,3]
  %w   input                                             f32[3,4]
forward
  %2   fused<matmul>(%x, %w) [matmul tanh]               f32[2,4]  mlp.cpp:11
  %3   fused<reduce>(%2) [mul reduce_sum]                f32[]     mlp.cpp:12  => loss
backward (grad)
  %4   full(value=1.0)                                   f32[]
  %5   reshape(%4)                                       f32[1,1]  mlp.cpp:12
  %6   fused<elementwise>(%5, %2) [broadcast_to mul square broadcast_to sub mul]  f32[2,4]  mlp.cpp:11
  %7   permute(%w)                                       f32[4,3]  mlp.cpp:10
  %8   matmul(%6, %7)                                    f32[2,3]  mlp.cpp:10  => grad_x
  %9   permute(%x)                                       f32[3,2]  mlp.cpp:10
  %10  matmul(%9, %6)                                    f32[3,4]  mlp.cpp:10  => grad_w
)");
}

TEST(AsciiView, ExpandedGolden) {
  const auto g = mlp_step();
  EXPECT_EQ(ascii_view(*g, {}, {.expand_fused = true, .locations = false}), R"(graph: 2 inputs, 9 values, 3 outputs (forward 2, backward (grad) 7)
inputs
  %x   input                       f32[2,3]
  %w   input                       f32[3,4]
forward
  %2   fused<matmul>(%x, %w)       f32[2,4]
       | %a0 = %x : f32[2,3]
       | %a1 = %w : f32[3,4]
       | %2 = matmul(%a0, %a1) : f32[2,4]
       | %3 = tanh(%2) : f32[2,4]
  %3   fused<reduce>(%2)           f32[]     => loss
       | %a0 = %2 : f32[2,4]
       | %1 = constant 0.5 : f32[2,4]
       | %2 = mul(%a0, %1) : f32[2,4]
       | %3 = reduce_sum(%2) : f32[]
backward (grad)
  %4   full(value=1.0)             f32[]
  %5   reshape(%4)                 f32[1,1]
  %6   fused<elementwise>(%5, %2)  f32[2,4]
       | %a0 = %5 : f32[1,1]
       | %a1 = %2 : f32[2,4]
       | %2 = broadcast_to(%a0) : f32[2,4]
       | %3 = constant 0.5 : f32[2,4]
       | %4 = mul(%2, %3) : f32[2,4]
       | %5 = square(%a1) : f32[2,4]
       | %6 = constant 1.0 : f32[]
       | %7 = broadcast_to(%6) : f32[2,4]
       | %8 = sub(%7, %5) : f32[2,4]
       | %9 = mul(%4, %8) : f32[2,4]
  %7   permute(%w)                 f32[4,3]
  %8   matmul(%6, %7)              f32[2,3]  => grad_x
  %9   permute(%x)                 f32[3,2]
  %10  matmul(%9, %6)              f32[3,4]  => grad_w
)");
}

TEST(AsciiView, LongChainIsElidedInTheMiddle) {
  std::string text = "graph(%x: f64[3]) {\n";
  for (int i = 1; i <= 30; ++i)
    text += "  %" + std::to_string(i) + " = " + (i % 3 ? "exp" : "neg") + "(%" + (i == 1 ? std::string("x") : std::to_string(i - 1)) + ") : f64[3]\n";
  text += "  return y = %30\n}\n";
  const auto g = ir::parse(text);
  EXPECT_EQ(ascii_view(*g, {}, {.max_lines = 6}), R"(graph: 1 input, 30 values, 1 output (forward 30)
inputs
  %x   input     f64[3]
forward
  %1   exp(%x)   f64[3]
  %2   exp(%1)   f64[3]
  %3   neg(%2)   f64[3]
  ... 24 values elided (16 exp, 8 neg) ...
  %28  exp(%27)  f64[3]
  %29  exp(%28)  f64[3]
  %30  neg(%29)  f64[3]  => y
)");
}

}  // namespace
}  // namespace mg::rt::glassbox
