// strided_copy (see strided_copy.hpp): normalise the box (drop size-1 axes, merge axes
// contiguous in both layouts), then walk the outer rows with an odometer and copy each
// inner row with a loop specialised on the element size. Offsets are kept as integers and
// turned into pointers only for elements that exist (negative strides walk backwards).
#include "minigrad/ir/ops/strided_copy.hpp"

#include <algorithm>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "minigrad/ir/errors.hpp"

namespace mg::ir::kernels {

namespace {

constexpr std::int64_t kParallelBytes = 1 << 18;  // smaller boxes run on one thread
constexpr std::int64_t kTile = 32;                // transpose tile edge, in elements

struct Dim {
  std::int64_t n, ds, ss;  // extent, dst stride, src stride (elements)
};

// Drops size-1 axes and merges an axis into the next one when it steps over exactly one
// whole row of it in both layouts. A single element gives an empty list.
std::vector<Dim> normalise(const StridedBox& b) {
  std::vector<Dim> dims;
  for (std::size_t k = 0; k < b.shape.size(); ++k) {
    if (b.shape[k] == 1) continue;
    Dim d{b.shape[k], b.dst_strides[k], b.src_strides[k]};
    if (!dims.empty()) {
      Dim& p = dims.back();
      if (p.ds == d.ds * d.n && p.ss == d.ss * d.n) {
        p = {p.n * d.n, d.ds, d.ss};
        continue;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

// Unsigned integer of E bytes: copying through it moves bits, so every dtype works.
template <std::size_t E> struct Word;
template <> struct Word<1> { using type = std::uint8_t; };
template <> struct Word<2> { using type = std::uint16_t; };
template <> struct Word<4> { using type = std::uint32_t; };
template <> struct Word<8> { using type = std::uint64_t; };

// dst[i*ds] = src[i*ss] for i < n, elements of E bytes (E = 0: `size` bytes, any size).
template <std::size_t E>
void copy_row(std::byte* d, std::int64_t ds, const std::byte* s, std::int64_t ss, std::int64_t n,
              std::size_t size) {
  if constexpr (E == 0) {
    for (std::int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds * size, s + i * ss * size, size);
  } else {
    using W = typename Word<E>::type;
    if (ds == 1 && ss == 1) {
      std::memcpy(d, s, static_cast<std::size_t>(n) * E);
    } else if (ss == 0) {
      W v;
      std::memcpy(&v, s, E);
      for (std::int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds * std::int64_t{E}, &v, E);
    } else if (ds == 1 && ss == -1) {  // a reversed row (flip): constant strides vectorise
      for (std::int64_t i = 0; i < n; ++i) std::memcpy(d + i * std::int64_t{E}, s - i * std::int64_t{E}, E);
    } else {
      for (std::int64_t i = 0; i < n; ++i)
        std::memcpy(d + i * ds * std::int64_t{E}, s + i * ss * std::int64_t{E}, E);
    }
  }
}

// Runs row(dst_offset, src_offset, index along the last outer axis) for every row of the
// `outer` index space (byte offsets), on several threads when `bytes` is large.
template <class Row>
void for_each_row(const std::vector<Dim>& outer, std::int64_t elem, std::int64_t bytes, Row&& row) {
  const int m = static_cast<int>(outer.size());
  std::int64_t rows = 1;
  for (const Dim& d : outer) rows *= d.n;
  auto walk = [&](std::int64_t r0, std::int64_t r1) {
    if (r0 >= r1) return;
    std::vector<std::int64_t> idx(static_cast<std::size_t>(m));
    std::int64_t doff = 0, soff = 0, r = r0;
    for (int k = m - 1; k >= 0; --k) {
      idx[k] = r % outer[k].n;
      r /= outer[k].n;
      doff += idx[k] * outer[k].ds * elem;
      soff += idx[k] * outer[k].ss * elem;
    }
    for (std::int64_t i = r0; i < r1; ++i) {
      row(doff, soff, m ? idx[m - 1] : 0);
      for (int k = m - 1; k >= 0; --k) {
        doff += outer[k].ds * elem;
        soff += outer[k].ss * elem;
        if (++idx[k] < outer[k].n) break;
        idx[k] = 0;
        doff -= outer[k].n * outer[k].ds * elem;
        soff -= outer[k].n * outer[k].ss * elem;
      }
    }
  };
#ifdef _OPENMP
  if (bytes >= kParallelBytes && rows > 1 && !omp_in_parallel() && omp_get_max_threads() > 1) {  // a region costs a futex call even on one thread
#pragma omp parallel
    {
      const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      walk(rows * t / nt, rows * (t + 1) / nt);
    }
    return;
  }
#endif
  (void)bytes;
  walk(0, rows);
}

template <std::size_t E>
void copy_dims(std::byte* dst, const std::byte* src, std::size_t size, std::vector<Dim> dims,
               std::int64_t bytes) {
  const auto elem = static_cast<std::int64_t>(size);
  const Dim in = dims.back();
  dims.pop_back();

  // A transpose (dst contiguous, src strided, some outer axis contiguous in src): move
  // that axis next to the inner one and copy T x T tiles, so both sides stay in cache.
  auto a = std::find_if(dims.begin(), dims.end(), [](const Dim& d) { return d.ss == 1 || d.ss == -1; });
  if (in.ds == 1 && in.ss != 0 && in.ss != 1 && in.n >= kTile / 2 && a != dims.end() &&
      a->n >= kTile / 2) {
    const Dim ta = *a;
    dims.erase(a);
    dims.push_back({(ta.n + kTile - 1) / kTile, ta.ds * kTile, ta.ss * kTile});  // bands of T rows
    for_each_row(dims, elem, bytes, [&](std::int64_t doff, std::int64_t soff, std::int64_t band) {
      const std::int64_t rows = std::min(kTile, ta.n - band * kTile);
      for (std::int64_t j0 = 0; j0 < in.n; j0 += kTile) {
        const std::int64_t cols = std::min(kTile, in.n - j0);
        for (std::int64_t i = 0; i < rows; ++i)
          copy_row<E>(dst + doff + (i * ta.ds + j0) * elem, 1,
                      src + soff + (i * ta.ss + j0 * in.ss) * elem, in.ss, cols, size);
      }
    });
    return;
  }
  for_each_row(dims, elem, bytes, [&](std::int64_t doff, std::int64_t soff, std::int64_t) {
    copy_row<E>(dst + doff, in.ds, src + soff, in.ss, in.n, size);
  });
}

}  // namespace

void strided_copy(std::byte* dst, const std::byte* src, std::size_t elem_size, const StridedBox& box) {
  MG_ASSERT(box.dst_strides.size() == box.shape.size() && box.src_strides.size() == box.shape.size(),
            "strided_copy: strides and shape differ in rank");
  std::int64_t n = 1;
  for (auto d : box.shape) n *= d;
  if (n == 0) return;
  std::vector<Dim> dims = normalise(box);
  if (dims.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  const std::int64_t bytes = n * static_cast<std::int64_t>(elem_size);
  switch (elem_size) {
    case 1: return copy_dims<1>(dst, src, elem_size, std::move(dims), bytes);
    case 2: return copy_dims<2>(dst, src, elem_size, std::move(dims), bytes);
    case 4: return copy_dims<4>(dst, src, elem_size, std::move(dims), bytes);
    case 8: return copy_dims<8>(dst, src, elem_size, std::move(dims), bytes);
    default: return copy_dims<0>(dst, src, elem_size, std::move(dims), bytes);
  }
}

std::vector<std::int64_t> broadcast_strides(std::span<const std::int64_t> from, std::span<const std::int64_t> to) {
  std::vector<std::int64_t> strides(to.size(), 0);
  const std::size_t lead = to.size() - from.size();
  std::int64_t stride = 1;  // row-major strides of `from`, innermost first
  for (std::size_t k = from.size(); k-- > 0;) {
    if (from[k] != 1) strides[lead + k] = stride;
    stride *= from[k];
  }
  return strides;
}

void fill_elements(std::byte* dst, std::int64_t n, const void* value, std::size_t elem_size) {
  if (n <= 0) return;
  StridedBox box{{n}, {1}, {0}};
  strided_copy(dst, static_cast<const std::byte*>(value), elem_size, box);
}

}  // namespace mg::ir::kernels
