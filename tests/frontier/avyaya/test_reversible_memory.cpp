// AVYAYA's memory claim, checked on the memory plan (deterministic, not timed). The
// gradients' own graph (the gradients requested as outputs, so not pooled) and the whole
// training step (forward, backward, SGD update; parameters and their next values are
// state, not temporaries) have a planned peak of temporaries that does not depend on
// depth for the reversible network, and grows with depth for the same network by
// ordinary backprop. The step's is flat because each update runs as soon as its gradient
// exists (runtime/step_order.hpp), so no block's gradient waits for the others'.
#include <gtest/gtest.h>

#include "tests/frontier/avyaya/net.hpp"

namespace mg {
namespace {

constexpr std::int64_t kBatch = 64, kHalf = 16, kHidden = 32;
// f and g: Linear(16, 32) and Linear(32, 16), with biases; f32.
constexpr std::size_t kParamBytesPerBlock = 2 * (kHalf * kHidden + kHidden + kHidden * kHalf + kHalf) * 4;

struct Peaks {
  std::size_t gradients, step;
};
Peaks planned_peaks(int depth, bool reversible) {
  Graph g;
  auto net = testing::revnet(depth, kHalf, kHidden, f32);
  nn::bind(net, g);
  Tensor x = g.input("x", f32, {kBatch, 2 * kHalf});
  Tensor y = reversible ? net(x) : net.ordinary(x);
  Tensor loss = (y * y).mean();
  std::vector<Tensor> wrt;
  for (nn::Parameter* p : nn::parameters(net)) wrt.push_back(p->tensor);
  const std::size_t grads = compile(g, grad(loss, wrt)).peak_bytes();
  auto step = nn::compile_train(g, loss, net, nn::SGD{.lr = 0.01});
  return {grads, step.executable().peak_bytes()};
}

TEST(AvyayaMemory, TheGradientsPlannedPeakIsFlatInDepthForTheReversibleNet) {
  const Peaks r4 = planned_peaks(4, true), r16 = planned_peaks(16, true);
  const Peaks o4 = planned_peaks(4, false), o16 = planned_peaks(16, false);
  EXPECT_EQ(r4.gradients, r16.gradients) << "reversible: " << r4.gradients << " bytes at depth 4, " << r16.gradients
                                         << " at depth 16";
  // Ordinary backprop keeps at least the 12 extra blocks' two [64, 16] halves.
  EXPECT_GE(o16.gradients, o4.gradients + 12 * 2 * kBatch * kHalf * 4)
      << "ordinary: " << o4.gradients << " -> " << o16.gradients;
}

TEST(AvyayaMemory, TheTrainingStepsPlannedPeakIsFlatInDepthForTheReversibleNet) {
  const Peaks r4 = planned_peaks(4, true), r16 = planned_peaks(16, true), r64 = planned_peaks(64, true);
  const Peaks o4 = planned_peaks(4, false), o16 = planned_peaks(16, false);
  EXPECT_EQ(r4.step, r16.step) << "reversible step: " << r4.step << " bytes at depth 4, " << r16.step << " at depth 16";
  EXPECT_EQ(r4.step, r64.step) << "reversible step: " << r4.step << " bytes at depth 4, " << r64.step << " at depth 64";
  // Less than one block's parameters' worth above the gradients' own graph: no gradient
  // waits for the others (and no weight.T copy waits for the backward).
  EXPECT_LT(r16.step, r16.gradients + kParamBytesPerBlock) << r16.step << " vs " << r16.gradients;
  // Ordinary backprop keeps at least the 12 extra blocks' two [64, 16] halves.
  EXPECT_GE(o16.step, o4.step + 12 * 2 * kBatch * kHalf * 4) << o4.step << " -> " << o16.step;
}

// The C99 backend plans its own arena from the same graph: flat in depth as well.
TEST(AvyayaMemory, TheC99ArenaPeakIsFlatInDepthToo) {
  auto peak = [](int depth) {
    Graph g;
    auto net = testing::revnet(depth, kHalf, kHidden, f32);
    nn::bind(net, g);
    Tensor x = g.input("x", f32, {kBatch, 2 * kHalf});
    Tensor y = net(x);
    std::vector<Tensor> wrt;
    for (nn::Parameter* p : nn::parameters(net)) wrt.push_back(p->tensor);
    return compile(g, grad((y * y).mean(), wrt), Backend::c99).peak_bytes();
  };
  const std::size_t p2 = peak(2), p8 = peak(8);
  EXPECT_GT(p2, 0u);
  EXPECT_EQ(p2, p8);
}

// And so is the whole training step's, compiled to C: the C99 arena runs its steps in the
// interpreter's order (runtime/step_order.hpp), each update right after its gradient.
TEST(AvyayaMemory, TheC99TrainingStepsArenaPeakIsFlatInDepth) {
  auto peak = [](int depth) {
    Graph g;
    auto net = testing::revnet(depth, kHalf, kHidden, f32);
    nn::bind(net, g);
    Tensor x = g.input("x", f32, {kBatch, 2 * kHalf});
    Tensor y = net(x);
    auto step = nn::compile_train(g, (y * y).mean(), net, nn::SGD{.lr = 0.01}, {.backend = Backend::c99});
    return step.executable().peak_bytes();
  };
  const std::size_t p2 = peak(2), p6 = peak(6);
  EXPECT_GT(p2, 0u);
  EXPECT_EQ(p2, p6);
}

}  // namespace
}  // namespace mg
