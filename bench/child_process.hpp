// Runs one measurement in a child process of its own and returns its result (milliseconds).
// Why: two runtimes in one process disturb each other — idle OpenMP, OpenBLAS and libtorch
// pool threads spin after their last job, and libtorch's set_num_threads is also ours. The
// parent starts no threads (fork after OpenMP is unsafe), so each side starts clean.
// (The same rule as bench/train_step_bench.cpp's in_child.)
#pragma once
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>

namespace mg::bench {

inline double in_child(const std::function<double()>& measure) {
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fd[0]);
    // Keep freed memory, as a long-running trainer's heap soon does (a fresh process would
    // return megabytes to the OS and page-fault them back every step, both sides alike).
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 64 << 20);
    double ms = -1;
    try {
      ms = measure();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "benchmark failed: %s\n", e.what());
    }
    const bool ok = write(fd[1], &ms, sizeof ms) == static_cast<ssize_t>(sizeof ms);
    _exit(ok && ms >= 0 ? 0 : 1);
  }
  close(fd[1]);
  double ms = -1;
  const bool got = read(fd[0], &ms, sizeof ms) == static_cast<ssize_t>(sizeof ms);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return ms;
}

}  // namespace mg::bench
