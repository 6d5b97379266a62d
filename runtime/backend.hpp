// Which executor runs a compiled graph (DESIGN invariant 6: two executors, one meaning).
// Tiny on purpose: the DSL's compile.hpp includes it.
#pragma once

namespace mg::rt {

enum class Backend {
  interpreter,  // the reference: registry kernels over xtensor/BLAS
  c99,          // the graph emitted as C99, compiled by the system cc and dlopen-ed
};

}  // namespace mg::rt
