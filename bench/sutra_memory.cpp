// SUTRA's memory claim, measured: the gradient of a neural ODE (an MLP 2-50-2 field on a
// batch of 64 states, rk4 with S = 10, 100, 1000 steps on t in [0, 1]) by the adjoint
// method, by direct backprop through the solver's scan, and by backprop with
// checkpointing (checkpoint_every ~ sqrt S). For each: the runtime's planned peak bytes,
// the measured growth of the resident set while the gradient runs (peak RSS minus RSS
// before, fresh child process per configuration), and the median time per gradient.
// The adjoint's columns stay flat in S; direct backprop's grow linearly.
//   sutra_memory [--steps 10,100,1000]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <minigrad/frontier/sutra.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"

namespace sutra = mg::frontier::sutra;
using mg::Tensor, mg::Tensors;

// The vector field: an MLP 2-50-2.
struct Field {
  mg::nn::Linear l1{2, 50, true, mg::f64}, l2{50, 2, true, mg::f64};
  Tensor operator()(const Tensor& y) const { return l2(mg::tanh(l1(y))); }
};
BOOST_HANA_ADAPT_STRUCT(Field, l1, l2);

namespace {

constexpr std::int64_t kBatch = 64;


struct Result {
  double planned_mb = -1, rss_mb = -1, ms = -1;
};

double rss_now_mb() {  // resident set, from /proc/self/statm (pages)
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}
double rss_peak_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1e3;  // KB on Linux
}

Result measure(sutra::Grad mode, std::int64_t steps, std::int64_t checkpoint_every) {
  Result r;
  sutra::NeuralODE<Field> node(Field{}, {.method = sutra::Method::rk4, .grad = mode, .steps_per_interval = steps,
                                         .checkpoint_every = checkpoint_every});
  mg::Graph g;
  mg::nn::bind(node, g, 1);
  Tensor y0 = g.input("y0", mg::f64, {kBatch, 2}), ts = g.input("ts", mg::f64, {2});
  Tensor y = node(y0, ts);
  Tensor loss = (y * y).mean();
  std::vector<Tensor> wrt;
  std::vector<double> start;
  for (std::int64_t i = 0; i < 2 * kBatch; ++i) start.push_back(0.01 * static_cast<double>(i % 17) - 0.08);
  std::vector<mg::Feed> feeds{{"y0", mg::Array::from_vector({kBatch, 2}, start)},
                              {"ts", mg::Array::from_vector({2}, std::vector<double>{0, 1})}};
  for (mg::nn::Parameter* p : mg::nn::parameters(node)) {
    wrt.push_back(p->tensor);
    feeds.push_back({p->name(), p->value()});
  }
  auto exe = mg::compile(g, mg::grad(loss, wrt));
  r.planned_mb = static_cast<double>(exe.peak_bytes()) / 1e6;
  const double before = rss_now_mb();
  exe.run(feeds);
  r.rss_mb = rss_peak_mb() - before;
  r.ms = mg::bench::median_ms([&] { exe.run(feeds); }, 1, 5);
  return r;
}

std::string cell(double v, const char* fmt) {
  if (v < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> steps{10, 100, 1000};
  if (argc == 3 && std::string(argv[1]) == "--steps") {
    steps.clear();
    for (char* s = argv[2]; *s;) {
      steps.push_back(std::strtoll(s, &s, 10));
      if (*s == ',') ++s;
    }
  }
  std::printf("gradient of a neural ODE (MLP 2-50-2, batch %lld, rk4, f64), one fresh process per row\n",
              static_cast<long long>(kBatch));
  std::printf("%-6s %-24s %12s %14s %10s\n", "steps", "gradient", "planned MB", "RSS growth MB", "ms");
  for (std::int64_t s : steps) {
    std::int64_t k = 1;
    for (std::int64_t d = 1; d * d <= s; ++d)
      if (s % d == 0) k = d;  // the largest divisor <= sqrt(S)
    struct Row {
      const char* name;
      sutra::Grad mode;
      std::int64_t k;
    };
    for (const Row& row : {Row{"adjoint", sutra::Grad::adjoint, 0}, Row{"direct backprop", sutra::Grad::backprop, 0},
                           Row{"backprop, checkpointed", sutra::Grad::backprop, k}}) {
      const Result r = mg::bench::in_child([&] { return measure(row.mode, s, row.k); }, Result{});
      std::string name = row.name;
      if (row.k) name += " k=" + std::to_string(row.k);
      std::printf("%-6lld %-24s %12s %14s %10s\n", static_cast<long long>(s), name.c_str(), cell(r.planned_mb, "%.3f").c_str(),
                  cell(r.rss_mb, "%.1f").c_str(), cell(r.ms, "%.1f").c_str());
    }
  }
  return 0;
}
