// The load-adaptive thread budget (thread_budget.hpp): a process-wide sampler of how busy
// this process's CPUs are with other processes' work. Our own CPU time (every thread's,
// spinning OpenMP workers included) is subtracted, so the measure does not depend on how
// many threads we ran: no oscillation between 1 and 2 threads.
#include "minigrad/runtime/thread_budget.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#ifdef __linux__
#include <sched.h>
#include <time.h>
#include <unistd.h>
#endif

namespace mg::rt {

int budget_from(int wanted, int cpus, double others_busy) {
  const int left = static_cast<int>(std::floor(cpus - others_busy + 0.4));
  return std::max(1, std::min(wanted, left));
}

long long busy_ticks(std::string_view proc_stat, const std::vector<int>& cpus) {
  long long sum = 0;
  std::size_t pos = 0;
  while (pos < proc_stat.size()) {
    std::size_t end = proc_stat.find('\n', pos);
    if (end == std::string_view::npos) end = proc_stat.size();
    const std::string_view line = proc_stat.substr(pos, end - pos);
    pos = end + 1;
    // "cpuN user nice system idle iowait irq softirq steal ..." (the aggregate "cpu " is skipped)
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream in{std::string(line.substr(3))};
    int cpu = -1;
    long long f[8] = {};
    in >> cpu;
    for (long long& v : f) in >> v;
    bool mine = false;
    for (int c : cpus) mine |= c == cpu;
    if (mine) sum += f[0] + f[1] + f[2] + f[5] + f[6] + f[7];  // not idle (3) nor iowait (4)
  }
  return sum;
}

namespace {

constexpr auto kWindow = std::chrono::milliseconds(100);

std::atomic<int> g_adaptive{-1};  // -1: not read from the environment yet
std::atomic<int> g_forced{0};

#ifdef __linux__
struct Sample {
  std::chrono::steady_clock::time_point when;
  long long busy = 0;     // ticks of our CPUs
  double own_s = 0;       // this process's CPU seconds
  int cpus = 0;
};

bool take(Sample& s) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  std::ifstream f("/proc/stat");
  if (!f) return false;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  s.when = std::chrono::steady_clock::now();
  s.busy = busy_ticks(text, cpus);
  s.own_s = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  s.cpus = static_cast<int>(cpus.size());
  return true;
}

struct Sampler {
  std::mutex mu;
  Sample last;
  bool have_last = false;
  bool broken = false;  // /proc/stat unreadable: never lower
  std::atomic<std::int64_t> next_ns{0};  // steady_clock time of the next sample
  std::atomic<int> cpus{0};
  std::atomic<int> others_milli{0};  // others' busy cores over the last window, x1000
};

Sampler& sampler() {
  static Sampler s;
  return s;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void resample(Sampler& s) {
  std::unique_lock lock(s.mu, std::try_to_lock);
  if (!lock.owns_lock() || now_ns() < s.next_ns.load(std::memory_order_relaxed)) return;  // another thread samples
  Sample cur;
  if (s.broken || !take(cur)) {
    s.broken = true;
    s.next_ns.store(INT64_MAX, std::memory_order_relaxed);
    return;
  }
  if (s.have_last && cur.cpus == s.last.cpus) {
    static const double tick_s = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    const double wall = std::chrono::duration<double>(cur.when - s.last.when).count();
    const double others = static_cast<double>(cur.busy - s.last.busy) * tick_s - (cur.own_s - s.last.own_s);
    s.others_milli.store(static_cast<int>(std::max(0.0, others / wall) * 1000), std::memory_order_relaxed);
    s.cpus.store(cur.cpus, std::memory_order_relaxed);
  }
  s.last = cur;
  s.have_last = true;
  s.next_ns.store(now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(kWindow).count(),
                  std::memory_order_relaxed);
}
#endif

}  // namespace

void set_load_adaptive(bool on) { g_adaptive.store(on ? 1 : 0); }
void force_thread_budget(int n) { g_forced.store(n); }

bool load_adaptive() {
  int a = g_adaptive.load();
  if (a < 0) {
    const char* env = std::getenv("MG_LOAD_ADAPTIVE");
    a = env && std::strcmp(env, "0") == 0 ? 0 : 1;
    int expected = -1;
    if (!g_adaptive.compare_exchange_strong(expected, a)) a = expected;
  }
  return a == 1;
}

int thread_budget(int wanted) {
  if (const int forced = g_forced.load(std::memory_order_relaxed); forced > 0) return std::min(wanted, forced);
#ifdef __linux__
  if (wanted <= 1 || !load_adaptive()) return wanted;
  Sampler& s = sampler();
  if (now_ns() >= s.next_ns.load(std::memory_order_relaxed)) resample(s);
  const int cpus = s.cpus.load(std::memory_order_relaxed);
  if (cpus == 0) return wanted;  // no full window yet
  return budget_from(wanted, cpus, s.others_milli.load(std::memory_order_relaxed) / 1000.0);
#else
  return wanted;
#endif
}

}  // namespace mg::rt
