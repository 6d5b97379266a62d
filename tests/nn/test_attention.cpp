// Attention against PyTorch: nn::MultiheadAttention and nn::scaled_dot_product_attention
// outputs, attention weights, gradients (inputs and parameters) and grads of grads equal
// torch's in float64 to 1e-10. The goldens (tests/nn/data/attention_golden.safetensors)
// come from tests/nn/attention_golden.py; the parameters load from torch's state_dict as
// it saved them, so PyTorch's names and layouts are checked too.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg {
namespace {

const std::map<std::string, Array>& golden() {
  static const std::map<std::string, Array> t =
      io::load_safetensors(std::string(MG_SOURCE_ROOT) + "/tests/nn/data/attention_golden.safetensors").tensors;
  return t;
}

// name -> tensor for every golden key "<case>.<kind>.<name>".
std::map<std::string, Array> part(const std::string& c, const std::string& kind) {
  std::map<std::string, Array> out;
  std::string prefix = c + "." + kind + ".";
  for (const auto& [k, v] : golden())
    if (k.rfind(prefix, 0) == 0) out[k.substr(prefix.size())] = v;
  return out;
}

void expect_close(const Array& got, const Array& want, const std::string& what, double tol = 1e-10) {
  ASSERT_EQ(got.type(), want.type()) << what;
  double worst = 0;
  std::int64_t at = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    double err = std::abs(got.at(i) - want.at(i)) / std::max(1.0, std::abs(want.at(i)));
    if (!(err <= worst)) worst = err, at = i;  // NaN counts as worst
  }
  EXPECT_LE(worst, tol) << what << ": element " << at << " is " << got.at(at) << ", torch " << want.at(at);
}

struct MhaSetup {
  const char* name;
  std::int64_t embed, heads;
  nn::MultiheadAttentionOptions opts;
  bool self_attn = false, causal = false, average = true;
};

// Builds the case's graph, loads torch's state_dict and returns {feeds, outputs by name}.
struct Built {
  Graph g;
  std::vector<Feed> feeds;
  std::map<std::string, Tensor> wrt;  // inputs and parameters by torch's names
  Tensor loss, out, weights;
};

void build(Built& b, nn::MultiheadAttention& mha, const MhaSetup& s) {
  nn::bind(mha, b.g);
  auto params = part(s.name, "param");
  nn::load_parameters(nn::named_parameters(mha), params, {.strict = true}, s.name);
  for (auto& [n, p] : nn::named_parameters(mha)) {
    b.wrt[n] = p->tensor;
    b.feeds.emplace_back(n, p->value());
  }
  auto in = part(s.name, "in");
  std::map<std::string, Tensor> t;
  for (auto& [n, a] : in) {
    t[n] = b.g.input(n, a.dtype(), a.shape());
    b.feeds.emplace_back(n, a);
  }
  Tensor q = t["query"], k = s.self_attn ? q : t["key"], v = s.self_attn ? q : t["value"];
  b.wrt["query"] = q;
  if (!s.self_attn) b.wrt["key"] = k, b.wrt["value"] = v;
  auto [out, w] = mha(q, k, v,
                      {.key_padding_mask = t.count("key_padding_mask") ? t["key_padding_mask"] : Tensor(),
                       .attn_mask = t.count("attn_mask") ? t["attn_mask"] : Tensor(),
                       .average_attn_weights = s.average,
                       .is_causal = s.causal});
  b.out = out, b.weights = w;
  b.loss = (out * t["r_out"]).sum() + (w * t["r_w"]).sum();
}

const MhaSetup kCases[] = {
    {"self_bf", 8, 2, {.batch_first = true, .dtype = f64}, true},
    {"cross_kdim", 8, 4, {.kdim = 6, .vdim = 5, .dtype = f64}, false, false, false},
    {"packed_bool", 8, 2, {.batch_first = true, .dtype = f64}},
    {"causal", 8, 2, {.dtype = f64}, true, true},
    {"unbatched_nobias", 8, 2, {.bias = false, .dtype = f64}, false, false, false},
};

class MhaTorch : public ::testing::TestWithParam<MhaSetup> {};

TEST_P(MhaTorch, OutputsWeightsAndGradientsMatchTorch) {
  const MhaSetup& s = GetParam();
  nn::MultiheadAttention mha(s.embed, s.heads, s.opts);
  Built b;
  build(b, mha, s);
  auto want_grads = part(s.name, "grad");
  std::vector<Tensor> outs{b.out, b.weights};
  std::vector<Tensor> wrt;
  for (auto& [n, _] : want_grads) {
    ASSERT_TRUE(b.wrt.count(n)) << "torch differentiated '" << n << "', which the module does not have";
    wrt.push_back(b.wrt[n]);
  }
  for (Tensor& gr : grad(b.loss, wrt)) outs.push_back(gr);
  auto got = compile(b.g, outs).run(b.feeds);
  auto want_out = part(s.name, "out");
  expect_close(got[0], want_out["output"], std::string(s.name) + " output");
  expect_close(got[1], want_out["weights"], std::string(s.name) + " weights");
  std::size_t i = 2;
  for (auto& [n, want] : want_grads) expect_close(got[i++], want, std::string(s.name) + " grad " + n);
}

INSTANTIATE_TEST_SUITE_P(Attention, MhaTorch, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// A grad of grad through attention: d/dθ of |dloss/dquery|^2, as torch computes it with
// create_graph=True (its fused SDPA kernels have no double backward: pytorch#116350).
TEST(Attention, GradOfGradMatchesTorch) {
  for (const MhaSetup& s : {kCases[0], kCases[2]}) {
    nn::MultiheadAttention mha(s.embed, s.heads, s.opts);
    Built b;
    build(b, mha, s);
    auto want = part(s.name, "gg");
    ASSERT_FALSE(want.empty());
    Tensor gq = grad(b.loss, {b.wrt["query"]})[0];
    Tensor loss2 = (gq * gq).sum();
    std::vector<Tensor> wrt;
    for (auto& [n, _] : want) wrt.push_back(b.wrt.at(n));
    auto got = compile(b.g, grad(loss2, wrt)).run(b.feeds);
    std::size_t i = 0;
    for (auto& [n, w] : want) expect_close(got[i++], w, std::string(s.name) + " grad of grad " + n);
  }
}

// The same graph through the C99 backend (JIT) computes what the interpreter computes.
TEST(Attention, C99MatchesInterpreter) {
  nn::MultiheadAttention mha(8, 4, {.kdim = 6, .vdim = 5, .dtype = f64});
  Built b;
  build(b, mha, kCases[1]);
  std::vector<Tensor> outs{b.out, b.weights, grad(b.loss, {b.wrt["query"], b.wrt["k_proj_weight"]})[1]};
  auto interp = compile(b.g, outs).run(b.feeds);
  auto c99 = compile(b.g, outs, Backend::c99).run(b.feeds);
  for (std::size_t i = 0; i < outs.size(); ++i) expect_close(c99[i], interp[i], "c99 output " + std::to_string(i), 1e-12);
}

TEST(Attention, ScaledDotProductAttentionMatchesTorch) {
  for (const char* c : {"sdpa_bool", "sdpa_causal_float"}) {
    auto in = part(c, "in");
    Graph g;
    std::map<std::string, Tensor> t;
    std::vector<Feed> feeds;
    for (auto& [n, a] : in) {
      t[n] = g.input(n, a.dtype(), a.shape());
      feeds.emplace_back(n, a);
    }
    bool causal = std::string(c) == "sdpa_causal_float";
    nn::AttentionOptions o{.attn_mask = t["attn_mask"], .is_causal = causal};
    if (!causal) o.scale = 0.3;
    auto [out, w] = nn::attention_with_weights(t["query"], t["key"], t["value"], o);
    Tensor loss = (out * t["r_out"]).sum() + (w * t["r_w"]).sum();
    std::vector<Tensor> outs{out, w};
    for (Tensor& gr : grad(loss, {t["query"], t["key"], t["value"]})) outs.push_back(gr);
    auto got = compile(g, outs).run(feeds);
    auto want = part(c, "out");
    auto want_g = part(c, "grad");
    expect_close(got[0], want["output"], std::string(c) + " output");
    expect_close(got[1], want["weights"], std::string(c) + " weights");
    expect_close(got[2], want_g["query"], std::string(c) + " grad query");
    expect_close(got[3], want_g["key"], std::string(c) + " grad key");
    expect_close(got[4], want_g["value"], std::string(c) + " grad value");
  }
}

// Dropout on the attention weights: in training each weight is dropped (0) or scaled by
// 1/(1-p); in eval the module is deterministic and equals the no-dropout result.
TEST(Attention, DropoutDropsOrScalesWeightsInTrainingOnly) {
  nn::MultiheadAttention mha(8, 2, {.dropout = 0.5, .batch_first = true, .dtype = f64});
  Graph g;
  nn::bind(mha, g, 3);
  Tensor x = g.input("x", f64, {2, 5, 8});
  auto [out_t, w_t] = mha(x, x, x, {.average_attn_weights = false});
  nn::eval(mha);
  auto [out_e, w_e] = mha(x, x, x, {.average_attn_weights = false});
  Array X = Array::from_vector<double>({2, 5, 8}, [] {
    std::vector<double> v(80);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i));
    return v;
  }());
  auto exe = nn::compile_with_parameters(g, {w_t, w_e}, mha);
  auto r = exe.run({{"x", X}});
  int dropped = 0, kept = 0;
  for (std::int64_t i = 0; i < r[0].numel(); ++i) {
    if (r[0].at(i) == 0) ++dropped;
    else {
      ++kept;
      EXPECT_NEAR(r[0].at(i), 2 * r[1].at(i), 1e-15);
    }
  }
  EXPECT_GT(dropped, 20);
  EXPECT_GT(kept, 20);
  EXPECT_EQ(nn::named_parameters(mha).back().first, "attn_dropout.counter");
}

// Decoding with a KV cache, one position at a time, gives what the whole causal forward
// pass gives at that position.
TEST(Attention, DecodeStepWithKvCacheEqualsFullCausalForward) {
  const std::int64_t L = 5, C = 6, E = 8, H = 2, D = E / H;
  nn::MultiheadAttention mha(E, H, {.batch_first = true, .dtype = f64});
  Graph g;
  nn::bind(mha, g, 7);
  Tensor x = g.input("x", f64, {1, L, E});
  Tensor full = mha(x, x, x, {.need_weights = false, .is_causal = true}).output;
  Array X = Array::zeros(Type{f64, {1, L, E}});
  for (std::int64_t i = 0; i < X.numel(); ++i) X.set(i, std::cos(1.3 * static_cast<double>(i)));
  Array F = nn::compile_with_parameters(g, {full}, mha).run({{"x", X}})[0];

  Graph d;
  nn::bind(mha, d);
  Tensor xt = d.input("x", f64, {1, 1, E}), kc = d.input("k", f64, {1, H, C, D}), vc = d.input("v", f64, {1, H, C, D});
  auto s = mha.decode_step(xt, kc, vc, d.input("bias", f64, {C}));
  auto exe = nn::compile_with_parameters(d, {s.output, s.k, s.v}, mha);
  Array K = Array::zeros(Type{f64, {1, H, C, D}}), V = K.clone(), B = Array::full(Type{f64, {C}}, -INFINITY);
  Array Xt = Array::zeros(Type{f64, {1, 1, E}});
  for (std::int64_t t = 0; t < L; ++t) {
    for (std::int64_t e = 0; e < E; ++e) Xt.set(e, X.at(t * E + e));
    auto r = exe.run({{"x", Xt}, {"k", K}, {"v", V}, {"bias", B}});
    for (std::int64_t e = 0; e < E; ++e) EXPECT_NEAR(r[0].at(e), F.at(t * E + e), 1e-12) << "position " << t;
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t j = 0; j < D; ++j) {
        K.set((h * C + t) * D + j, r[1].at(h * D + j));
        V.set((h * C + t) * D + j, r[2].at(h * D + j));
      }
    B.set(t, 0.0);
  }
}

TEST(Attention, ShapeErrorsNameTheModuleAndTheUsersLine) {
  nn::MultiheadAttention mha(8, 2, {.dtype = f64});
  Graph g;
  nn::bind(mha, g);
  Tensor q = g.input("q", f64, {5, 2, 8}), k = g.input("k", f64, {4, 2, 7});
  try {
    mha(q, k, k);
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("MultiheadAttention"), std::string::npos) << m;
    EXPECT_NE(m.find("key must have 8 features"), std::string::npos) << m;
    EXPECT_NE(m.find("test_attention.cpp"), std::string::npos) << m;
  }
  EXPECT_THROW(nn::MultiheadAttention(10, 3), UserError);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {
struct TinyBlock {
  nn::LayerNorm ln_1{{4}, 1e-5, true, f64};
  nn::Dropout drop{0.1};
};
}  // namespace
}  // namespace mg
BOOST_HANA_ADAPT_STRUCT(mg::TinyBlock, ln_1, drop);
namespace mg {
namespace {
TEST(ModuleList, NamesByIndexAndSwitchesModes) {
  nn::ModuleList<TinyBlock> h(std::vector<TinyBlock>(2));
  std::vector<std::string> names;
  nn::for_each_parameter(h, [&](const std::string& n, nn::Parameter&) { names.push_back(n); });
  EXPECT_EQ(names, (std::vector<std::string>{"0.ln_1.weight", "0.ln_1.bias", "0.drop.counter", "1.ln_1.weight",
                                             "1.ln_1.bias", "1.drop.counter"}));
  nn::eval(h);
  EXPECT_FALSE(h[0].drop.training);
  EXPECT_FALSE(h[1].drop.training);
}
}  // namespace
}  // namespace mg
