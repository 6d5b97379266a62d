// The one data-movement kernel behind the shape ops: copy a box of elements between two
// strided layouts, byte-generic (the element size is all it knows about a dtype). permute,
// broadcast_to (stride 0), slice, flip (negative stride), pad and concat (a box inside a
// bigger box) are each one call. Light header: no xtensor, no registry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mg::ir::kernels {

// An index space `shape` and, for each axis, the element stride into the destination
// and the source (any sign; 0 in `src_strides` repeats the element = broadcasting).
struct StridedBox {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> dst_strides;
  std::vector<std::int64_t> src_strides;
};

// For every index i in box.shape: dst[sum_k i_k*dst_k] = src[sum_k i_k*src_k], where
// dst/src point at the element of index 0 (offsets already applied) and elements are
// `elem_size` bytes. Destination positions must be distinct and must not overlap the
// source. Any rank (0-d copies one element), any empty axis copies nothing. Merges
// contiguous axes, copies rows with memcpy when both inner strides are 1, tiles
// transposes, and runs rows in parallel (OpenMP) when the box is large.
void strided_copy(std::byte* dst, const std::byte* src, std::size_t elem_size, const StridedBox& box);

// NumPy broadcasting as an index map: per axis of `to`, the element stride into a
// contiguous `from` (right-aligned), 0 on the axes `from` broadcasts (size 1 or missing).
std::vector<std::int64_t> broadcast_strides(std::span<const std::int64_t> from, std::span<const std::int64_t> to);

// Writes the element `value` (elem_size bytes) to dst[0..n).
void fill_elements(std::byte* dst, std::int64_t n, const void* value, std::size_t elem_size);

}  // namespace mg::ir::kernels
