// Creation ops (no inputs: full, arange, eye, random_normal, random_uniform) and cast.
// Random ops are reproducible everywhere: bits come from std::mt19937_64 (fully specified
// by the standard), one engine per fixed-size chunk seeded from (seed, chunk), converted by
// our own formulas (no std::*_distribution, whose algorithms are implementation-defined),
// so values depend on the seed only, never on the thread count. Conversions to i64 or bool
// are total: no NaN or out-of-range cast reaches undefined behaviour.
#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <random>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

constexpr std::int64_t kParallelMin = 1 << 18;
constexpr std::int64_t kRandomChunk = 1 << 16;  // even: Box-Muller pairs never straddle chunks
constexpr double kTwoPi = 6.28318530717958647692;

// Converts one scalar with the IR's cast semantics: to bool is x != 0; float to i64
// truncates toward zero, saturates beyond the i64 range and maps NaN to 0.
template <class D, class S>
inline D convert(S s) {
  if constexpr (std::is_same_v<D, std::uint8_t>) {
    return s != S{0};
  } else if constexpr (std::is_same_v<D, std::int64_t> && std::is_floating_point_v<S>) {
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    if (std::isnan(s)) return 0;
    if (static_cast<double>(s) >= kLimit) return std::numeric_limits<std::int64_t>::max();
    if (static_cast<double>(s) < -kLimit) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(s);
  } else {
    return static_cast<D>(s);
  }
}

// out[i] = f(i) for every element, parallel when large.
template <class T, class F>
void fill_with(Array& out, F f) {
  T* p = out.data<T>();
  const std::int64_t n = out.numel();
  if (n >= kParallelMin) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
  } else {  // no OpenMP call: fused nodes run casts per tile
    for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
  }
}

void require_shape(const Shape& s) {
  for (auto d : s) require(d >= 0, "expects non-negative dimensions, got " + to_string(s));
}

std::vector<Value> no_inputs(const VjpArgs&) { return {}; }

OpDef& def_creation(const char* name, const char* doc, std::vector<AttrSpec> attrs, InferFn infer,
                    KernelFn kernel) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = 0;
  d.attrs = std::move(attrs);
  d.infer = std::move(infer);
  d.kernel = std::move(kernel);
  d.vjp = no_inputs;
  d.not_differentiable = "no inputs";
  d.test.grad_order = 0;
  return d;
}

// ---- random --------------------------------------------------------------------------

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Calls draw(engine, i0, i1) for each chunk [i0, i1) of n elements with that chunk's engine.
template <class F>
void for_random_chunks(std::int64_t n, std::int64_t seed, F draw) {
  const std::int64_t chunks = (n + kRandomChunk - 1) / kRandomChunk;
  const std::uint64_t s = splitmix64(static_cast<std::uint64_t>(seed));
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    std::mt19937_64 engine(s ^ splitmix64(static_cast<std::uint64_t>(c)));
    draw(engine, c * kRandomChunk, std::min(n, (c + 1) * kRandomChunk));
  }
}

inline double unit_open_closed(std::uint64_t bits) {  // (0, 1]
  return (static_cast<double>(bits >> 11) + 1.0) * 0x1p-53;
}
inline double unit_closed_open(std::uint64_t bits) {  // [0, 1)
  return static_cast<double>(bits >> 11) * 0x1p-53;
}

Type random_infer(std::span<const Type>, const Attrs& attrs) {
  require(is_float(attrs.dtype("dtype")), "expects a float dtype (f32 or f64)");
  require_shape(attrs.list("shape"));
  return Type{attrs.dtype("dtype"), attrs.list("shape")};
}

// Counter-keyed draws (dropout_mask, random_normal_step): element r of the i64 counter keys
// row r of the output (out.numel() / counter.numel() elements; one row for an i64[]
// counter) with the stream seed ^ splitmix64(counter[r]). So a counter per example (vmap)
// stacks exactly the per-example draws.
template <class Row>
void for_counter_rows(const KernelArgs& k, Row row) {
  const std::int64_t rows = k.in[0]->numel();
  if (rows == 0) return;
  const std::int64_t n = k.out.numel() / rows;
  const std::int64_t* c = k.in[0]->data<std::int64_t>();
  const auto seed = static_cast<std::uint64_t>(k.node.attrs.i64("seed"));
  for (std::int64_t r = 0; r < rows; ++r)
    row(static_cast<std::int64_t>(seed ^ splitmix64(static_cast<std::uint64_t>(c[r]))), r * n, n);
}

// The type rule of the counter-keyed ops: the counter's shape leads `shape`.
Type counter_infer(std::span<const Type> in, const Attrs& attrs) {
  const I64List& shape = attrs.list("shape");
  require(in[0].dtype == DType::i64 && in[0].rank() <= static_cast<int>(shape.size()) &&
              std::equal(in[0].shape.begin(), in[0].shape.end(), shape.begin()),
          "expects an i64 counter whose shape leads `shape` (i64[] for one draw)");
  require(is_float(attrs.dtype("dtype")), "expects a float dtype");
  for (auto d : shape) require(d >= 0, "expects non-negative dimensions");
  return Type{attrs.dtype("dtype"), shape};
}

// N(mean, std^2) into out[offset, offset + n) from the stream `seed`.
void normal_fill(const KernelArgs& k, std::int64_t seed, std::int64_t offset, std::int64_t n) {
  const double mean = k.node.attrs.f64("mean"), stddev = k.node.attrs.f64("std");
  visit_dtype(k.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      T* out = k.out.data<T>() + offset;
      for_random_chunks(n, seed,
                        [&](std::mt19937_64& e, std::int64_t i0, std::int64_t i1) {
                          for (std::int64_t i = i0; i < i1; i += 2) {  // Box-Muller, one pair
                            const double r = std::sqrt(-2.0 * std::log(unit_open_closed(e())));
                            const double t = kTwoPi * unit_closed_open(e());
                            out[i] = static_cast<T>(mean + stddev * r * std::cos(t));
                            if (i + 1 < i1) out[i + 1] = static_cast<T>(mean + stddev * r * std::sin(t));
                          }
                        });
    }
  });
}

void random_normal_kernel(const KernelArgs& k) { normal_fill(k, k.node.attrs.i64("seed"), 0, k.out.numel()); }
void random_normal_step_kernel(const KernelArgs& k) {
  for_counter_rows(k, [&](std::int64_t seed, std::int64_t offset, std::int64_t n) { normal_fill(k, seed, offset, n); });
}

void random_uniform_kernel(const KernelArgs& k) {
  const double low = k.node.attrs.f64("low"), high = k.node.attrs.f64("high");
  visit_dtype(k.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      T* out = k.out.data<T>();
      const T top = static_cast<T>(high), below_top = std::nextafter(top, static_cast<T>(low));
      for_random_chunks(k.out.numel(), k.node.attrs.i64("seed"),
                        [&](std::mt19937_64& e, std::int64_t i0, std::int64_t i1) {
                          for (std::int64_t i = i0; i < i1; ++i) {
                            T v = static_cast<T>(low + (high - low) * unit_closed_open(e()));
                            out[i] = (v >= top && high > low) ? below_top : v;  // keep [low, high)
                          }
                        });
    }
  });
}

// Inverted-dropout mask: keep with probability 1 - p, scaled by 1/(1 - p); the stream is
// keyed by (seed, counter) so a step counter input gives a fresh mask every step.
void dropout_mask_kernel(const KernelArgs& k) {
  const double p = k.node.attrs.f64("p");
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  visit_dtype(k.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      for_counter_rows(k, [&](std::int64_t seed, std::int64_t offset, std::int64_t n) {
        T* out = k.out.data<T>() + offset;
        for_random_chunks(n, seed, [&](std::mt19937_64& e, std::int64_t i0, std::int64_t i1) {
          for (std::int64_t i = i0; i < i1; ++i) out[i] = static_cast<T>(unit_closed_open(e()) >= p ? scale : 0.0);
        });
      });
    }
  });
}

// ---- cast ----------------------------------------------------------------------------

void cast_kernel(const KernelArgs& k) {
  const Array& x = *k.in[0];
  if (x.dtype() == k.out.dtype()) {
    if (x.nbytes()) std::memcpy(k.out.raw(), x.raw(), x.nbytes());
    return;
  }
  visit_dtype(x.dtype(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    visit_dtype(k.out.dtype(), [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* s = x.data<S>();
      fill_with<D>(k.out, [s](std::int64_t i) { return convert<D>(s[i]); });
    });
  });
}

// A window of a cast in a fused body: the kernel's conversion over raw spans.
bool cast_span(const SpanArgs& a) {
  if (a.in_dtype == a.out_dtype) {  // as cast_kernel: the bytes as they are
    std::memcpy(a.out, a.in[0], static_cast<std::size_t>(a.n) * size_of(a.out_dtype));
    return true;
  }
  visit_dtype(a.in_dtype, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    visit_dtype(a.out_dtype, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* __restrict s = static_cast<const S*>(a.in[0]);
      D* __restrict d = static_cast<D*>(a.out);
      for (std::int64_t i = 0; i < a.n; ++i) d[i] = convert<D>(s[i]);
    });
  });
  return true;
}

// ---- C99 emission ----------------------------------------------------------------------

// mt19937_64 and splitmix64 in C: the same engine as std::mt19937_64 (fully specified by
// the C++ standard), so the C code draws the interpreter's bits.
constexpr const char* kCRandom = R"(typedef struct { uint64_t mt[312]; int i; } mg_mt64;
static void mg_mt64_seed(mg_mt64* e, uint64_t seed) {
  int i;
  e->mt[0] = seed;
  for (i = 1; i < 312; ++i) e->mt[i] = UINT64_C(6364136223846793005) * (e->mt[i - 1] ^ (e->mt[i - 1] >> 62)) + (uint64_t)i;
  e->i = 312;
}
static uint64_t mg_mt64_next(mg_mt64* e) {
  const uint64_t um = UINT64_C(0xFFFFFFFF80000000), lm = UINT64_C(0x7FFFFFFF), a = UINT64_C(0xB5026F5AA96619E9);
  uint64_t x;
  int i;
  if (e->i >= 312) {
    for (i = 0; i < 312; ++i) {
      x = (e->mt[i] & um) | (e->mt[(i + 1) % 312] & lm);
      e->mt[i] = e->mt[(i + 156) % 312] ^ (x >> 1) ^ ((x & 1) ? a : 0);
    }
    e->i = 0;
  }
  x = e->mt[e->i++];
  x ^= (x >> 29) & UINT64_C(0x5555555555555555);
  x ^= (x << 17) & UINT64_C(0x71D67FFFEDA60000);
  x ^= (x << 37) & UINT64_C(0xFFF7EEE000000000);
  return x ^ (x >> 43);
}
static uint64_t mg_splitmix64(uint64_t x) {
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}
static double mg_unit_oc(uint64_t b) { return ((double)(b >> 11) + 1.0) * (1.0 / 9007199254740992.0); }
static double mg_unit_co(uint64_t b) { return (double)(b >> 11) * (1.0 / 9007199254740992.0); }
)";

// The chunk loop of for_random_chunks; `seed` a C expression of the int64 seed, `draw`
// the body over [i0, i1) with engine `e`.
void c_random_chunks(const CLoopArgs& a, const std::string& seed, const std::string& draw, std::int64_t n = -1) {
  if (n < 0) n = a.node.type.numel();
  const std::int64_t chunks = (n + kRandomChunk - 1) / kRandomChunk;
  if (n == 0) return;
  a.support("mg_random", kCRandom);
  a.w.open("");
  a.w.line("const uint64_t s = mg_splitmix64((uint64_t)(" + seed + "));");
  if (chunks > 1) a.w.line("MG_OMP(omp parallel for schedule(static))");
  a.w.open("for (int64_t c = 0; c < " + std::to_string(chunks) + "; ++c)");
  a.w.line("mg_mt64 e;");
  a.w.line("const int64_t i0 = c * " + std::to_string(kRandomChunk) + ", i1 = (c + 1) * " +
           std::to_string(kRandomChunk) + " < " + std::to_string(n) + " ? (c + 1) * " +
           std::to_string(kRandomChunk) + " : " + std::to_string(n) + ";");
  a.w.line("mg_mt64_seed(&e, s ^ mg_splitmix64((uint64_t)c));");
  a.w.raw(draw);
  a.w.close();
  a.w.close();
}

// for_counter_rows in C: one chunk loop per counter element `row`, over that row of the output;
// `draw(out)` is the chunk body writing through the row pointer expression `out`.
void c_counter_rows(const CLoopArgs& a, const std::function<std::string(const std::string&)>& draw) {
  const std::int64_t rows = a.in_types[0].numel();
  if (rows == 0) return;
  const std::int64_t n = a.node.type.numel() / rows;
  a.w.open("for (int64_t row = 0; row < " + std::to_string(rows) + "; ++row)");
  c_random_chunks(a, "(int64_t)((uint64_t)" + c_int(a.node.attrs.i64("seed")) + " ^ mg_splitmix64((uint64_t)" + a.in[0] + "[row]))",
                  draw("(" + a.out + " + row * " + std::to_string(n) + ")"), n);
  a.w.close();
}

// random_normal, or with `counter` random_normal_step (its counter keys the rows' streams).
EmitC c_random_normal(bool counter = false) {
  return c_loops([counter](const CLoopArgs& a) {
    const DType t = a.node.type.dtype;
    const std::string T = c_type(t);
    const std::string mean = c_lit(a.node.attrs.f64("mean"), f64), sd = c_lit(a.node.attrs.f64("std"), f64);
    auto draw = [&](const std::string& o) {
      return "    for (int64_t i = i0; i < i1; i += 2) {\n"
             "      const double r = sqrt(-2.0 * log(mg_unit_oc(mg_mt64_next(&e))));\n"
             "      const double t = 6.28318530717958647692 * mg_unit_co(mg_mt64_next(&e));\n"
             "      " + o + "[i] = (" + T + ")(" + mean + " + " + sd + " * r * cos(t));\n"
             "      if (i + 1 < i1) " + o + "[i + 1] = (" + T + ")(" + mean + " + " + sd + " * r * sin(t));\n"
             "    }\n";
    };
    if (counter) c_counter_rows(a, draw);
    else c_random_chunks(a, c_int(a.node.attrs.i64("seed")), draw(a.out));
  });
}

EmitC c_random_uniform() {
  return c_loops([](const CLoopArgs& a) {
    const DType t = a.node.type.dtype;
    const std::string T = c_type(t), o = a.out;
    const double lo = a.node.attrs.f64("low"), hi = a.node.attrs.f64("high");
    const std::string top = c_lit(hi, t), below = c_math("nextafter", t) + "(" + top + ", " + c_lit(lo, t) + ")";
    c_random_chunks(a, c_int(a.node.attrs.i64("seed")),
                    "    for (int64_t i = i0; i < i1; ++i) {\n"
                    "      const " + T + " v = (" + T + ")(" + c_lit(lo, f64) + " + " + c_lit(hi - lo, f64) +
                    " * mg_unit_co(mg_mt64_next(&e)));\n"
                    "      " + o + "[i] = (v >= " + top + " && " + (hi > lo ? "1" : "0") + ") ? " + below + " : v;\n"
                    "    }\n");
  });
}

EmitC c_dropout_mask() {
  return c_loops([](const CLoopArgs& a) {
    const double p = a.node.attrs.f64("p");
    const std::string T = c_type(a.node.type.dtype);
    c_counter_rows(a, [&](const std::string& o) {
      return "    for (int64_t i = i0; i < i1; ++i) " + o + "[i] = (" + T + ")(mg_unit_co(mg_mt64_next(&e)) >= " +
             c_lit(p, f64) + " ? " + c_lit(p < 1 ? 1.0 / (1.0 - p) : 0.0, f64) + " : 0.0);\n";
    });
  });
}

// The IR's cast as a C expression (mg_f2i64 is the emitter's saturating conversion).
std::string c_convert(DType to, DType from, const std::string& x) {
  if (to == from) return x;
  if (to == DType::boolean) return "(" + x + ") != 0";
  if (to == DType::i64 && is_float(from)) return "mg_f2i64((double)(" + x + "))";
  // A select, not an integer conversion: GCC vectorises it (a relu mask's loop was scalar)
  if (from == DType::boolean && is_float(to)) return "((" + x + ") ? " + c_lit(1, to) + " : " + c_lit(0, to) + ")";
  return "(" + c_type(to) + ")(" + x + ")";
}

}  // namespace

void register_creation_ops() {
  OpDef& full_op = def_creation(
      "full", "a tensor of `shape` and `dtype` filled with `value` (bool: value != 0; i64: truncated)",
      {{"shape", AttrKind::i64_list, std::nullopt},
       {"dtype", AttrKind::dtype, AttrValue{DType::f32}},
       {"value", AttrKind::f64, AttrValue{0.0}}},
      [](std::span<const Type>, const Attrs& attrs) {
        require_shape(attrs.list("shape"));
        return Type{attrs.dtype("dtype"), attrs.list("shape")};
      },
      [](const KernelArgs& k) {
        const double value = k.node.attrs.f64("value");
        visit_dtype(k.out.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T v = convert<T>(value);
          fill_with<T>(k.out, [v](std::int64_t) { return v; });
        });
      });
  defined_op("full").emit_c = c_expr([](const CExprArgs& a) { return c_lit(a.node.attrs.f64("value"), a.dtype); });
  full_op.test.cases = {
      {{}, {{"shape", I64List{2, 3}}, {"dtype", f64}, {"value", 1.5}}},
      {{}, {{"shape", I64List{}}, {"dtype", f64}, {"value", -2.0}}},
  };

  OpDef& arange_op = def_creation(
      "arange", "[n] with out[i] = start + i*step computed in f64, then converted to `dtype`",
      {{"start", AttrKind::f64, AttrValue{0.0}},
       {"step", AttrKind::f64, AttrValue{1.0}},
       {"n", AttrKind::i64, std::nullopt},
       {"dtype", AttrKind::dtype, AttrValue{DType::f32}}},
      [](std::span<const Type>, const Attrs& attrs) {
        require(attrs.i64("n") >= 0, "expects n >= 0");
        require(allowed(attrs.dtype("dtype"), Dtypes::numeric), "expects " + describe(Dtypes::numeric));
        return Type{attrs.dtype("dtype"), {attrs.i64("n")}};
      },
      [](const KernelArgs& k) {
        const double start = k.node.attrs.f64("start"), step = k.node.attrs.f64("step");
        visit_dtype(k.out.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          fill_with<T>(k.out, [=](std::int64_t i) {
            return convert<T>(start + static_cast<double>(i) * step);
          });
        });
      });
  defined_op("arange").emit_c = c_expr([](const CExprArgs& a) {
    const std::string v = "(" + c_lit(a.node.attrs.f64("start"), f64) + " + (double)" + a.i + " * " +
                          c_lit(a.node.attrs.f64("step"), f64) + ")";
    return c_convert(a.dtype, f64, v);
  });
  arange_op.test.cases = {
      {{}, {{"start", 1.0}, {"step", 0.5}, {"n", 5}, {"dtype", f64}}},
      {{}, {{"start", 0.0}, {"step", 1.0}, {"n", 0}, {"dtype", f64}}},
  };

  OpDef& eye_op = def_creation(
      "eye", "n x m identity: 1 where row == column, else 0 (any dtype)",
      {{"n", AttrKind::i64, std::nullopt},
       {"m", AttrKind::i64, std::nullopt},
       {"dtype", AttrKind::dtype, AttrValue{DType::f32}}},
      [](std::span<const Type>, const Attrs& attrs) {
        require(attrs.i64("n") >= 0 && attrs.i64("m") >= 0, "expects n, m >= 0");
        return Type{attrs.dtype("dtype"), {attrs.i64("n"), attrs.i64("m")}};
      },
      [](const KernelArgs& k) {
        const std::int64_t m = k.out.shape()[1];
        visit_dtype(k.out.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          fill_with<T>(k.out, [m](std::int64_t i) { return T(i / m == i % m); });
        });
      });
  defined_op("eye").emit_c = c_expr([](const CExprArgs& a) {
    const std::string m = std::to_string(a.node.type.shape[1]);
    return "(" + c_type(a.dtype) + ")(" + a.i + " / " + m + " == " + a.i + " % " + m + ")";
  });
  eye_op.test.cases = {
      {{}, {{"n", 3}, {"m", 3}, {"dtype", f64}}},
      {{}, {{"n", 2}, {"m", 4}, {"dtype", f64}}},
  };

  OpDef& normal = def_creation(
      "random_normal",
      "`shape` samples of N(mean, std^2) in a float dtype; the same seed gives the same values "
      "on every run, thread count and platform (mt19937_64 + Box-Muller)",
      {{"shape", AttrKind::i64_list, std::nullopt},
       {"dtype", AttrKind::dtype, AttrValue{DType::f32}},
       {"seed", AttrKind::i64, std::nullopt},
       {"mean", AttrKind::f64, AttrValue{0.0}},
       {"std", AttrKind::f64, AttrValue{1.0}}},
      random_infer, random_normal_kernel);
  defined_op("random_normal").emit_c = c_random_normal();
  normal.traits.random = true;
  normal.test.cases = {
      {{}, {{"shape", I64List{3, 4}}, {"dtype", f64}, {"seed", 7}}},
      {{}, {{"shape", I64List{}}, {"dtype", f64}, {"seed", 1}, {"mean", 2.0}, {"std", 0.5}}},
  };

  // The seeded counter-based generator: a fresh draw per step (the counter), the same
  // draws for the same (seed, counter) on every run, thread count, platform and backend.
  OpDef& nstep = define_op("random_normal_step");
  nstep.doc =
      "`shape` samples of N(mean, std^2) keyed by `seed` and the i64 input (a step counter): as "
      "random_normal, with the stream seed ^ splitmix64(counter), so each step draws afresh; a counter "
      "of shape [n, ...] (leading `shape`) keys each row with its own element";
  nstep.arity = 1;
  nstep.attrs = normal.attrs;
  nstep.infer = counter_infer;
  nstep.kernel = random_normal_step_kernel;
  nstep.emit_c = c_random_normal(true);
  nstep.traits.random = true;
  nstep.not_differentiable = "integer input (a counter)";
  nstep.test.grad_order = 0;
  nstep.test.cases = {{{Type{DType::i64, {}}}, {{"shape", I64List{3, 5}}, {"dtype", f64}, {"seed", 4}}},
                      {{Type{DType::i64, {3}}}, {{"shape", I64List{3, 5}}, {"dtype", f64}, {"seed", 4}}}};
  nstep.test.make_input = [](std::size_t, const Type& t, std::uint64_t seed) {
    Array a(t);  // distinct counters, so rows must differ
    for (std::int64_t j = 0; j < a.numel(); ++j) a.set(j, static_cast<double>((seed + 3 * j) % 11));
    return a;
  };

  OpDef& uniform = def_creation(
      "random_uniform",
      "`shape` samples uniform in [low, high) in a float dtype; the same seed gives the same "
      "values on every run, thread count and platform (mt19937_64, 53-bit mantissa)",
      {{"shape", AttrKind::i64_list, std::nullopt},
       {"dtype", AttrKind::dtype, AttrValue{DType::f32}},
       {"seed", AttrKind::i64, std::nullopt},
       {"low", AttrKind::f64, AttrValue{0.0}},
       {"high", AttrKind::f64, AttrValue{1.0}}},
      random_infer, random_uniform_kernel);
  defined_op("random_uniform").emit_c = c_random_uniform();
  uniform.traits.random = true;
  uniform.test.cases = {
      {{}, {{"shape", I64List{3, 4}}, {"dtype", f64}, {"seed", 7}}},
      {{}, {{"shape", I64List{5}}, {"dtype", f64}, {"seed", 2}, {"low", -1.0}, {"high", 3.0}}},
  };

  OpDef& drop = define_op("dropout_mask");
  drop.doc =
      "inverted-dropout mask of `shape`: 1/(1-p) with probability 1-p, else 0; the i64[] input "
      "(a step counter) and `seed` key the random stream, so each step draws a fresh mask; a counter "
      "of shape [n, ...] (leading `shape`) keys each row with its own element";
  drop.arity = 1;
  drop.attrs = {{"shape", AttrKind::i64_list, std::nullopt},
                {"dtype", AttrKind::dtype, AttrValue{DType::f32}},
                {"seed", AttrKind::i64, std::nullopt},
                {"p", AttrKind::f64, AttrValue{0.5}}};
  drop.infer = [](std::span<const Type> in, const Attrs& attrs) {
    const double p = attrs.f64("p");
    require(p >= 0 && p < 1, "expects 0 <= p < 1");
    return counter_infer(in, attrs);
  };
  drop.kernel = dropout_mask_kernel;
  defined_op("dropout_mask").emit_c = c_dropout_mask();
  drop.traits.random = true;
  drop.not_differentiable = "integer input (a counter)";
  drop.test.grad_order = 0;
  drop.test.cases = {{{Type{DType::i64, {}}}, {{"shape", I64List{4, 5}}, {"dtype", f64}, {"seed", 3}, {"p", 0.25}}},
                     {{Type{DType::i64, {4}}}, {{"shape", I64List{4, 5}}, {"dtype", f64}, {"seed", 3}, {"p", 0.25}}}};
  drop.test.make_input = [](std::size_t, const Type& t, std::uint64_t seed) {
    Array a(t);  // distinct counters, so rows must differ
    for (std::int64_t j = 0; j < a.numel(); ++j) a.set(j, static_cast<double>((seed + 3 * j) % 11));
    return a;
  };

  OpDef& cast_op = define_op("cast");
  cast_op.doc =
      "convert to `dtype`: to bool is x != 0; float to i64 truncates toward zero (saturating, "
      "NaN -> 0); bool to numbers is 0/1; gradient only float -> float";
  cast_op.attrs = {{"dtype", AttrKind::dtype, std::nullopt}};
  cast_op.traits.elementwise = true;  // fuses: the relu mask gt -> cast -> mul is one loop
  // No Z3 column: the checker works in one value sort at a time and a cast changes it, so
  // rules over casts are structural (shape rules plus a numeric check).
  cast_op.infer = [](std::span<const Type> in, const Attrs& attrs) {
    return Type{attrs.dtype("dtype"), in[0].shape};
  };
  cast_op.kernel = cast_kernel;
  cast_op.span_kernel = cast_span;
  defined_op("cast").emit_c = c_expr([](const CExprArgs& a) { return c_convert(a.dtype, a.in_dtypes[0], a.in[0]); });
  cast_op.vjp = [](const VjpArgs& a) {
    DType from = a.in[0].dtype();
    if (!is_float(from) || !is_float(a.out.dtype())) return grads({Value{}});
    return grads({ir::cast(a.cotangent, from)});
  };
  cast_op.test.cases = {
      {{Type{f64, {2, 3}}}, {{"dtype", f64}}},
      {{Type{f64, {}}}, {{"dtype", f64}}},
  };
}

}  // namespace mg::ir
