// The load-adaptive thread budget (runtime/thread_budget.hpp): the decision from others'
// busy cores, the /proc/stat parser, the off switch, and that a run leaves the caller's
// OpenMP thread count as it found it.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <chrono>

#include "minigrad/minigrad.hpp"
#include "minigrad/runtime/thread_budget.hpp"

namespace mg::rt {
namespace {

TEST(ThreadBudget, DropsACoreOthersKeepBusy) {
  EXPECT_EQ(budget_from(2, 2, 0.0), 2);
  EXPECT_EQ(budget_from(2, 2, 0.35), 2);  // a light background: keep both threads
  EXPECT_EQ(budget_from(2, 2, 0.5), 1);   // one busy process beside us: one thread
  EXPECT_EQ(budget_from(2, 2, 1.0), 1);
  EXPECT_EQ(budget_from(2, 2, 3.0), 1);   // never below one
  EXPECT_EQ(budget_from(8, 16, 4.0), 8);  // enough free cores elsewhere in the set
  EXPECT_EQ(budget_from(8, 8, 3.0), 5);
  EXPECT_EQ(budget_from(4, 2, 0.0), 2);   // more threads than CPUs would share cores too
}

TEST(ThreadBudget, SumsTheBusyTicksOfTheListedCpus) {
  const char* stat =
      "cpu  900 0 90 9000 9 0 9 0 0 0\n"
      "cpu0 100 1 10 5000 7 2 3 4 0 0\n"
      "cpu1 200 0 20 4000 2 0 6 0 0 0\n"
      "cpu12 1000 0 0 0 0 0 0 0 0 0\n"
      "intr 12345 0 0\n"
      "ctxt 999\n";
  EXPECT_EQ(busy_ticks(stat, {0}), 100 + 1 + 10 + 2 + 3 + 4);  // idle and iowait not counted
  EXPECT_EQ(busy_ticks(stat, {0, 1}), 120 + 226);
  EXPECT_EQ(busy_ticks(stat, {12}), 1000);  // not cpu1's line
  EXPECT_EQ(busy_ticks(stat, {5}), 0);
}

TEST(ThreadBudget, OffReturnsWhatIsWanted) {
  set_load_adaptive(false);
  EXPECT_FALSE(load_adaptive());
  EXPECT_EQ(thread_budget(7), 7);
  set_load_adaptive(true);
  EXPECT_TRUE(load_adaptive());
  EXPECT_EQ(thread_budget(1), 1);
  const int t = thread_budget(2);
  EXPECT_TRUE(t == 1 || t == 2) << t;
}

// More threads than CPUs: once a window has passed, every run is lowered (to the CPUs at
// most), and each must hand the caller's count back.
TEST(ThreadBudget, ARunRestoresTheCallersThreadCount) {
  Graph g;
  Tensor x = g.input("x", f32, {128, 128});
  mg::Executable exe = mg::compile(g, {matmul(x, x)});
  const Array xv(f32, {128, 128});
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int wanted = CPU_COUNT(&set) + 1;
  omp_set_num_threads(wanted);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(250)) {
    exe.run({{"x", xv}});
    ASSERT_EQ(omp_get_max_threads(), wanted);
  }
  EXPECT_LT(thread_budget(wanted), wanted);  // so the runs above were lowered
  omp_set_num_threads(omp_get_num_procs());
}

// Lowered to one thread (a busy machine): the run hands the caller's count back, and
// OpenBLAS (its OpenMP build follows omp_get_max_threads at each call) with it.
TEST(ThreadBudget, ComesBackFromOneThread) {
  Graph g;
  Tensor x = g.input("x", f32, {128, 128});
  mg::Executable exe = mg::compile(g, {matmul(x, x)});
  const Array xv(f32, {128, 128});
  omp_set_num_threads(2);
  force_thread_budget(1);
  EXPECT_EQ(thread_budget(2), 1);
  for (int i = 0; i < 3; ++i) {
    exe.run({{"x", xv}});
    EXPECT_EQ(omp_get_max_threads(), 2);
  }
  force_thread_budget(0);
  omp_set_num_threads(omp_get_num_procs());
}

}  // namespace
}  // namespace mg::rt
