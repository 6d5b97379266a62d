// A JIT module calls the library's compiled GEMM and conv dot-product kernels (ir/ops/
// c_kernels.hpp) instead of compiling their text: the module holds pointers, not the text,
// and computes the bits the text compiled into the module computes (MG_C99_KERNEL_TEXT=1),
// with every kernel (packed GEMM threading itself, register tiles, dot-product blocks), f32
// and f64. The export always carries the text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/ops/native_kernels.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

struct Kernels {
  ir::Graph g;
  rt::Bindings in;
};

// Products and convolutions that take each kernel (the export test checks the names).
void build(Kernels& k, DType dt) {
  auto input = [&](const std::string& name, Shape s) {
    const Type t{dt, std::move(s)};
    k.in[name] = testing::randn(t, k.in.size() + 1);
    return k.g.add_input(name, t);
  };
  const ir::Conv2dParams p{.padding = {1, 1}};
  ir::Value a = input("a", {130, 300}), b = input("b", {300, 100});
  ir::Value x = input("x", {64, 2, 20, 20}), w = input("w", {16, 2, 3, 3}), gy = input("gy", {64, 16, 20, 20});
  ir::Value x2 = input("x2", {2, 16, 32, 32}), w2 = input("w2", {32, 16, 3, 3});
  k.g.outputs = {ir::matmul(a, b).id,
                 ir::conv2d(x, w, p).id,
                 ir::conv2d_input_grad(gy, w, p, {20, 20}).id,
                 ir::conv2d_weight_grad(x, gy, p, {3, 3}).id,
                 ir::conv2d(x2, w2, p).id};
}

TEST(C99HostKernels, ModulesBindTheLibrarysKernelsAndComputeTheTextsBits) {
  if (!ir::native::kernels<float>()) GTEST_SKIP() << "no compiled kernels for this CPU: modules carry the text";
  for (DType dt : {f32, f64}) {
    Kernels k;
    build(k, dt);
    rt::c99::Options o;
    o.standalone = false;
    o.host_kernels = true;
    const rt::c99::Module m = rt::c99::emit_module(k.g, k.g.outputs, {}, o);
    const std::string s(name_of(dt));
    for (const std::string fn : {"mg_gemm_", "mg_conv_dots_"}) {
      EXPECT_NE(std::find(m.bound_kernels.begin(), m.bound_kernels.end(), fn + s), m.bound_kernels.end()) << fn + s;
      EXPECT_NE(m.source.find("static " + fn + s + "_fn " + fn + s + ";"), std::string::npos) << fn + s;
    }
    for (const char* text : {"mg_gemm_tile_", "mg_dots_block_"})
      EXPECT_EQ(m.source.find(text), std::string::npos) << text << " in a module that binds the kernels";
    // The conv tiles stay text (gemm_c99::KernelEntry::jit_binds).
    EXPECT_NE(m.source.find("static void mg_conv_gemm_" + s + "("), std::string::npos);

    const std::vector<Array> bound = rt::compile(k.g, k.g.outputs, {}, rt::Backend::c99).run(k.in);
    setenv("MG_C99_KERNEL_TEXT", "1", 1);
    const std::vector<Array> text = rt::compile(k.g, k.g.outputs, {}, rt::Backend::c99).run(k.in);
    unsetenv("MG_C99_KERNEL_TEXT");
    const std::vector<Array> interp = rt::compile(k.g, k.g.outputs, {}, rt::Backend::interpreter).run(k.in);
    ASSERT_EQ(bound.size(), text.size());
    for (std::size_t q = 0; q < bound.size(); ++q) {
      EXPECT_EQ(std::memcmp(bound[q].raw(), text[q].raw(), text[q].nbytes()), 0) << s << " output " << q;
      for (std::int64_t i = 0; i < interp[q].numel(); i += 97)
        EXPECT_NEAR(bound[q].at(i), interp[q].at(i), 1e-3 * (1 + std::abs(interp[q].at(i)))) << s << " output " << q;
    }
  }
}

}  // namespace
}  // namespace mg
