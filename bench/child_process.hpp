// Runs one measurement in a child process of its own and returns its result. Why: two
// runtimes in one process disturb each other — idle OpenMP, OpenBLAS and libtorch pool
// threads spin after their last job, and libtorch's set_num_threads is also ours — which
// made in-process medians swing 2-3x between runs. The parent starts no threads (fork after
// OpenMP is unsafe), so each side starts as clean as a fresh process.
#pragma once
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <type_traits>

namespace mg::bench {

// `measure` returns milliseconds (a double) or a struct of them; a failed measurement
// (an exception, a crash) gives `if_failed`, which tables print as "-".
template <class F, class T = std::invoke_result_t<F&>>
T in_child(F&& measure, T if_failed) {
  static_assert(std::is_trivially_copyable_v<T>, "the result crosses a pipe as bytes");
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fd[0]);
    // Both sides free and reallocate megabytes per step; with glibc's defaults a fresh
    // process returns them to the OS and page-faults them back every step (2-3x slower
    // for both). Keep freed memory, as a long-running trainer's heap soon does.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 64 << 20);
    bool ok = true;
    T r = if_failed;
    try {
      r = measure();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "benchmark failed: %s\n", e.what());
      ok = false;
    }
    ok = write(fd[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r) && ok;
    _exit(ok ? 0 : 1);
  }
  close(fd[1]);
  T r = if_failed;
  const bool got = read(fd[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return if_failed;
  return r;
}

// Milliseconds, or -1 when the measurement failed.
template <class F>
double in_child(F&& measure) {
  return in_child(std::forward<F>(measure), -1.0);
}

}  // namespace mg::bench
