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
  std::string c = "/* Generated from ir/ops/gemm_c99.cpp and nn_conv_c99_text.cpp by native_kernels_gen: do not edit. */\n"
                  "#include <math.h>\n#include <stdint.h>\n"
                  "#ifdef _OPENMP\n#define MG_OMP(x) _Pragma(#x)\n#else\n#define MG_OMP(x)\n#endif\n"
                  "#define MG_NATIVE_CAT2(a, b) a##_##b\n#define MG_NATIVE_CAT(a, b) MG_NATIVE_CAT2(a, b)\n"
                  "#define MG_NATIVE(name) MG_NATIVE_CAT(name, MG_NATIVE_ISA)\n";
  c += gemm_c99::arch_text() + gemm_c99::intrinsics_text() + nn::conv_c99::kDotsRows;
  for (DType t : {DType::f32, DType::f64}) {
    c += gemm_c99::defs_text(t) + gemm_c99::packed_text(t);
    c += gemm_c99::substitute(nn::conv_c99::kTiles, t) + gemm_c99::substitute(nn::conv_c99::kDots, t);
    // The entries JIT modules bind to (c_kernels.hpp): the parameters as the table says,
    // passed on to the text's function by name.
    for (const gemm_c99::KernelEntry& e : gemm_c99::kKernelEntries) {
      const std::string params = gemm_c99::substitute(e.params, t);
      std::string args;
      for (std::size_t at = 0; at <= params.size();) {
        std::size_t end = params.find(',', at);
        if (end == std::string::npos) end = params.size();
        const std::string one = params.substr(at, end - at);
        args += (args.empty() ? "" : ", ") + one.substr(one.find_last_of(" *") + 1);
        at = end + 1;
      }
      const std::string head = "void MG_NATIVE(mg_native_" + std::string(e.entry) + "_" + std::string(name_of(t)) + ")(" + params + ")";
      c += head + ";\n" + head + " {\n  " + gemm_c99::substitute(e.c_name, t) + "(" + args + ");\n}\n";
    }
  }
  FILE* f = std::fopen(argv[1], "w");
  if (!f) return 1;
  const bool ok = std::fwrite(c.data(), 1, c.size(), f) == c.size();
  return std::fclose(f) == 0 && ok ? 0 : 1;
}
