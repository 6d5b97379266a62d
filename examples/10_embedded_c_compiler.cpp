// Example 10: from training to a microcontroller-ready C file. A 2-32-3 MLP learns a
// three-arm spiral with Adam — every training step (forward + grad + update) runs as C99
// compiled by the JIT backend — then the inference graph is exported as a standalone
// .c/.h pair with the trained weights embedded (no malloc, one static arena, no BLAS),
// compiled by the system C compiler together with a tiny generated driver, run, and
// compared with the interpreter.
//   10_embedded_c_compiler [--steps N] [--out DIR]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/progress.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "minigrad/runtime/io/safetensors.hpp"
#include "examples/main_guard.hpp"

struct SpiralMlp {
  mg::nn::Linear fc1{2, 32}, fc2{32, 3};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x))); }
};
BOOST_HANA_ADAPT_STRUCT(SpiralMlp, fc1, fc2);

namespace {

constexpr std::int64_t kPerClass = 100, kN = 3 * kPerClass;

// Three interleaved spiral arms (the cs231n toy set), deterministic.
void spiral(mg::Array& x, mg::Array& y) {
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t i = 0; i < kPerClass; ++i) {
      const double r = static_cast<double>(i) / kPerClass;
      const double t = 4.0 * c + 4.0 * r + 0.2 * std::sin(37.0 * static_cast<double>(i * 3 + c));
      const std::int64_t k = c * kPerClass + i;
      x.set(2 * k, r * std::sin(t));
      x.set(2 * k + 1, r * std::cos(t));
      y.set(k, static_cast<double>(c));
    }
}

int run(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out->append(buf, n);
  return pclose(p);
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace mg;
  examples::Args args(argc, argv, {{"steps", "300"}, {"out", "out/embedded"}});
  const std::filesystem::path out = args.str("out");
  std::filesystem::create_directories(out);

  Array X(Type{f32, {kN, 2}}), Y(Type{i64, {kN}});
  spiral(X, Y);

  SpiralMlp model;
  Graph g;
  nn::bind(model, g, 7);
  Tensor x = g.input("x", f32, {kN, 2});
  Tensor y = g.input("y", i64, {kN});
  Tensor loss = nn::cross_entropy(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 0.02}, {.backend = Backend::c99});
  const long long steps = args.integer("steps");
  double l = 0;
  for (long long s = 0; s < steps; ++s) {
    l = step.run({{"x", X}, {"y", Y}});
    if (s % 100 == 0) std::printf("step %4lld  loss %.4f  (training step in C99)\n", s, l);
  }
  std::printf("final loss %.4f\n", l);

  // The inference graph: a batch of 4 points -> class probabilities.
  Tensor xq = g.input("xq", f32, {4, 2});
  Tensor probs = softmax(model(xq), 1);
  g.ir().outputs = {probs.value().id};
  g.ir().output_names = {"probs"};
  const std::string weights = (out / "spiral.safetensors").string();
  io::save_safetensors(weights, step.parameters());
  const rt::c99::Module m = rt::c99::export_c(g.ir(), (out / "c").string(), {.name = "spiral", .weights = weights});
  std::printf("exported %s/c/spiral.{c,h}: arena %zu bytes, weights %zu bytes embedded, %zu loops\n", out.c_str(),
              m.arena_bytes, m.weight_bytes, m.num_kernels);

  // Four query points and the interpreter's answer.
  const std::vector<float> q = {0.1f, 0.2f, -0.5f, 0.3f, 0.7f, -0.6f, -0.2f, -0.8f};
  Array Q = Array::from_vector<float>({4, 2}, q);
  const Array want = nn::compile_with_parameters(g, {probs}, model).run({{"xq", Q}})[0];

  std::ofstream driver(out / "c" / "driver.c");
  driver << "#include <stdio.h>\n#include \"spiral.h\"\nint main(void) {\n  static const float xq[8] = {";
  for (float v : q) driver << v << "f, ";
  driver << "};\n  float p[12];\n  int i;\n  if (spiral_run(xq, p) != 0) return 1;\n"
            "  for (i = 0; i < 12; ++i) printf(\"%.9g\\n\", p[i]);\n  return 0;\n}\n";
  driver.close();

  const std::string c = (out / "c").string();
  std::string log;
  const std::string cmd = "cc -std=c99 -O2 -Wall -Wextra -pedantic -Werror -I" + c + " " + c + "/spiral.c " + c +
                          "/driver.c -o " + c + "/spiral_demo -lm";
  if (run(cmd, &log) != 0) {
    std::fprintf(stderr, "the exported C did not compile:\n%s\n%s\n", cmd.c_str(), log.c_str());
    return 1;
  }
  log.clear();
  if (run(c + "/spiral_demo", &log) != 0) {
    std::fprintf(stderr, "the exported program failed:\n%s\n", log.c_str());
    return 1;
  }
  std::istringstream vals(log);
  std::vector<double> got(12);
  double worst = 0;
  for (std::int64_t i = 0; i < 12; ++i) {
    vals >> got[static_cast<std::size_t>(i)];
    worst = std::max(worst, std::fabs(got[static_cast<std::size_t>(i)] - want.at(i)));
  }
  for (std::size_t k = 0; k < 4; ++k)
    std::printf("point (%5.2f, %5.2f): C %.4f %.4f %.4f | interpreter %.4f %.4f %.4f\n", q[2 * k], q[2 * k + 1],
                got[3 * k], got[3 * k + 1], got[3 * k + 2], want.at(3 * k), want.at(3 * k + 1), want.at(3 * k + 2));
  std::printf("max |C - interpreter| = %.3g\n", worst);
  const bool ok = worst < 1e-5 && l < 0.5;
  std::printf(ok ? "exported C agrees with the interpreter\n" : "MISMATCH or training failed\n");
  return ok ? 0 : 1;
} MG_EXAMPLE_CATCH
