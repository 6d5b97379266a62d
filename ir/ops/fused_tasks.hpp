// for_tasks: the one parallel loop of the fused kernels (elementwise tiles, reduction
// outputs), with a BodyEval::Scratch per thread and the first error rethrown.
#pragma once
#include <exception>
#include <mutex>

#include "minigrad/ir/ops/fused_body.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mg::ir::fused {

// Runs f(scratch, task) for every task, in parallel when `par`; rethrows the first error.
// Serial runs never enter OpenMP: a parallel region costs a futex call even if(false)
// (microseconds on a VM), which made every small fused node (an Adam update of a bias)
// several times slower than the ops it replaced.
template <class F>
void for_tasks(const BodyEval& eval, std::int64_t tasks, bool par, F&& f) {
#ifdef _OPENMP
  const bool serial = !par || tasks <= 1 || omp_get_max_threads() == 1;
#else
  const bool serial = true;
#endif
  if (serial) {
    BodyEval::Scratch sc(eval);
    for (std::int64_t t = 0; t < tasks; ++t) f(sc, t);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mu;
#pragma omp parallel
  {
    BodyEval::Scratch sc(eval);
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      try {
        f(sc, t);
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace mg::ir::fused
