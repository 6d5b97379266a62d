// Array storage, conversion and printing.
#include "minigrad/ir/array.hpp"
#include "minigrad/ir/buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <stdexcept>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

#include "minigrad/ir/errors.hpp"

namespace mg {

namespace {
// Buffers of 4 MiB and more are mapped directly, 2 MiB aligned, and asked to be backed by
// transparent huge pages before anything touches them: a first touch costs one fault per
// page, and 4 KiB faults are dear (on a paravirtualised VM, touching 188 MB took 0.55 s in
// 4 KiB pages and 0.012 s in 2 MiB ones). Through malloc, glibc's MALLOC_PERTURB_ (which
// meson test sets) filled them in 4 KiB pages before the advice came: 4x the time of a
// test drawing Monte Carlo samples. At most 2 MiB of a buffer's last huge page goes unused.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = 2 * kHugePage;

// AddressSanitizer checks the bounds of malloc's blocks only: under it, every buffer comes
// from malloc, so a read past a large array is still reported.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLarge = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMapLarge = false;
#else
constexpr bool kMapLarge = true;
#endif
#else
constexpr bool kMapLarge = true;
#endif

#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
// glibc's MALLOC_PERTURB_ for the mapped buffers too: a new buffer is filled with the
// byte's complement, as malloc fills its blocks, so a read of values never written shows.
int perturb_byte() {
  static const int byte = [] {
    const char* env = std::getenv("MALLOC_PERTURB_");
    return env ? std::atoi(env) & 0xff : 0;
  }();
  return byte;
}

std::byte* map_huge(std::size_t rounded) {
  const std::size_t span = rounded + kHugePage;  // room to align the start
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (start > base) munmap(m, start - base);
  if (const std::size_t tail = base + span - (start + rounded)) munmap(reinterpret_cast<void*>(start + rounded), tail);
  madvise(reinterpret_cast<void*>(start), rounded, MADV_HUGEPAGE);  // a hint: failure only costs speed
  return reinterpret_cast<std::byte*>(start);
}
#endif

}  // namespace

std::shared_ptr<std::byte[]> allocate_buffer(std::size_t nbytes) {
  if (nbytes == 0) return {};
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
  if (kMapLarge && nbytes >= kHugeFrom) {
    const std::size_t rounded = (nbytes + kHugePage - 1) / kHugePage * kHugePage;
    std::byte* p = map_huge(rounded);
    if (const int b = perturb_byte()) std::memset(p, b ^ 0xff, nbytes);
    return std::shared_ptr<std::byte[]>(p, [rounded](std::byte* q) { munmap(q, rounded); });
  }
#endif
  const std::size_t rounded = (nbytes + 63) / 64 * 64;  // aligned_alloc wants a multiple
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

Array::Array(Type type) : type_(std::move(type)), storage_(allocate_buffer(type_.nbytes())) {
  for (auto d : type_.shape)
    if (d < 0) throw std::invalid_argument("Array: negative dimension in " + to_string(type_));
}

Array Array::zeros(Type type) {
  Array a(std::move(type));
  if (a.nbytes()) std::memset(a.raw(), 0, a.nbytes());
  return a;
}

Array Array::full(Type type, double value) {
  Array a(std::move(type));
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = a.data<T>();
    for (std::int64_t i = 0; i < a.numel(); ++i) p[i] = static_cast<T>(value);
  });
  return a;
}

double Array::at(std::int64_t i) const {
  return visit_dtype(dtype(), [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(data<T>()[i]);
  });
}

double Array::at(std::initializer_list<std::int64_t> index) const {
  return at(std::span<const std::int64_t>(index.begin(), index.size()));
}

double Array::at(std::span<const std::int64_t> index) const {
  auto describe = [&] {
    std::string s = "index [";
    for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
    return s + "] for an array of shape " + to_string(type_);
  };
  if (static_cast<int>(index.size()) != rank())
    throw UserError("Array::at: " + describe() + " needs " + std::to_string(rank()) + " indices, got " +
                    std::to_string(index.size()));
  if (!valid()) throw UserError("Array::at: the array has no storage");
  std::int64_t flat = 0;
  for (std::size_t i = 0; i < index.size(); ++i) {
    const std::int64_t n = type_.shape[i];
    const std::int64_t k = index[i] < 0 ? index[i] + n : index[i];
    if (k < 0 || k >= n)
      throw UserError("Array::at: " + describe() + ": index " + std::to_string(index[i]) + " is out of range for axis " +
                      std::to_string(i) + " of size " + std::to_string(n));
    flat = flat * n + k;
  }
  return at(flat);
}

double Array::item() const {
  if (numel() != 1)
    throw UserError("Array::item: only a one-element array has an item; this one is " + to_string(type_) + " (" +
                    std::to_string(numel()) + " elements)");
  if (!valid()) throw UserError("Array::item: the array has no storage");
  return at(std::int64_t{0});
}

void Array::set(std::int64_t i, double v) {
  visit_dtype(dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    data<T>()[i] = static_cast<T>(v);
  });
}

std::vector<double> Array::to_doubles() const {
  std::vector<double> v(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i) v[static_cast<std::size_t>(i)] = at(i);
  return v;
}

Array Array::clone() const {
  Array a(type_);
  if (nbytes()) std::memcpy(a.raw(), raw(), nbytes());
  return a;
}

Array Array::reshaped(Shape shape) const {
  if (mg::numel(shape) != numel())
    throw std::invalid_argument("Array::reshaped: " + to_string(type_) + " to " + to_string(shape));
  Array a = *this;
  a.type_.shape = std::move(shape);
  return a;
}

Array Array::cast(DType to) const {
  Array out(Type{to, shape()});
  visit_dtype(dtype(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    visit_dtype(to, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* s = data<S>();
      D* d = out.data<D>();
      for (std::int64_t i = 0; i < numel(); ++i) {
        if constexpr (std::is_same_v<D, std::uint8_t>) d[i] = s[i] != S{0};
        else d[i] = static_cast<D>(s[i]);
      }
    });
  });
  return out;
}

Array Array::view(std::int64_t offset, Type type) const {
  const std::size_t begin = static_cast<std::size_t>(offset) * size_of(type_.dtype);
  if (offset < 0 || begin + type.nbytes() > nbytes()) throw std::logic_error("Array::view: window out of range");
  Array out;
  out.type_ = std::move(type);
  out.storage_ = std::shared_ptr<std::byte[]>(storage_, storage_.get() + begin);
  return out;
}

void Array::retype(Type type) {
  if (type.nbytes() > nbytes()) throw std::logic_error("Array::retype: buffer too small");
  type_ = std::move(type);
}

std::string to_string(const Array& a, int max_elems) {
  std::ostringstream os;
  os << to_string(a.type()) << " {";
  for (std::int64_t i = 0; i < a.numel() && i < max_elems; ++i) os << (i ? ", " : "") << a.at(i);
  if (a.numel() > max_elems) os << ", ...";
  os << "}";
  return os.str();
}

}  // namespace mg
