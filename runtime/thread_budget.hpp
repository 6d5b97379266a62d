// How many OpenMP threads one run of an executable may use now: the caller's setting,
// less the cores of this process's CPU set that other processes keep busy. Why: every
// kernel's parallel region (and OpenBLAS's) ends at a barrier, and a thread that shares
// its core with a busy process makes each barrier wait a scheduler time slice for it (a
// 2-thread MLP step went 0.68 -> 3.38 ms beside one busy process); one thread instead runs
// on the free core at its quiet speed. Linux only (/proc/stat); elsewhere it never lowers.
// No OpenMP here: the interpreter applies the budget (omp.h stays out of this header).
#pragma once
#include <string_view>
#include <vector>

namespace mg::rt {

// Threads for a run that wants `wanted` (omp_get_max_threads()). Measured over windows of
// >= 100 ms (/proc/stat per CPU of sched_getaffinity, less this process's CPU time);
// until a window has passed, `wanted`. Cheap: a clock read per call, a /proc/stat read
// per window. Thread-safe.
int thread_budget(int wanted);

// Default on; off (also MG_LOAD_ADAPTIVE=0 in the environment): thread_budget(w) == w.
void set_load_adaptive(bool on);
bool load_adaptive();
// Tests: n > 0 makes thread_budget(w) == min(w, n) whatever the load; 0 measures again.
void force_thread_budget(int n);

// The pure parts, for tests. The decision: `wanted`, at most the CPUs left when others
// use `others_busy` cores of `cpus` (a core counts as taken once others keep it busy
// more than 40% of the time: its barriers would wait for slices), at least 1.
int budget_from(int wanted, int cpus, double others_busy);
// Sum of the non-idle clock ticks (user, nice, system, irq, softirq, steal) of the listed
// CPUs in /proc/stat's text; CPUs missing from the text count 0.
long long busy_ticks(std::string_view proc_stat, const std::vector<int>& cpus);

}  // namespace mg::rt
