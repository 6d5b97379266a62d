// Build-time generator (ir/meson.build): writes our C99 GEMM (gemm_c99.cpp, the text the C99
// backend emits) as one C file the library compiles once per x86 ISA, so the interpreter
// runs the very same kernel (linalg.cpp picks the copy for the CPU at run time). Each copy's
// entry names come from -DMG_GEMM_NATIVE_F32/F64. Depends on gemm_c99.cpp only.
#include <cstdio>
#include <string>

#include "minigrad/ir/ops/gemm_c99.hpp"

int main(int argc, char** argv) {
  using namespace mg;
  using namespace mg::ir;
  if (argc != 2) return 2;
  std::string c = "/* Generated from ir/ops/gemm_c99.cpp by gemm_native_gen: do not edit. */\n"
                  "#include <math.h>\n#include <stdint.h>\n"
                  "#ifdef _OPENMP\n#define MG_OMP(x) _Pragma(#x)\n#else\n#define MG_OMP(x)\n#endif\n";
  c += gemm_c99::arch_text();
  for (DType t : {DType::f32, DType::f64}) {
    const std::string T = t == DType::f32 ? "float" : "double", S(name_of(t)), U = t == DType::f32 ? "F32" : "F64";
    c += gemm_c99::defs_text(t) + gemm_c99::packed_text(t);
    c += "void MG_GEMM_NATIVE_" + U + "(int64_t m, int64_t n, int64_t k, const " + T + "* a, int64_t ars, int64_t acs, const " +
         T + "* b, int64_t brs, int64_t bcs, " + T + "* c, " + T + "* bpack, int64_t nb);\n";
    c += "void MG_GEMM_NATIVE_" + U + "(int64_t m, int64_t n, int64_t k, const " + T + "* a, int64_t ars, int64_t acs, const " +
         T + "* b, int64_t brs, int64_t bcs, " + T + "* c, " + T + "* bpack, int64_t nb) {\n  mg_gemm_" + S +
         "(m, n, k, a, ars, acs, b, brs, bcs, c, bpack, nb);\n}\n";
  }
  FILE* f = std::fopen(argv[1], "w");
  if (!f) return 1;
  const bool ok = std::fwrite(c.data(), 1, c.size(), f) == c.size();
  return std::fclose(f) == 0 && ok ? 0 : 1;
}
