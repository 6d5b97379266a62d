// The load-adaptive thread budget (runtime/thread_budget.hpp): the decision from others'
// busy cores, the /proc/stat parser, the off switch, and that a run leaves the caller's
// OpenMP thread count as it found it.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "minigrad/minigrad.hpp"
#include "minigrad/runtime/thread_budget.hpp"
#include "minigrad/runtime/thread_choice.hpp"

namespace mg::rt {
namespace {

// Runs `n` picks under load (budget 1 of 2 wanted), each timed `ms(threads)`; the counts picked.
template <class Ms>
std::vector<int> picks(ThreadChoice& c, int n, ThreadChoice::Clock::time_point& now, Ms ms) {
  std::vector<int> got;
  for (int i = 0; i < n; ++i) {
    const int t = c.pick(2, 1, now);
    now += std::chrono::milliseconds(1);
    c.record(t, ms(t), now);
    got.push_back(t);
  }
  return got;
}

TEST(ThreadChoice, KeepsTheFasterCountUnderLoad) {
  using std::chrono::seconds;
  auto now = ThreadChoice::Clock::time_point{} + seconds(100);
  ThreadChoice c;
  EXPECT_EQ(c.pick(2, 2, now), 2);  // no load: what is wanted, nothing measured
  EXPECT_EQ(c.pick(1, 1, now), 1);
  const int k = ThreadChoice::kSamples;
  const auto cycles = [](int n, std::vector<int> cycle) {  // `cycle` n times
    std::vector<int> v;
    for (int i = 0; i < n; ++i) v.insert(v.end(), cycle.begin(), cycle.end());
    return v;
  };
  // Long kernels (the CNN): 2 threads beside a busy process beat 1. Both measured, in
  // cycles of two 1-thread runs and one 2-thread run, until each has k counted runs (the
  // 1-thread run after a 2-thread one is not counted).
  auto cnn = [](int t) { return t == 2 ? 3.0 : 5.0; };
  EXPECT_EQ(picks(c, 3 * k, now, cnn), cycles(k, {1, 1, 2}));
  EXPECT_EQ(picks(c, 10, now, cnn), std::vector<int>(10, 2));
  // After kKeep it measures again; the same count wins: it holds twice as long.
  now += ThreadChoice::kKeep;
  EXPECT_EQ(picks(c, 3 * k + 1, now, cnn).back(), 2);
  now += ThreadChoice::kKeep;
  EXPECT_EQ(picks(c, 5, now, cnn), std::vector<int>(5, 2));
  now += ThreadChoice::kKeep;
  // Now 1 thread is much faster (the MLP's many short kernels): two counted runs each decide.
  auto mlp = [](int t) { return t == 2 ? 4.0 : 0.7; };
  EXPECT_EQ(picks(c, 6, now, mlp), cycles(2, {1, 1, 2}));
  EXPECT_EQ(picks(c, 10, now, mlp), std::vector<int>(10, 1));
  // The choice running over twice its measured time three runs in a row: measure again.
  auto worse = [](int t) { return t == 1 ? 3.0 : 2.0; };
  const std::vector<int> slow = picks(c, 3 + 3 * k, now, worse);
  EXPECT_EQ(std::vector<int>(slow.begin(), slow.begin() + 3), std::vector<int>(3, 1));
  EXPECT_EQ(picks(c, 5, now, worse), std::vector<int>(5, 2));
  // Ten times slower after one counted run each: decided at once.
  now += ThreadChoice::kKeepMax;
  auto heavy = [](int t) { return t == 2 ? 400.0 : 9.0; };
  EXPECT_EQ(picks(c, 3, now, heavy), (std::vector<int>{1, 1, 2}));
  EXPECT_EQ(picks(c, 5, now, heavy), std::vector<int>(5, 1));
  // Another budget (more cores free): compared afresh.
  EXPECT_EQ(c.pick(4, 3, now), 3);
  EXPECT_EQ(c.pick(4, 3, now), 3);
  EXPECT_EQ(c.pick(4, 3, now), 4);
}

// libgomp's workers spin on for a few ms after a 2-thread run, on the core one thread was to
// leave to the other process: the 1-thread run right after a 2-thread one is slow (beside a
// busy process, the CNN: 5-7 ms against 2.3-2.9). Counted, it would make 2 threads win.
TEST(ThreadChoice, TheLowerCountsFirstRunAfterTheHigherIsNotCounted) {
  auto now = ThreadChoice::Clock::time_point{} + std::chrono::seconds(100);
  ThreadChoice c;
  int last = 0;
  auto spun = [&](int t) {
    const double ms = t == 2 ? 3.0 : last == 2 ? 9.0 : 2.5;
    last = t;
    return ms;
  };
  picks(c, 3 * ThreadChoice::kSamples, now, spun);
  EXPECT_EQ(picks(c, 5, now, spun), std::vector<int>(5, 1));
}

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
