// allocate_buffer: Array storage's alignment (64 bytes; 2 MiB from 4 MiB on, where large
// buffers are mapped for huge pages), writable to the last byte, and freed with the last
// reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/buffer.hpp"

namespace mg {
namespace {

std::uintptr_t address(const std::shared_ptr<std::byte[]>& p) { return reinterpret_cast<std::uintptr_t>(p.get()); }

TEST(Buffer, EmptyIsNull) { EXPECT_EQ(allocate_buffer(0), nullptr); }

TEST(Buffer, SmallBuffersAreCacheLineAligned) {
  for (std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, (std::size_t{4} << 20) - 1})
    EXPECT_EQ(address(allocate_buffer(n)) % 64, 0u) << n;
}

TEST(Buffer, LargeBuffersAreHugePageAlignedAndWritableToTheEnd) {
  // Sizes around the 4 MiB threshold and not a multiple of the 2 MiB page.
  for (std::size_t n : {std::size_t{4} << 20, (std::size_t{4} << 20) + 1, (std::size_t{13} << 20) + 12345}) {
    auto p = allocate_buffer(n);
    ASSERT_NE(p, nullptr);
#if !defined(__SANITIZE_ADDRESS__)  // under ASan every buffer is malloc's (64-byte aligned)
    EXPECT_EQ(address(p) % (std::size_t{2} << 20), 0u) << n;
#endif
    std::memset(p.get(), 0x5a, n);
    EXPECT_EQ(p[n - 1], std::byte{0x5a});
    EXPECT_EQ(p[0], std::byte{0x5a});
  }
}

TEST(Buffer, ArraysOfEveryDtypeAboveTheThresholdHoldTheirValues) {
  Array a = Array::full(Type{f64, {3, 1 << 19}}, 2.5);  // 12 MiB
  EXPECT_EQ(a.at(0), 2.5);
  EXPECT_EQ(a.at(a.numel() - 1), 2.5);
  Array z = Array::zeros(Type{f32, {1 << 21}});  // 8 MiB
  EXPECT_EQ(z.at(z.numel() - 1), 0.0);
  Array copy = a;  // shared storage, released with the last reference
  a = Array();
  EXPECT_EQ(copy.at(7), 2.5);
}

}  // namespace
}  // namespace mg
