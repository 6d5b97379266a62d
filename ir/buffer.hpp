// Uninitialised byte buffers as Array storage gets them: 64-byte aligned; from 4 MiB on,
// mapped directly, 2 MiB aligned and advised to transparent huge pages before the first
// touch (ir/array.cpp says why). For other large scratch space too (the IDX reader's chunks).
#pragma once
#include <cstddef>
#include <memory>

namespace mg {

// nullptr for 0 bytes; throws std::bad_alloc when the memory is not there.
std::shared_ptr<std::byte[]> allocate_buffer(std::size_t nbytes);

}  // namespace mg
