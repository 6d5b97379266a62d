// The two containers a Graph stores its nodes in (ir/README.md, "Storage"). Both grow in
// blocks of doubling size and never move what they hold, so a `const Node&` or an operand
// list stays valid while the graph grows, and a graph of n nodes makes O(log n) heap
// allocations for them instead of one (or two) per node. Freeing a million-node graph is
// then a few dozen frees, not a million scattered ones, and a forward walk over ids reads
// memory in order.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mg::ir {

// A vector whose elements never move: block k holds kFirst << k elements, so element i is
// in block bit_width(i / kFirst + 1) - 1. Elements [0, size()) are constructed. The first
// block is small (most graphs are small region bodies: a fused node's has a handful of
// nodes) and the block table is inline, so a small graph costs one allocation.
template <class T>
class StableVector {
 public:
  static constexpr std::size_t kLog2First = 3;
  static constexpr std::size_t kFirst = std::size_t{1} << kLog2First;

  StableVector() = default;
  StableVector(const StableVector&) = delete;
  StableVector& operator=(const StableVector&) = delete;
  ~StableVector() {
    truncate(0);
    for (std::size_t k = 0; k < used_; ++k)
      ::operator delete(blocks_[k], capacity_of(k) * sizeof(T), std::align_val_t{alignof(T)});
  }

  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return *slot(i); }
  const T& operator[](std::size_t i) const { return *slot(i); }
  T& at(std::size_t i) {
    if (i >= size_) out_of_range(i);
    return *slot(i);
  }
  const T& at(std::size_t i) const {
    if (i >= size_) out_of_range(i);
    return *slot(i);
  }

  T& push_back(T&& value) {
    const auto [k, off] = locate(size_);
    if (k == used_) {
      if (k == kMaxBlocks) throw std::length_error("StableVector: too many elements");
      blocks_[used_++] = static_cast<T*>(::operator new(capacity_of(k) * sizeof(T), std::align_val_t{alignof(T)}));
    }
    T* p = ::new (blocks_[k] + off) T(std::move(value));
    ++size_;
    return *p;
  }
  // Destroys elements [n, size()); keeps the blocks for reuse.
  void truncate(std::size_t n) {
    while (size_ > n) slot(--size_)->~T();
  }

 private:
  static std::size_t capacity_of(std::size_t k) { return kFirst << k; }
  // (block, offset) of element i; block k starts at kFirst * (2^k - 1).
  static std::pair<std::size_t, std::size_t> locate(std::size_t i) {
    const std::size_t k = static_cast<std::size_t>(std::bit_width((i >> kLog2First) + 1)) - 1;
    return {k, i + kFirst - (kFirst << k)};
  }
  T* slot(std::size_t i) const {
    const auto [k, off] = locate(i);
    return blocks_[k] + off;
  }
  [[noreturn]] void out_of_range(std::size_t i) const {
    throw std::out_of_range("node id " + std::to_string(i) + " out of range (graph has " + std::to_string(size_) +
                            " nodes)");
  }

  static constexpr std::size_t kMaxBlocks = 32;  // 8 * (2^32 - 1) elements: past any 32-bit id
  std::array<T*, kMaxBlocks> blocks_{};
  std::size_t used_ = 0;  // blocks allocated
  std::size_t size_ = 0;
};

// A bump allocator of short runs of trivially copyable values (operand lists): a run is
// contiguous and never moves; runs are freed together with the pool.
template <class T>
class RunPool {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  T* allocate(std::size_t n) {
    if (n == 0) return nullptr;
    if (n > left_) {
      capacity_ = std::max(n, capacity_ ? 2 * capacity_ : std::size_t{32});
      blocks_.push_back(std::make_unique_for_overwrite<T[]>(capacity_));
      next_ = blocks_.back().get();
      left_ = capacity_;
    }
    T* run = next_;
    next_ += n;
    left_ -= n;
    return run;
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  T* next_ = nullptr;
  std::size_t left_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace mg::ir
