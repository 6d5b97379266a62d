// Example 16: a spiking network on Fashion-MNIST (SPANDA, mg::frontier::spanda).
//  Images are rate-coded into T = 25 Bernoulli spike trains (a fresh draw every batch);
//  784 -> H -> 10 leaky integrate-and-fire layers (snnTorch's Leaky, atan surrogate) are
//  trained by BPTT through ONE scan node with snnTorch's ce_rate_loss; the prediction is the
//  most active output neuron (rate decoding). Prints test accuracy, the spike rate (sparsity)
//  per layer, SynOps vs the dense network's MACs and an energy estimate (Horowitz ISSCC 2014
//  per-operation energies, stated with the numbers), and exits 1 when the accuracy is below
//  --min-accuracy or a counter is implausible.
//   16_spanda_neuromorphic_snn [--epochs N] [--batches N] [--batch B] [--hidden H] [--steps T] [--beta B]
//                              [--lr LR] [--test-samples N] [--min-accuracy PCT] [--seed S] [--data DIR]
//                              [--threads N] [--profile 1]
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <omp.h>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/main_guard.hpp"
#include "examples/progress.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"
#include "minigrad/runtime/glassbox/telemetry.hpp"

namespace {

using namespace mg;
namespace sp = mg::frontier::spanda;

auto make_net(std::int64_t hidden, double beta) {
  const sp::Leaky lif{.beta = beta, .threshold = 1.0, .surrogate = sp::Surrogate::atan()};
  return sp::SpikingSequential{sp::SpikingLinear(784, hidden, lif), sp::SpikingLinear(hidden, 10, lif)};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) try {
  examples::Args args(argc, argv, {{"epochs", "5"}, {"batches", "0"}, {"hidden", "256"}, {"steps", "25"}, {"batch", "128"},
                                   {"beta", "0.9"}, {"lr", "0.002"}, {"test-samples", "10000"},
                                   {"min-accuracy", "84"}, {"seed", "0"}, {"profile", "0"}, {"threads", "1"},
                                   {"data", "/usr/share/datasets/fashion-mnist"}});
  // One OpenMP thread by default: the loop body's small per-step kernels pay a barrier each,
  // which on a loaded shared machine costs far more than the work (measured: the forward
  // scan 12 ms with one thread, 667 ms with two, under load 8). --threads 0 keeps OpenMP's.
  if (args.integer("threads") > 0) omp_set_num_threads(static_cast<int>(args.integer("threads")));
  const int epochs = static_cast<int>(args.integer("epochs"));
  const std::int64_t max_batches = args.integer("batches"), T = args.integer("steps"),
                     batch = args.integer("batch");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  const double min_accuracy = std::stod(args.str("min-accuracy"));

  io::FashionMnist data = io::load_fashion_mnist(args.str("data"));  // pixels in [0, 1]: firing probabilities
  auto net = make_net(args.integer("hidden"), std::stod(args.str("beta")));

  // The training step: rate-coded spikes in, BPTT through one scan, Adam; one graph.
  Graph g;
  nn::bind(net, g, seed);
  Tensor xs = g.input("spikes", f32, {T, batch, 784});
  Tensor y = g.input("y", i64, {batch});
  sp::Recording rec = net(xs);
  Tensor loss = sp::ce_rate_loss(rec.spikes, y);
  io::BatchLoader loader(data.train_images, data.train_labels,
                         {.batch_size = batch, .shuffle = true, .drop_last = true, .seed = seed});
  const std::int64_t per_epoch = max_batches > 0 ? std::min(max_batches, loader.num_batches()) : loader.num_batches();
  // Adam with the learning rate annealed to 0 over the run (cosine).
  auto step = nn::compile_train(g, loss, net, nn::Adam{.lr = std::stod(args.str("lr"))},
                                {.schedule = nn::cosine_lr(per_epoch * epochs), .profile = args.integer("profile") != 0});
  std::printf("SNN 784-%lld-10, T = %lld, %lld parameters; the training step's graph has %zu nodes "
              "(one scan node, whatever T is)\n",
              static_cast<long long>(args.integer("hidden")), static_cast<long long>(T),
              static_cast<long long>(nn::count_parameters(net)), g.ir().size());

  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t draw = seed * 1000003;
  for (int e = 0; e < epochs; ++e) {
    const std::int64_t n = per_epoch;
    examples::Progress bar("epoch " + std::to_string(e + 1) + "/" + std::to_string(epochs), n, batch);
    double sum = 0;
    auto ep = loader.epoch(e);
    for (std::int64_t i = 0; i < n; ++i) {
      const io::Batch b = ep.batch(i);
      sum += step.run({{"spikes", sp::rate_encode(b.inputs, T, ++draw)}, {"y", b.targets}});
      bar.tick(sum / static_cast<double>(i + 1));
    }
    bar.done();
  }
  const double train_s = seconds_since(t0);
  if (args.integer("profile") != 0) std::printf("%s", rt::glassbox::telemetry_table(step.executable(), true, 25).c_str());

  // Evaluation: the trained weights, test images rate-coded with their own seed; the
  // prediction and the activity counters come from the same run.
  const std::int64_t eval_batch = 500;
  Graph ge;
  nn::bind(net, ge, seed);
  Tensor ex = ge.input("spikes", f32, {T, eval_batch, 784});
  sp::Recording er = net(ex);
  Tensor guess = argmax(sp::rate_decode(er.spikes), 1);
  auto predict = nn::compile_with_parameters(ge, {guess, er.layer_spikes, er.layer_synops}, net);
  sp::ActivityMeter meter(er.layers);
  const std::int64_t test_n = std::min<std::int64_t>(args.integer("test-samples"), data.test_images.shape()[0]);
  io::BatchLoader test(data.test_images, data.test_labels, {.batch_size = eval_batch, .shuffle = false, .drop_last = true});
  std::int64_t hits = 0, seen = 0;
  const auto t1 = std::chrono::steady_clock::now();
  for (const io::Batch& b : test.epoch(0)) {
    if (seen >= test_n) break;
    auto r = predict.run({{"spikes", sp::rate_encode(b.inputs, T, 7777 + static_cast<std::uint64_t>(seen))}});
    for (std::int64_t i = 0; i < eval_batch; ++i) hits += r[0].at(i) == b.targets.at(i);
    meter.add(r[1], r[2], eval_batch);
    seen += eval_batch;
  }
  const double acc = 100.0 * static_cast<double>(hits) / static_cast<double>(seen);
  const sp::ActivityReport report = meter.report();

  std::printf("test accuracy %.2f%% on %lld test images (T = %d, rate-coded; %d epochs, %.1f s training, "
              "%.1f s evaluation)\n",
              acc, static_cast<long long>(seen), static_cast<int>(T), epochs, train_s, seconds_since(t1));
  std::printf("%s", report.to_string().c_str());

  bool ok = true;
  if (acc < min_accuracy) {
    std::printf("FAIL: test accuracy %.2f%% is below %.2f%%\n", acc, min_accuracy);
    ok = false;
  }
  for (std::size_t l = 0; l < report.layers.size(); ++l) {
    const double r = report.spike_rate(l);
    if (!(r > 0 && r < 1)) {
      std::printf("FAIL: %s's spike rate %.4f is not in (0, 1)\n", report.layers[l].info.name.c_str(), r);
      ok = false;
    }
  }
  if (!(report.synops_per_sample() > 0)) {
    std::printf("FAIL: no synaptic operations counted\n");
    ok = false;
  }
  return ok ? 0 : 1;
}
MG_EXAMPLE_CATCH
