// Shape: a value's dimensions. The interface of std::vector<std::int64_t> (which it
// replaced, and converts to and from), with up to kInline dims stored in place: every IR
// node carries a shape, so a heap array per shape was one allocation per node a pass
// copies and a pointer chase per type comparison (the passes' time grew faster than the
// graph: bench/pass_pipeline). Longer shapes live on the heap.
#pragma once
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mg {

class Shape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr std::uint32_t kInline = 4;  // NCHW

  Shape() noexcept {}
  Shape(std::initializer_list<std::int64_t> dims) { assign(dims.begin(), dims.end()); }
  explicit Shape(size_type n) { resize(n); }
  Shape(size_type n, std::int64_t value) { assign(n, value); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<std::int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, like the vector it was
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<std::int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  std::int64_t* data() noexcept { return on_heap() ? heap_ : inline_; }
  const std::int64_t* data() const noexcept { return on_heap() ? heap_ : inline_; }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  std::int64_t& operator[](size_type i) noexcept { return data()[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data()[i]; }
  std::int64_t& at(size_type i) { return data()[checked(i)]; }
  const std::int64_t& at(size_type i) const { return data()[checked(i)]; }
  std::int64_t& front() noexcept { return data()[0]; }
  const std::int64_t& front() const noexcept { return data()[0]; }
  std::int64_t& back() noexcept { return data()[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_type n) {
    if (n > capacity_) grow_to(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_type n, std::int64_t value = 0) {
    reserve(n);
    std::fill(data() + size_, data() + std::max<size_type>(n, size_), value);
    size_ = static_cast<std::uint32_t>(n);
  }
  void push_back(std::int64_t d) {
    if (size_ == capacity_) grow_to(2 * static_cast<size_type>(capacity_));
    data()[size_++] = d;
  }
  std::int64_t& emplace_back(std::int64_t d) {
    push_back(d);
    return back();
  }
  void pop_back() noexcept { --size_; }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<std::int64_t>(*first));
  }
  void assign(size_type n, std::int64_t value) {
    clear();
    resize(n, value);
  }
  void assign(std::initializer_list<std::int64_t> dims) { assign(dims.begin(), dims.end()); }

  iterator insert(const_iterator pos, std::int64_t d) { return insert(pos, size_type{1}, d); }
  iterator insert(const_iterator pos, size_type n, std::int64_t d) {
    const size_type at = open_gap(pos, n);
    std::fill(data() + at, data() + at + n, d);
    return data() + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Copied before the gap opens: [first, last) may be this shape's own elements.
    const Shape items(first, last);
    const size_type at = open_gap(pos, items.size());
    std::copy(items.begin(), items.end(), data() + at);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<std::int64_t> dims) {
    return insert(pos, dims.begin(), dims.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - begin()), n = static_cast<size_type>(last - first);
    std::copy(data() + at + n, end(), data() + at);
    size_ -= static_cast<std::uint32_t>(n);
    return data() + at;
  }
  void swap(Shape& o) noexcept { std::swap(*this, o); }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const noexcept { return capacity_ > kInline; }
  size_type checked(size_type i) const {
    if (i >= size_) throw std::out_of_range("Shape::at: dim " + std::to_string(i) + " of a rank-" + std::to_string(size_) + " shape");
    return i;
  }
  // Makes room for n dims at pos (shifting the tail); returns pos as an index.
  size_type open_gap(const_iterator pos, size_type n) {
    const auto at = static_cast<size_type>(pos - begin());
    reserve(size_ + n);
    std::copy_backward(data() + at, end(), end() + n);
    size_ += static_cast<std::uint32_t>(n);
    return at;
  }
  void grow_to(size_type n) {
    if (n > 0xffffffffu) throw std::length_error("Shape: rank too large");
    n = std::max<size_type>(n, 2 * kInline);
    auto* fresh = new std::int64_t[n];
    std::copy(begin(), end(), fresh);
    release();
    heap_ = fresh;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void release() noexcept {
    if (on_heap()) delete[] heap_;
    capacity_ = kInline;
  }
  void steal(Shape& o) noexcept {  // *this holds no heap array
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.on_heap()) heap_ = o.heap_;
    else std::copy(o.inline_, o.inline_ + o.size_, inline_);
    o.size_ = 0;
    o.capacity_ = kInline;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  union {
    std::int64_t inline_[kInline];
    std::int64_t* heap_;
  };
};

}  // namespace mg
