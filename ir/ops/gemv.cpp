// One-row matmul kernels (gemv.hpp). 64-byte GNU vectors: one AVX-512 register, two AVX
// ones, four SSE/NEON ones. Multiply-adds contract to FMA where the target has it (GCC's
// default for C++; the C text asks for it), so both executors round alike.
#include "minigrad/ir/ops/gemv.hpp"

#include <algorithm>
#include <cstring>

namespace mg::ir::gemv {

namespace {

template <class T>
struct Lanes {
  typedef T vec __attribute__((vector_size(64)));
  typedef T half __attribute__((vector_size(32)));
  typedef T quarter __attribute__((vector_size(16)));
  static constexpr int L = 64 / static_cast<int>(sizeof(T));
};

template <class T>
typename Lanes<T>::vec load(const T* p) {
  typename Lanes<T>::vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The lanes as a tree: halves, quarters, then pairs (the C text sums in this order too).
template <class T>
T lane_sum(typename Lanes<T>::vec v) {
  typename Lanes<T>::half lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  lo += hi;
  typename Lanes<T>::quarter ql, qh;
  std::memcpy(&ql, &lo, sizeof ql);
  std::memcpy(&qh, reinterpret_cast<const char*>(&lo) + sizeof ql, sizeof qh);
  ql += qh;
  if constexpr (sizeof(T) == 4)
    return (ql[0] + ql[2]) + (ql[1] + ql[3]);
  else
    return ql[0] + ql[1];
}

constexpr int kRows = 8;  // vectors of columns at a time (scale_rows)
constexpr int kAcc = 8;   // vector accumulators per dot product: 8 independent FMA chains hide the latency

// sum_p a[p] * b[p] over one contiguous row of B's transpose: kAcc vectors at a time, then
// the remaining whole vectors into the first accumulators, the accumulators summed as a
// tree, then the lanes, then the tail (the C text sums in this order too). One row at a
// time, so the weights are read as ONE sequential stream: 8 rows interleaved (8 streams
// 4*k bytes apart) ran at 2/3 of a sequential read's bandwidth (AMD Zen 5, 784x128 f32:
// 3.6 against 2.3 us, median of 20000 calls).
template <class T>
T dot_row(const T* a, const T* b, std::int64_t k) {
  using V = typename Lanes<T>::vec;
  constexpr int L = Lanes<T>::L;
  V acc[kAcc] = {};
  std::int64_t p = 0;
  for (; p + kAcc * L <= k; p += kAcc * L)
    for (int q = 0; q < kAcc; ++q) acc[q] += load(a + p + q * L) * load(b + p + q * L);
  for (int q = 0; q < kAcc; ++q)  // a constant index per step once unrolled: acc stays in registers
    if (p + L <= k) {
      acc[q] += load(a + p) * load(b + p);
      p += L;
    }
  T s = lane_sum<T>(((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])));
  for (; p < k; ++p) s += a[p] * b[p];
  return s;
}

// c[0,n) = sum_p a[p] * b[p*ld + (0,n)] (B's rows contiguous): 8 vectors of columns at a
// time, each summed over p in order.
template <class T>
void scale_rows(const T* a, const T* b, std::int64_t ld, T* c, std::int64_t n, std::int64_t k) {
  using V = typename Lanes<T>::vec;
  constexpr int L = Lanes<T>::L;
  std::int64_t j0 = 0;
  for (; j0 + L <= n; j0 += kRows * L) {
    const int nv = static_cast<int>(std::min<std::int64_t>(kRows, (n - j0) / L));
    V acc[kRows] = {};
    for (std::int64_t p = 0; p < k; ++p) {
      const V x = a[p] - V{};  // a[p] in every lane (x - 0 is x, -0 too)
      const T* bp = b + p * ld + j0;
      for (int v = 0; v < nv; ++v) acc[v] += x * load(bp + v * L);
    }
    std::memcpy(c + j0, acc, static_cast<std::size_t>(nv) * sizeof(V));
    j0 += nv * L - kRows * L;  // the loop adds kRows * L
  }
  for (std::int64_t j = j0; j < n; ++j) {  // the last columns (fewer than a vector)
    T s = 0;
    for (std::int64_t p = 0; p < k; ++p) s += a[p] * b[p * ld + j];
    c[j] = s;
  }
}

template <class T>
void run(const T* a, const T* b, std::int64_t brs, std::int64_t bcs, T* c, std::int64_t n, std::int64_t k) {
  if (brs == 1) {
    for (std::int64_t j = 0; j < n; ++j) c[j] = dot_row(a, b + j * bcs, k);
  } else {
    scale_rows(a, b, brs, c, n, k);
  }
}

}  // namespace

bool applies(std::int64_t acs, std::int64_t brs, std::int64_t bcs) { return acs == 1 && (brs == 1 || bcs == 1); }

void gemv(const float* a, const float* b, std::int64_t brs, std::int64_t bcs, float* c, std::int64_t n,
          std::int64_t k) {
  run(a, b, brs, bcs, c, n, k);
}
void gemv(const double* a, const double* b, std::int64_t brs, std::int64_t bcs, double* c, std::int64_t n,
          std::int64_t k) {
  run(a, b, brs, bcs, c, n, k);
}

// The same loop nest in C; $T, $S as in the GEMM text (gemm_c99::substitute fills them in).
const char* const kCText = R"(/* c[0,n) = a[0,k) @ B, B(p,j) = b[p*brs + j*bcs], brs == 1 or bcs == 1: one pass over the
   weights (batch-1 inference), one dot product (8 vector accumulators) or 8 vectors of columns at a time. */
#if defined(__GNUC__) && (defined(__SSE2__) || defined(__ARM_NEON))
typedef $T mg_gemv_v_$S __attribute__((vector_size(64)));
typedef $T mg_gemv_h_$S __attribute__((vector_size(32)));
typedef $T mg_gemv_q_$S __attribute__((vector_size(16)));
#define MG_GEMV_VECTORS_$S 1
#endif
/* Multiply-adds contracted to FMA as in the interpreter's kernel (same bits; with a separate
   multiply and add the vector ports, not the cache, bound the loop). noipa: cloned for a
   call's constant k (784), GCC unrolled the whole dot product and ran 1.4x slower (AMD Zen 5,
   3.4 against 2.5 us) than the loop the interpreter runs. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define MG_GEMV_CONTRACT_$S __attribute__((optimize("fp-contract=fast"), noipa))
#elif defined(__GNUC__) && !defined(__clang__)
#define MG_GEMV_CONTRACT_$S __attribute__((optimize("fp-contract=fast")))
#else
#define MG_GEMV_CONTRACT_$S
#endif
static MG_GEMV_CONTRACT_$S void mg_gemv_$S(int64_t n, int64_t k, const $T* a, const $T* b, int64_t brs, int64_t bcs,
                                          $T* c) {
#if defined(__clang__)
#pragma clang fp contract(fast)
#endif
  enum { R = 8 };
  int64_t j0, p, q;
  int r, v;
#if defined(MG_GEMV_VECTORS_$S)
  enum { L = 64 / (int)sizeof($T) };
  if (brs == 1) {  /* one row of B's transpose at a time: the weights read as one stream */
    for (j0 = 0; j0 < n; ++j0) {
      const $T* bj = b + j0 * bcs;
      const mg_gemv_v_$S zero = {0};  /* whole vectors: lane by lane, zeroing took a masked move a lane */
      mg_gemv_v_$S acc[R], x, w, sum;
      mg_gemv_h_$S lo, hi;
      mg_gemv_q_$S ql, qh;
      $T t[4] = {0, 0, 0, 0}, s;
      for (r = 0; r < R; ++r) acc[r] = zero;
      for (p = 0; p + R * L <= k; p += R * L)
        for (r = 0; r < R; ++r) {
          __builtin_memcpy(&x, a + p + r * L, sizeof x);
          __builtin_memcpy(&w, bj + p + r * L, sizeof w);
          acc[r] += x * w;
        }
      for (r = 0; r < R; ++r)  /* the remaining whole vectors, into the first accumulators */
        if (p + L <= k) {
          __builtin_memcpy(&x, a + p, sizeof x);
          __builtin_memcpy(&w, bj + p, sizeof w);
          acc[r] += x * w;
          p += L;
        }
      sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      __builtin_memcpy(&lo, &sum, sizeof lo);
      __builtin_memcpy(&hi, (const char*)&sum + sizeof lo, sizeof hi);
      lo += hi;
      __builtin_memcpy(&ql, &lo, sizeof ql);
      __builtin_memcpy(&qh, (const char*)&lo + sizeof ql, sizeof qh);
      ql += qh;
      __builtin_memcpy(t, &ql, sizeof ql);  /* 4 lanes (f32) or 2 and two zeros (f64) */
      s = (t[0] + t[2]) + (t[1] + t[3]);
      for (q = p; q < k; ++q) s += a[q] * bj[q];
      c[j0] = s;
    }
    return;
  }
  for (j0 = 0; j0 + L <= n; j0 += R * L) {
    const int nv = (n - j0) / L < R ? (int)((n - j0) / L) : R;
    const mg_gemv_v_$S zero = {0};
    mg_gemv_v_$S acc[R], x, w;
    for (v = 0; v < R; ++v) acc[v] = zero;
    for (p = 0; p < k; ++p) {
      const $T* bp = b + p * brs + j0;
      x = a[p] - zero;  /* a[p] in every lane (x - 0 is x, -0 too), not a masked move a lane */
      for (v = 0; v < nv; ++v) {
        __builtin_memcpy(&w, bp + v * L, sizeof w);
        acc[v] += x * w;
      }
    }
    __builtin_memcpy(c + j0, acc, nv * sizeof(mg_gemv_v_$S));
    j0 += nv * L - R * L;
  }
#else
  (void)r, (void)v;
  j0 = 0;
  if (brs == 1) {
    for (; j0 < n; ++j0) {
      $T s = 0;
      for (p = 0; p < k; ++p) s += a[p] * b[j0 * bcs + p];
      c[j0] = s;
    }
    return;
  }
#endif
  for (q = j0; q < n; ++q) {
    $T s = 0;
    for (p = 0; p < k; ++p) s += a[p] * b[p * brs + q];
    c[q] = s;
  }
}
)";

}  // namespace mg::ir::gemv
