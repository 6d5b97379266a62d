// Which executor runs a compiled graph (DESIGN invariant 6: two executors, one meaning).
// Tiny on purpose: the DSL's compile.hpp includes it.
#pragma once

namespace mg::rt {

enum class Backend {
  interpreter,  // the reference: registry kernels over xtensor/BLAS
  c99,          // the graph emitted as C99, compiled by the system cc and dlopen-ed
};

// Run-time checks an executable is compiled with; all off by default, and then free.
struct Checks {
  // After every node, scan its value for NaN/Inf; the first one raises mg::NumericsError
  // naming its root cause (runtime/glassbox/numerics.hpp). Also on when the environment
  // variable MG_CHECK_NUMERICS is set (not "0") at compile time.
  bool numerics = false;
  // Time every node the interpreter runs (Executable::profile(); tables and a Chrome trace
  // in runtime/glassbox/telemetry.hpp). Two clock reads per node; the C99 backend ignores it.
  bool profile = false;
};

}  // namespace mg::rt
