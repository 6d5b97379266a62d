// Build-time generator (ir/meson.build): writes the C99 backend's GEMM (gemm_c99.cpp) and
// the convolutions' in-place tiles and dot-product blocks (nn_conv_c99_text.cpp) as one C
// file the library compiles once per x86 ISA, so the interpreter runs the very same
// kernels (native_kernels.cpp picks the copy for the CPU at run time). Each copy's entry
// names end in its ISA (-DMG_NATIVE_ISA=avx2: mg_native_gemm_f32_avx2, ...). Depends on
// those two files only.
#include <cstdio>
#include <string>

#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/nn_conv_c99_text.hpp"

int main(int argc, char** argv) {
  using namespace mg;
  using namespace mg::ir;
  if (argc != 2) return 2;
  std::string c = "/* Generated from ir/ops/gemm_c99.cpp and nn_conv_c99_text.cpp by gemm_native_gen: do not edit. */\n"
                  "#include <math.h>\n#include <stdint.h>\n"
                  "#ifdef _OPENMP\n#define MG_OMP(x) _Pragma(#x)\n#else\n#define MG_OMP(x)\n#endif\n"
                  "#define MG_NATIVE_CAT2(a, b) a##_##b\n#define MG_NATIVE_CAT(a, b) MG_NATIVE_CAT2(a, b)\n"
                  "#define MG_NATIVE(name) MG_NATIVE_CAT(name, MG_NATIVE_ISA)\n";
  c += gemm_c99::arch_text();
  for (DType t : {DType::f32, DType::f64}) {
    const std::string T = t == DType::f32 ? "float" : "double", S(name_of(t));
    c += gemm_c99::defs_text(t) + gemm_c99::packed_text(t);
    c += gemm_c99::substitute(nn::conv_c99::kTiles, t) + gemm_c99::substitute(nn::conv_c99::kDots, t);
    const auto entry = [&](const std::string& name, const std::string& params, const std::string& body) {
      const std::string head = "void MG_NATIVE(mg_native_" + name + "_" + S + ")(" + params + ")";
      c += head + ";\n" + head + " {\n  " + body + ";\n}\n";
    };
    const std::string cT = "const " + T + "*";
    entry("gemm",
          "int64_t m, int64_t n, int64_t k, " + cT + " a, int64_t ars, int64_t acs, " + cT +
              " b, int64_t brs, int64_t bcs, " + T + "* c, " + T + "* bpack, int64_t nb",
          "mg_gemm_" + S + "(m, n, k, a, ars, acs, b, brs, bcs, c, bpack, nb)");
    entry("conv_tiles",
          "int64_t m, int64_t n, int64_t k, " + cT + " a, int64_t ars, int64_t acs, " + cT + " b, int64_t brs, " + T + "* c",
          "mg_conv_gemm_" + S + "(m, n, k, a, ars, acs, b, brs, c)");
    entry("conv_dots",
          "int64_t m, int64_t n, int64_t k, " + cT + " a, int64_t ars, " + cT + " b, int64_t bcs, " + T + "* c",
          "mg_conv_dots_" + S + "(m, n, k, a, ars, b, bcs, c)");
  }
  FILE* f = std::fopen(argv[1], "w");
  if (!f) return 1;
  const bool ok = std::fwrite(c.data(), 1, c.size(), f) == c.size();
  return std::fclose(f) == 0 && ok ? 0 : 1;
}
