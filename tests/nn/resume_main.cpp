// Resuming a training run in a fresh process is bit-identical to never stopping. Run with no
// arguments, it runs itself three times: `straight OUT` (7 steps), `first CKPT` (3 steps,
// then TrainStep::save) and `second CKPT OUT` (a new process: TrainStep::load, 4 more
// steps), and compares the two final training states byte for byte. Adam, a step_lr
// schedule, BatchNorm's running statistics and Dropout's random stream all take part.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg {
struct ResumeNet {
  nn::Linear fc1{6, 16};
  nn::BatchNorm1D bn{16};
  nn::Dropout drop{0.3};
  nn::Linear fc2{16, 3};
  Tensor operator()(const Tensor& x) const { return fc2(drop(relu(bn(fc1(x))))); }
};
}  // namespace mg
BOOST_HANA_ADAPT_STRUCT(mg::ResumeNet, fc1, bn, drop, fc2);

namespace {
using namespace mg;

Array batch(Type t, int k) {
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i)
    a.set(i, t.dtype == i64 ? static_cast<double>((i * 7 + k) % 3) : std::sin(0.11 * static_cast<double>(i) + k));
  return a;
}

nn::TrainStep build(ResumeNet& model, std::uint64_t seed) {
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", f32, {32, 6});
  Tensor y = g.input("y", i64, {32});
  return nn::compile_train(g, nn::cross_entropy(model(x), y), model, nn::Adam{.lr = 1e-2},
                           {.schedule = nn::step_lr(2, 0.5)});
}

void run(nn::TrainStep& step, int from, int to) {
  for (int k = from; k < to; ++k) step.run({{"x", batch(Type{f32, {32, 6}}, k)}, {"y", batch(Type{i64, {32}}, k)}});
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

int check(const std::string& self) {
  const auto dir = std::filesystem::temp_directory_path() / ("minigrad_resume" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "straight.safetensors").string(), ckpt = (dir / "ckpt.safetensors").string(),
                    b = (dir / "resumed.safetensors").string();
  for (const std::string& args : {"straight " + a, "first " + ckpt, "second " + ckpt + " " + b})
    if (std::system((self + " " + args).c_str()) != 0) {
      std::printf("FAIL: %s %s\n", self.c_str(), args.c_str());
      return 1;
    }
  const bool same = slurp(a) == slurp(b) && !slurp(a).empty();
  std::filesystem::remove_all(dir);
  std::printf("%s: 3 steps, save, load in a fresh process, 4 steps %s 7 steps straight\n", same ? "PASS" : "FAIL",
              same ? "==" : "!=");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "check") return check(std::filesystem::canonical("/proc/self/exe").string());
  ResumeNet model;
  if (mode == "straight" && argc == 3) {
    nn::TrainStep step = build(model, 4);
    run(step, 0, 7);
    io::save_safetensors(argv[2], step.state_dict());
  } else if (mode == "first" && argc == 3) {
    nn::TrainStep step = build(model, 4);
    run(step, 0, 3);
    step.save(argv[2]);
  } else if (mode == "second" && argc == 4) {
    nn::TrainStep step = build(model, 12345);  // different initial values: load replaces them all
    step.load(argv[2]);
    run(step, 3, 7);
    io::save_safetensors(argv[3], step.state_dict());
  } else {
    std::fprintf(stderr, "usage: resume_main [straight OUT | first CKPT | second CKPT OUT]\n");
    return 2;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
