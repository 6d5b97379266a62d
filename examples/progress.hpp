// Small helpers shared by the examples: --name value flags and a progress bar.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unistd.h>

namespace mg::examples {

// Parses `--name value` pairs against defaults; an unknown flag prints usage and exits 2.
class Args {
 public:
  Args(int argc, char** argv, std::map<std::string, std::string> defaults) : values_(std::move(defaults)) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0 || !values_.count(a.substr(2)) || i + 1 >= argc) usage(argv[0]);
      values_[a.substr(2)] = argv[++i];
    }
  }
  std::string str(const std::string& k) const { return values_.at(k); }
  long long integer(const std::string& k) const { return std::atoll(values_.at(k).c_str()); }

 private:
  [[noreturn]] void usage(const char* prog) const {
    std::fprintf(stderr, "usage: %s", prog);
    for (auto& [k, v] : values_) std::fprintf(stderr, " [--%s %s]", k.c_str(), v.c_str());
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  std::map<std::string, std::string> values_;
};

// A one-line progress bar with the running loss and throughput; redraws in place on a
// terminal, prints every tenth of the epoch otherwise (logs stay short).
class Progress {
 public:
  Progress(std::string title, long long total, long long samples_per_tick)
      : title_(std::move(title)), total_(total), per_tick_(samples_per_tick), tty_(isatty(fileno(stdout))),
        start_(std::chrono::steady_clock::now()) {}
  void tick(double loss) {
    ++done_;
    loss_ = loss;
    if (tty_ || done_ % std::max(1LL, total_ / 10) == 0 || done_ == total_) draw();
  }
  // A run with a time budget re-estimates its step count as it goes.
  void set_total(long long total) { total_ = total; }
  void done() {
    if (tty_) std::printf("\n");
    std::fflush(stdout);
  }

 private:
  void draw() {
    const int width = 30;
    // Clamped: a time-budgeted run can pass the estimate it started with.
    const int filled = static_cast<int>(std::clamp<long long>(width * done_ / std::max(1LL, total_), 0, width));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("%c%s [%s%s] %lld/%lld loss %.4f %.0f samples/s", tty_ ? '\r' : ' ', title_.c_str(),
                std::string(static_cast<std::size_t>(filled), '=').c_str(),
                std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done_, total_, loss_,
                static_cast<double>(done_ * per_tick_) / std::max(s, 1e-9));
    if (!tty_) std::printf("\n");
    std::fflush(stdout);
  }
  std::string title_;
  long long total_, per_tick_, done_ = 0;
  double loss_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mg::examples
