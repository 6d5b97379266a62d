// The measured choice between the thread budget's count and the full count under load
// (thread_choice.hpp). Candidates alternate while exploring, so a drift in the load hits
// both alike: two runs of the lower count, one of the higher. The first run of the lower
// count after one of the higher is not counted: libgomp's idle workers spin on for a few
// ms after a parallel region (GOMP_SPINCOUNT, read when it loads), on the core the lower
// count was to leave to the other process (the CNN's 1-thread step beside a busy process:
// 3.9-8.2 ms right after a 2-thread step, 2.9-3.3 from the second run on).
#include "minigrad/runtime/thread_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mg::rt {

namespace {
// The mean, not the median: under load a 2-thread step is bimodal (mostly fast, now and
// then a scheduler slice slower at a barrier), and the slow runs are what the caller pays.
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
}  // namespace

void ThreadChoice::explore() {
  exploring_ = true, phase_ = 0, slow_runs_ = 0;
  times_[0].clear(), times_[1].clear();
}

int ThreadChoice::pick(int wanted, int budget, Clock::time_point now) {
  if (budget >= wanted) return wanted;
  std::lock_guard lock(mu_);
  if (low_ != budget || high_ != wanted) {
    low_ = budget, high_ = wanted, chosen_ = 0;
    explore();
  } else if (!exploring_ && (now >= until_ || slow_runs_ >= 3)) {
    explore();
  }
  if (!exploring_) return chosen_;
  const int phase = phase_;
  phase_ = (phase_ + 1) % 3;
  return phase < 2 ? low_ : high_;
}

void ThreadChoice::record(int threads, double ms, Clock::time_point now) {
  std::lock_guard lock(mu_);
  const bool after_more = threads < last_threads_;
  last_threads_ = threads;
  if (!exploring_) {
    if (threads == chosen_) slow_runs_ = ms > 2 * chosen_ms_ ? slow_runs_ + 1 : 0;
    return;
  }
  if ((threads != low_ && threads != high_) || after_more) return;
  times_[threads == low_ ? 0 : 1].push_back(ms);
  const std::size_t runs = std::min(times_[0].size(), times_[1].size());
  if (runs < 1) return;
  const double low_ms = mean(times_[0]), high_ms = mean(times_[1]);
  const double ratio = std::max(low_ms, high_ms) / std::min(low_ms, high_ms);
  // Clear differences end the comparison early: the loser's runs are its cost (under
  // heavy load a 2-thread CNN step took 300-500 ms against 3-30 at 1 thread).
  if (runs < static_cast<std::size_t>(kSamples) && !(ratio > 10 || (runs >= 2 && ratio > 3))) return;
  const int was = chosen_;
  chosen_ = high_ms < low_ms ? high_ : low_;
  chosen_ms_ = std::min(low_ms, high_ms);
  exploring_ = false;
  keep_ = chosen_ == was ? std::min<Clock::duration>(2 * keep_, kKeepMax) : Clock::duration(kKeep);
  until_ = now + keep_;
  static const bool log = std::getenv("MG_THREAD_CHOICE_LOG") != nullptr;  // bench/load_bench: what was chosen
  if (log)
    std::fprintf(stderr, "thread choice: %d threads (mean %.3f ms of %zu runs) vs %d (%.3f ms of %zu), kept %.0f s\n",
                 chosen_, chosen_ms_, times_[chosen_ == low_ ? 0 : 1].size(), chosen_ == low_ ? high_ : low_,
                 std::max(low_ms, high_ms), times_[chosen_ == low_ ? 1 : 0].size(),
                 std::chrono::duration<double>(keep_).count());
}

}  // namespace mg::rt
