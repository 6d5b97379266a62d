// A module's GEMM and conv kernels as text or as pointers to the library's copies; see
// c_kernels.hpp.
#include "minigrad/ir/ops/c_kernels.hpp"

#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/nn_conv_c99_text.hpp"

namespace mg::ir::c_kernels {

namespace {

const gemm_c99::KernelEntry& entry(Kernel k) { return gemm_c99::kKernelEntries[static_cast<int>(k)]; }

std::string text(Kernel k, DType t) {
  switch (k) {
    case Kernel::gemm: return gemm_c99::packed_text(t);
    case Kernel::conv_tiles: return gemm_c99::substitute(nn::conv_c99::kTiles, t);
    case Kernel::conv_dots: return gemm_c99::substitute(nn::conv_c99::kDots, t);
  }
  return {};
}

// `static <name>_fn <name>;`: called like the function, set by the module's bind entry
// (module.cpp), which names the pointer type <name>_fn to cast to.
std::string pointer(const std::string& name, const std::string& params) {
  return "typedef void (*" + name + "_fn)(" + params + ");\nstatic " + name + "_fn " + name +
         "; /* the library's compiled copy, set when the module is loaded */\n";
}

}  // namespace

void use_macros(const CLoopArgs& a, DType t) {
  a.support("mg_gemm_arch", gemm_c99::arch_text());
  a.support("mg_gemm_defs_" + std::string(name_of(t)), gemm_c99::defs_text(t));
}

std::string use(const CLoopArgs& a, Kernel k, DType t) {
  use_macros(a, t);
  if (k == Kernel::conv_dots) a.support("mg_dots_rows", nn::conv_c99::kDotsRows);
  const std::string name = gemm_c99::substitute(entry(k).c_name, t);
  if (a.host_kernels && entry(k).jit_binds) {
    a.support(name, pointer(name, gemm_c99::substitute(entry(k).params, t)));
  } else {
    a.support("mg_gemm_intrinsics", gemm_c99::intrinsics_text());
    a.support(name, text(k, t));
  }
  return name;
}

std::string use_gemm(const CLoopArgs& a, DType t, bool few_rows) {
  if (!few_rows) return use(a, Kernel::gemm, t);
  use_macros(a, t);
  const std::string name = "mg_gemm_small_" + std::string(name_of(t));
  a.support(name, gemm_c99::small_text(t));
  return name;
}

bool is_bound(std::string_view name) {
  for (const gemm_c99::KernelEntry& e : gemm_c99::kKernelEntries)
    for (DType t : {DType::f32, DType::f64})
      if (e.jit_binds && name == gemm_c99::substitute(e.c_name, t)) return true;
  return false;
}

}  // namespace mg::ir::c_kernels
