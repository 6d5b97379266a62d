// Per executable, while other processes load our cores: which thread count runs this
// executable's step faster, measured by timing its own runs, not guessed. Why: beside one
// busy process the thread budget's single thread suits a step of many short kernels (the
// MLP: 2 threads wait a time slice at each barrier, 5x slower) but not one of long kernels
// (the CNN: 1 thread is ~1.8x its quiet 2-thread time, 2 threads ~1.1x). So under load
// runs alternate the budget's count (twice: the first run after the full count is not
// counted, thread_choice.cpp) and the full count until each has a few runs; the faster
// (mean) is kept, and measured again after a while (twice as long each time the same count
// wins again: the loser's runs are the cost) or when the choice starts to run slow. A
// candidate 3x slower than the other after two runs each (10x after one) loses at once. MG_THREAD_CHOICE_LOG
// set in the environment prints each choice to stderr.
// No OpenMP here (the interpreter applies the count).
#pragma once
#include <chrono>
#include <mutex>
#include <vector>

namespace mg::rt {

class ThreadChoice {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kSamples = 5;  // runs timed per candidate
  static constexpr auto kKeep = std::chrono::seconds(2);  // how long a new choice holds
  static constexpr auto kKeepMax = std::chrono::seconds(64);

  // Threads for the next run: `wanted` when `budget` >= wanted (no load); under load
  // `budget` or `wanted`, whichever this executable's runs measured faster.
  int pick(int wanted, int budget, Clock::time_point now);
  // The run that pick() gave `threads` took `ms`, ending at `now`.
  void record(int threads, double ms, Clock::time_point now);

 private:
  void explore();

  std::mutex mu_;
  int low_ = 0, high_ = 0;           // the candidates being compared (budget, wanted)
  bool exploring_ = false;
  int phase_ = 0;                    // exploring: 0, 1 the lower count's runs, 2 the higher's
  int last_threads_ = 0;             // the count of the last run recorded
  std::vector<double> times_[2];     // exploring: ms per run, per candidate
  int chosen_ = 0;                   // 0: none yet
  double chosen_ms_ = 0;             // the chosen candidate's mean
  int slow_runs_ = 0;                // runs in a row over 2x chosen_ms_
  Clock::time_point until_{};        // when to measure again
  Clock::duration keep_ = kKeep;     // how long the current choice holds
};

}  // namespace mg::rt
