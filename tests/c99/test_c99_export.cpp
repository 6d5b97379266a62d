// Standalone export and the JIT's error path: a small MLP exported as a .c/.h pair (weights
// embedded from SafeTensors), compiled by gcc and clang with -std=c99 -Wall -Wextra
// -pedantic -Werror, run from a tiny C driver, agrees with the interpreter; the exported
// source uses no malloc and includes only <math.h>, <stdint.h>, its header (and the
// compiler's <immintrin.h> under __AVX512F__/__AVX2__, for the GEMM's FMAs); a C
// compiler failure in the JIT names the generated source; a Cortex-M4 cross-compile when
// arm-none-eabi-gcc is installed; a training step (forward + grad + SGD) through the JIT.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "minigrad/runtime/c99/jit.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/io/safetensors.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/shell.hpp"

namespace mg {
namespace {

Array randn(Shape s, std::uint64_t seed, double sd = 0.5) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, sd);
  Array a(Type{f32, std::move(s)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, n(rng));
  return a;
}

// x[2,4] -> 8 (relu) -> 3 (softmax), f32.
struct Mlp {
  ir::Graph g;
  std::map<std::string, Array> weights;
  Mlp() {
    ir::Value x = g.add_input("x", Type{f32, {2, 4}});
    ir::Value w1 = g.add_input("fc1.weight", Type{f32, {4, 8}}), b1 = g.add_input("fc1.bias", Type{f32, {8}});
    ir::Value w2 = g.add_input("fc2.weight", Type{f32, {8, 3}}), b2 = g.add_input("fc2.bias", Type{f32, {3}});
    ir::Value h = ir::unary("relu", ir::add(ir::matmul(x, w1), ir::broadcast_to(b1, {2, 8})));
    ir::Value logits = ir::add(ir::matmul(h, w2), ir::broadcast_to(b2, {2, 3}));
    ir::Value p = ir::make_op(g, ir::op("softmax"), {logits}, {{"axis", std::int64_t{1}}});
    g.outputs = {p.id};
    g.output_names = {"probs"};
    weights = {{"fc1.weight", randn({4, 8}, 1)}, {"fc1.bias", randn({8}, 2)}, {"fc2.weight", randn({8, 3}, 3)},
               {"fc2.bias", randn({3}, 4)}};
  }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

using testing::compile_in;
using testing::have;
using testing::sh;

TEST(C99Export, MlpWithEmbeddedWeightsMatchesTheInterpreter) {
  testing::ScratchDir dir("mg_c99_export_");
  Mlp m;
  io::save_safetensors((dir / "mlp.safetensors").string(), m.weights);
  const rt::c99::Module mod =
      rt::c99::export_c(m.g, (dir / "out").string(), {.name = "mlp", .weights = (dir / "mlp.safetensors").string()});
  // w1, w2 as given; the bias broadcasts [2,8] and [2,3] precomputed at export time.
  EXPECT_EQ(mod.weight_bytes, (32u + 16 + 24 + 6) * 4);
  ASSERT_EQ(mod.args.size(), 2u);  // x in, probs out: the weights are embedded

  const std::string src = slurp(dir / "out" / "mlp.c");
  EXPECT_EQ(src.find("malloc"), std::string::npos);
  EXPECT_EQ(src.find("cblas"), std::string::npos);
  std::istringstream lines(src);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#include", 0) == 0) {
      // immintrin.h: the compiler's own, only under __AVX512F__ / __AVX2__ (the GEMM's FMA).
      EXPECT_TRUE(line == "#include <math.h>" || line == "#include <stdint.h>" || line == "#include \"mlp.h\"" ||
                  line == "#include <immintrin.h>")
          << line;
    }
  }

  Array x = randn({2, 4}, 9, 1.0);
  std::ofstream(dir / "out" / "driver.c") << [&] {
    std::string d = "#include <stdio.h>\n#include \"mlp.h\"\nint main(void) {\n  static const float x[8] = {";
    for (int i = 0; i < 8; ++i) d += std::to_string(x.data<float>()[i]) + "f,";
    d += "};\n  float p[6];\n  int i, rc = mlp_run(x, p);\n  for (i = 0; i < 6; ++i) printf(\"%.9g\\n\", p[i]);\n"
         "  return rc;\n}\n";
    return d;
  }();
  // The interpreter on the same (printed, so re-parsed) inputs.
  Array xr(Type{f32, {2, 4}});
  for (int i = 0; i < 8; ++i) xr.data<float>()[i] = std::stof(std::to_string(x.data<float>()[i]));
  rt::Bindings b{{"x", xr}};
  for (auto& [k, v] : m.weights) b[k] = v;
  const Array want = rt::compile(m.g, m.g.outputs).run(b)[0];

  for (std::string cc : {"gcc", "clang"}) {
    if (!have(cc)) {
      ADD_FAILURE() << cc << " is not installed (scripts/setup.sh installs it)";
      continue;
    }
    std::string log;
    const std::string exe = (dir / ("run_" + cc)).string();
    for (const char* unit : {"mlp", "driver"})
      ASSERT_EQ(compile_in(dir / "out", cc + " -std=c99 -Wall -Wextra -pedantic -Werror -O2 -c " + unit + ".c -o " + unit +
                                             "_" + cc + ".o", &log),
                0)
          << cc << " " << unit << ".c:\n" << log;
    const std::string objs = (dir / "out" / ("mlp_" + cc + ".o")).string() + " " + (dir / "out" / ("driver_" + cc + ".o")).string();
    ASSERT_EQ(sh(cc + " " + objs + " -o " + exe + " -lm", &log), 0) << log;
    ASSERT_EQ(sh(exe, &log), 0) << log;
    std::istringstream vals(log);
    for (std::int64_t i = 0; i < 6; ++i) {
      double v = 0;
      vals >> v;
      EXPECT_NEAR(v, want.at(i), 1e-6) << cc << " output " << i;
    }
  }
}

TEST(C99Export, CrossCompilesForCortexM4) {
  if (!have("arm-none-eabi-gcc")) GTEST_SKIP() << "arm-none-eabi-gcc is not installed (Debian: gcc-arm-none-eabi)";
  testing::ScratchDir dir("mg_c99_m4_");
  Mlp m;
  io::save_safetensors((dir / "mlp.safetensors").string(), m.weights);
  rt::c99::export_c(m.g, dir.operator/("out").string(), {.name = "mlp", .weights = (dir / "mlp.safetensors").string()});
  const std::string obj = (dir / "mlp.o").string();
  std::string log;
  ASSERT_EQ(compile_in(dir / "out", "arm-none-eabi-gcc -std=c99 -Wall -Wextra -pedantic -Werror -O2 -mcpu=cortex-m4 "
                                    "-mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -c mlp.c -o " + obj, &log),
            0)
      << log;
  ASSERT_EQ(sh("arm-none-eabi-size " + obj, &log), 0) << log;
  std::cout << "[ c99 ] Cortex-M4 object (text = code + const weights, bss = arena):\n" << log;
}

// A convolution and its two gradients (im2col in the arena scratch, the in-place register
// tiles, the unpacked and the packed GEMM, the weight gradient in segments of the batch or
// as blocks of dot products per group) export as pedantic C99 that allocates nothing: no
// malloc/calloc/free in the object's undefined symbols; with and without AVX-512 (the
// tiles and dot products are vector extensions there, plain loops on a portable target).
// Every kernel text (the conv paths, the packed GEMM in f32 and f64 with either operand
// transposed, the few-rows GEMM) in one export that gcc and clang accept with -pedantic
// -Werror on each vector path (AVX-512, AVX2, portable) and that calls no malloc.
TEST(C99Export, KernelsExportPedanticAndMallocFree) {
  testing::ScratchDir dir("mg_c99_conv_");
  ir::Graph g;
  const ir::Conv2dParams p{.padding = {1, 1}}, grouped{.padding = {1, 1}, .groups = 4};
  ir::Value x = g.add_input("x", Type{f32, {64, 2, 20, 20}}), w = g.add_input("w", Type{f32, {16, 2, 3, 3}});
  ir::Value gy = g.add_input("gy", Type{f32, {64, 16, 20, 20}});
  ir::Value x2 = g.add_input("x2", Type{f32, {2, 16, 32, 32}}), w2 = g.add_input("w2", Type{f32, {32, 16, 3, 3}});
  ir::Value x3 = g.add_input("x3", Type{f32, {1, 8, 10, 10}}), gy3 = g.add_input("gy3", Type{f32, {1, 16, 10, 10}});
  ir::Value x4 = g.add_input("x4", Type{f32, {2, 8, 16, 16}}), w4 = g.add_input("w4", Type{f32, {16, 8, 3, 3}});
  ir::Value a = g.add_input("a", Type{f32, {30, 20}}), b = g.add_input("b", Type{f32, {30, 40}});
  ir::Value c = g.add_input("c", Type{f64, {20, 30}}), d = g.add_input("d", Type{f64, {40, 30}});
  g.outputs = {ir::conv2d(x, w, p).id, ir::conv2d_input_grad(gy, w, p, {20, 20}).id,
               ir::conv2d_weight_grad(x, gy, p, {3, 3}).id, ir::conv2d(x2, w2, p).id,
               ir::conv2d_weight_grad(x3, gy3, grouped, {3, 3}).id, ir::conv2d(x4, w4, p).id,
               ir::matmul(ir::transpose_last2(a), b).id, ir::matmul(c, ir::transpose_last2(d)).id};
  g.output_names = {"y", "dx", "dw", "y2", "dw3", "y4", "ab", "cd"};
  const rt::c99::Module m = rt::c99::export_c(g, (dir / "out").string(), {.name = "conv"});
  for (const char* fn : {"mg_gemm_small_f32(1", "mg_gemm_f32(", "mg_gemm_f64(", "mg_conv_gemm_f32(", "mg_conv_dots_f32(",
                         "mg_conv_im2col_f32", "mg_conv_col2im_f32", "seg + s"})
    EXPECT_NE(m.source.find(fn), std::string::npos) << fn << " is not in the export";
  const std::string obj = (dir / "conv.o").string();
  std::string log;
  for (const std::string cc : {"gcc", "clang"}) {
    if (!have(cc)) continue;
    for (const char* arch : {"", " -march=skylake-avx512", " -mavx2 -mfma"}) {
      ASSERT_EQ(compile_in(dir / "out", cc + " -std=c99 -Wall -Wextra -pedantic -Werror -O2 -fopenmp" + arch +
                                            " -c conv.c -o " + obj, &log),
                0)
          << cc << arch << ":\n" << log;
      ASSERT_EQ(sh("nm -u " + obj, &log), 0) << log;
      for (const char* fn : {"malloc", "calloc", "realloc", "free"})
        EXPECT_EQ(log.find(std::string(" ") + fn + "\n"), std::string::npos) << fn << " in:\n" << log;
    }
  }
}

TEST(C99Jit, CompilerErrorNamesTheGeneratedSource) {
  testing::ScratchDir dir("mg_c99_err_");
  const char* old_cache = std::getenv("MG_C99_CACHE");
  const std::string saved = old_cache ? old_cache : "";
  setenv("MG_C99_CACHE", (dir / "cache").c_str(), 1);
  setenv("MG_CC", "cc -Dreturn=no_such_type", 1);
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value y = ir::exp(x);
  try {
    rt::compile(g, {y.id}, {}, rt::Backend::c99);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("C compiler failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find((dir / "cache").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(".c"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_type"), std::string::npos) << "the compiler's diagnostics are shown:\n" << msg;
  }
  unsetenv("MG_CC");
  if (old_cache) setenv("MG_C99_CACHE", saved.c_str(), 1);
  else unsetenv("MG_C99_CACHE");
}

// A training step with persistent state: w <- w - 0.1 * grad(loss), both executors, three
// steps; the state must agree after every step.
TEST(C99Jit, TrainingStepWithPersistentStateMatchesTheInterpreter) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4, 3}});
  ir::Value w = g.add_input("w", Type{f64, {3, 2}});
  ir::Value y = ir::tanh(ir::matmul(x, w));
  ir::Value loss = ir::reduce_sum(ir::square(y), {0, 1}, false);
  std::vector<ir::Value> wrt{w};
  ir::Value gw = passes::grad(loss, wrt)[0];
  ir::Value next = ir::sub(w, ir::scale(gw, 0.1));
  std::vector<rt::StateUpdate> st{{w.id, next.id}};
  rt::Executable a = rt::compile(g, {loss.id}, st), b = rt::compile(g, {loss.id}, st, rt::Backend::c99);
  Array w0(Type{f64, {3, 2}}), xv(Type{f64, {4, 3}});
  for (int i = 0; i < 6; ++i) w0.set(i, 0.1 * i - 0.2);
  for (int i = 0; i < 12; ++i) xv.set(i, std::sin(i));
  a.set_state("w", w0);
  b.set_state("w", w0);
  for (int s = 0; s < 3; ++s) {
    const Array held = b.state("w");  // a handle taken before the step keeps its values
    const double before = held.at(0);
    const double la = a.run({{"x", xv}})[0].at(0), lb = b.run({{"x", xv}})[0].at(0);
    EXPECT_NEAR(la, lb, 1e-12 * std::fabs(la));
    EXPECT_EQ(held.at(0), before);
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(a.state("w").at(i), b.state("w").at(i), 1e-12) << "step " << s;
  }

  // The same step exported standalone (training on a board): the driver double-buffers
  // the state; three steps give the interpreter's losses and weights.
  testing::ScratchDir dir("mg_c99_train_");
  g.outputs = {loss.id};
  g.output_names = {"loss"};
  const rt::c99::Module m = rt::c99::export_c(g, (dir / "out").string(), {.name = "step"}, st);
  ASSERT_EQ(m.args.size(), 4u);  // x, loss, w (read), w (next)
  rt::Executable ref = rt::compile(g, {loss.id}, st);
  ref.set_state("w", w0);
  std::string d = "#include <stdio.h>\n#include \"step.h\"\nint main(void) {\n  static const double x[12] = {";
  for (int i = 0; i < 12; ++i) d += std::to_string(xv.at(i)) + ",";
  d += "};\n  static double w[2][6] = {{";
  for (int i = 0; i < 6; ++i) d += std::to_string(w0.at(i)) + ",";
  d += "}, {0}};\n  double loss;\n  int s, i, cur = 0;\n"
       "  for (s = 0; s < 3; ++s) {\n    if (step_run(x, &loss, w[cur], w[1 - cur]) != 0) return 1;\n"
       "    cur = 1 - cur;\n    printf(\"%.17g\\n\", loss);\n  }\n"
       "  for (i = 0; i < 6; ++i) printf(\"%.17g\\n\", w[cur][i]);\n  return 0;\n}\n";
  std::ofstream(dir / "out" / "driver.c") << d;
  Array xr(Type{f64, {4, 3}});
  for (int i = 0; i < 12; ++i) xr.set(i, std::stod(std::to_string(xv.at(i))));
  std::string log;
  const std::string exe = (dir / "train").string();
  ASSERT_EQ(sh("gcc -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I" + (dir / "out").string() + " " +
                   (dir / "out" / "step.c").string() + " " + (dir / "out" / "driver.c").string() + " -o " + exe + " -lm",
               &log),
            0)
      << log;
  ASSERT_EQ(sh(exe, &log), 0) << log;
  std::istringstream vals(log);
  for (int s = 0; s < 3; ++s) {
    double v = 0;
    vals >> v;
    const double want = ref.run({{"x", xr}})[0].at(0);
    EXPECT_NEAR(v, want, 1e-12 * std::fabs(want)) << "step " << s;
  }
  for (int i = 0; i < 6; ++i) {
    double v = 0;
    vals >> v;
    EXPECT_NEAR(v, ref.state("w").at(i), 1e-12) << "w[" << i << "]";
  }
}

}  // namespace
}  // namespace mg
