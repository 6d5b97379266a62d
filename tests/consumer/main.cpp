// A tiny out-of-tree user of miniGrad (scripts/check_consumer.sh builds it against an
// installed prefix through pkg-config and as a meson subproject). It sees only the
// installed include tree <minigrad/...>. Exits 1 if a check fails.
//   consumer [OUT_DIR]   writes linear.safetensors and grad.dot to OUT_DIR (default .)
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace {
bool ok = true;
void check(bool cond, const char* what) {
  std::printf("%s %s\n", cond ? "ok  " : "FAIL", what);
  ok = ok && cond;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace mg;
  const std::string dir = argc > 1 ? argv[1] : ".";

  // A graph and its gradient: y = sum(x^2 * w), dy/dw = x^2.
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor w = g.input("w", f64, {3});
  Tensor y = (x * x * w).sum();
  auto [dw] = grad(y, {w});
  Executable exe = compile(g, {y, dw});
  auto out = exe.run({{"x", Array::from<double>({3}, {1, 2, 3})}, {"w", Array::from<double>({3}, {1, 1, 2})}});
  std::printf("y = %g, dy/dw = [%g %g %g]\n", out[0].at(0), out[1].at(0), out[1].at(1), out[1].at(2));
  check(out[0].at(0) == 23.0, "y = 1 + 4 + 18");
  check(out[1].at(0) == 1.0 && out[1].at(1) == 4.0 && out[1].at(2) == 9.0, "dy/dw = x^2");

  // DOT text of the graph with its gradient.
  const std::string dot = ir::to_dot(g.ir(), {});
  std::ofstream(dir + "/grad.dot") << dot;
  check(dot.rfind("digraph", 0) == 0, "to_dot writes a digraph");

  // Train an nn::Linear (y = 2x + 1) a few steps with one compiled training step.
  nn::Linear model(1, 1, true, f64);
  Graph tg;
  nn::bind(model, tg, /*seed=*/0);
  Tensor tx = tg.input("x", f64, {4, 1});
  Tensor ty = tg.input("y", f64, {4, 1});
  Tensor loss = nn::mse_loss(model(tx), ty);
  auto step = nn::compile_train(tg, loss, model, nn::SGD{.lr = 0.1});
  Array X = Array::from<double>({4, 1}, {-1, 0, 1, 2});
  Array Y = Array::from<double>({4, 1}, {-1, 1, 3, 5});
  double first = step.run({{"x", X}, {"y", Y}}), last = first;
  for (int i = 0; i < 50; ++i) last = step.run({{"x", X}, {"y", Y}});
  std::printf("mse %.4g -> %.4g after 51 steps\n", first, last);
  check(last < first * 0.1, "training lowers the loss");

  // Save the trained parameters and read them back.
  const std::string path = dir + "/linear.safetensors";
  io::save_safetensors(path, step.parameters());
  auto back = io::load_safetensors(path);
  check(back.tensors.size() == 2 && back.tensors.count("weight") && back.tensors.count("bias"),
        "safetensors holds weight and bias");
  check(back.tensors.count("weight") && back.tensors.at("weight").at(0) == model.weight.value().at(0),
        "saved weight reads back");

  std::printf(ok ? "consumer: all checks passed\n" : "consumer: FAILED\n");
  return ok ? 0 : 1;
}
