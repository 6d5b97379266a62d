// IDX reading through zlib's gz* API, which also reads plain files transparently. The
// header's claimed size is never allocated up front: data is read in chunks and grows with
// what the file really holds, so a lying header costs no more memory than the file.
#include "minigrad/runtime/io/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

#include "minigrad/ir/buffer.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::io {

namespace {

struct GzFile {
  gzFile f = nullptr;
  explicit GzFile(gzFile g) : f(g) {}
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  ~GzFile() {
    if (f) gzclose(f);
  }
};

// Reads up to n bytes; returns how many arrived before the end of the file. A corrupt
// stream (bad deflate data, CRC or length mismatch, premature end) throws.
std::size_t gz_read(GzFile& g, void* buf, std::size_t n, const std::string& ctx) {
  std::size_t total = 0;
  auto* p = static_cast<unsigned char*>(buf);
  while (total < n) {
    auto want = static_cast<unsigned>(std::min<std::size_t>(n - total, 1u << 24));
    int got = gzread(g.f, p + total, want);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(g.f, &code);
      throw UserError(ctx + ": corrupt or truncated gzip stream: " +
                      (code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg)));
    }
    if (got == 0) {
      // zlib reports a stream cut short as end of file plus a Z_BUF_ERROR state.
      int code = Z_OK;
      gzerror(g.f, &code);
      if (code == Z_BUF_ERROR) throw UserError(ctx + ": truncated gzip stream (unexpected end of file)");
      break;
    }
    total += static_cast<std::size_t>(got);
  }
  return total;
}

struct Code {
  unsigned char code;
  const char* name;
  std::size_t size;
  bool is_int;
};
constexpr Code kCodes[] = {{0x08, "u8", 1, true},   {0x09, "i8", 1, true},
                           {0x0B, "i16", 2, true},  {0x0C, "i32", 4, true},
                           {0x0D, "f32", 4, false}, {0x0E, "f64", 8, false}};

template <class U>
U load_be(const unsigned char* p) {
  U v = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>((v << 8) | p[i]);
  return v;
}

const unsigned char* bytes_of(const std::shared_ptr<std::byte[]>& chunk) {
  return reinterpret_cast<const unsigned char*>(chunk.get());
}

// Converts `n` big-endian items of IDX type `code` to T, times `scale` for floats.
template <class T>
void convert(unsigned char code, const unsigned char* src, T* dst, std::size_t n, double scale) {
  auto run = [&](auto read) {
    for (std::size_t i = 0; i < n; ++i) {
      auto v = read(i);
      if constexpr (std::is_floating_point_v<T>)
        dst[i] = static_cast<T>(static_cast<double>(v) * scale);
      else
        dst[i] = static_cast<T>(v);
    }
  };
  switch (code) {
    case 0x08: {  // images: one lookup per byte, the same rounding as `run`
      T table[256];
      for (int v = 0; v < 256; ++v)
        table[v] = std::is_floating_point_v<T> ? static_cast<T>(static_cast<double>(v) * scale) : static_cast<T>(v);
      for (std::size_t i = 0; i < n; ++i) dst[i] = table[src[i]];
      return;
    }
    case 0x09: return run([&](std::size_t i) { return static_cast<std::int8_t>(src[i]); });
    case 0x0B:
      return run([&](std::size_t i) {
        return static_cast<std::int16_t>(load_be<std::uint16_t>(src + 2 * i));
      });
    case 0x0C:
      return run([&](std::size_t i) {
        return static_cast<std::int32_t>(load_be<std::uint32_t>(src + 4 * i));
      });
    case 0x0D:
      return run([&](std::size_t i) {
        return std::bit_cast<float>(load_be<std::uint32_t>(src + 4 * i));
      });
    case 0x0E:
      return run([&](std::size_t i) {
        return std::bit_cast<double>(load_be<std::uint64_t>(src + 8 * i));
      });
    default: break;
  }
  MG_ASSERT(false, "convert: unchecked IDX type code");
}

}  // namespace

Array read_idx(const std::string& path, DType to, double scale) {
  const std::string ctx = "read_idx('" + path + "')";
  if (to == boolean) throw UserError(ctx + ": target dtype must be f32, f64 or i64, not bool");
  GzFile g(gzopen(path.c_str(), "rb"));
  if (!g.f) throw UserError(ctx + ": cannot open: " + std::strerror(errno));
  gzbuffer(g.f, 1u << 17);

  unsigned char magic[4];
  if (gz_read(g, magic, 4, ctx) != 4) throw UserError(ctx + ": file shorter than the 4-byte magic");
  if (magic[0] != 0 || magic[1] != 0)
    throw UserError(ctx + ": bad magic (first two bytes must be 0; not an IDX file?)");
  const Code* code = nullptr;
  for (const Code& c : kCodes)
    if (c.code == magic[2]) code = &c;
  if (!code) throw UserError(ctx + ": unknown IDX type code " + std::to_string(magic[2]));
  if (!code->is_int && to == i64)
    throw UserError(ctx + ": cannot read " + code->name + " data as i64");
  if (to == i64 && scale != 1.0) throw UserError(ctx + ": scale must be 1 for an i64 target");
  const int ndim = magic[3];
  if (ndim == 0) throw UserError(ctx + ": ndim is 0");

  std::vector<unsigned char> dim_bytes(4 * static_cast<std::size_t>(ndim));
  if (gz_read(g, dim_bytes.data(), dim_bytes.size(), ctx) != dim_bytes.size())
    throw UserError(ctx + ": file ends inside the " + std::to_string(ndim) + " dimensions");
  Shape shape;
  std::uint64_t bytes = code->size;  // product of dims times the item size, overflow-checked
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (int i = 0; i < ndim; ++i) {
    auto d = load_be<std::uint32_t>(dim_bytes.data() + 4 * i);
    shape.push_back(d);
    if (__builtin_mul_overflow(bytes, std::uint64_t{d}, &bytes) || bytes > kMax)
      throw UserError(ctx + ": dimensions " + to_string(shape) + "... are too large");
  }

  // Read in chunks of at most 16 MiB: memory grows with the data actually present, never
  // with the header's claim. The chunks are kept apart (no reallocation copies, no zeroing)
  // and, being large, in huge pages (allocate_buffer): 47 MB in 4 KiB pages was 11k faults.
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 24;
  std::vector<std::shared_ptr<std::byte[]>> chunks;
  std::uint64_t have = 0;
  while (have < bytes) {
    const auto n = static_cast<std::size_t>(std::min(bytes - have, kChunk));
    chunks.push_back(allocate_buffer(n));
    const std::size_t got = gz_read(g, chunks.back().get(), n, ctx);
    if (got < n)
      throw UserError(ctx + ": truncated: shape " + to_string(shape) + " of " + code->name +
                      " needs " + std::to_string(bytes) + " data bytes, the file has " +
                      std::to_string(have + got));
    have += n;
  }
  unsigned char extra[64];
  if (std::size_t more = gz_read(g, extra, sizeof extra, ctx); more > 0)
    throw UserError(ctx + ": unexpected bytes after the " + std::to_string(bytes) +
                    " data bytes of shape " + to_string(shape));

  Array out(to, shape);
  // A chunk holds whole items: kChunk is a multiple of every item size.
  std::size_t at = 0;  // items converted so far
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const auto n = static_cast<std::size_t>(std::min(bytes - c * kChunk, kChunk)) / code->size;
    switch (to) {
      case DType::f32: convert(code->code, bytes_of(chunks[c]), out.data<float>() + at, n, scale); break;
      case DType::f64: convert(code->code, bytes_of(chunks[c]), out.data<double>() + at, n, scale); break;
      case DType::i64: convert(code->code, bytes_of(chunks[c]), out.data<std::int64_t>() + at, n, scale); break;
      case DType::boolean: break;
    }
    at += n;
    chunks[c].reset();  // give each chunk back as soon as it is converted
  }
  return out;
}

FashionMnist load_fashion_mnist(const std::string& dir) {
  const std::string ctx = "load_fashion_mnist('" + dir + "')";
  auto find = [&](const std::string& stem) {
    for (const std::string& name : {stem + ".gz", stem}) {
      std::error_code ec;
      auto p = std::filesystem::path(dir) / name;
      if (std::filesystem::exists(p, ec)) return p.string();
    }
    throw UserError(ctx + ": neither " + stem + ".gz nor " + stem + " exists there (Debian: "
                    "apt-get install dataset-fashion-mnist)");
  };
  auto load_split = [&](const std::string& prefix, Array& images, Array& labels) {
    std::string ipath = find(prefix + "-images-idx3-ubyte");
    std::string lpath = find(prefix + "-labels-idx1-ubyte");
    images = read_idx(ipath, f32, 1.0 / 255.0);
    labels = read_idx(lpath, i64);
    const Shape& s = images.shape();
    if (s.size() != 3 || s[1] != 28 || s[2] != 28)
      throw UserError(ctx + ": " + ipath + " has shape " + to_string(s) + ", expected [N,28,28]");
    if (labels.rank() != 1 || labels.shape()[0] != s[0])
      throw UserError(ctx + ": " + lpath + " has shape " + to_string(labels.shape()) +
                      " but there are " + std::to_string(s[0]) + " images");
    for (std::int64_t i = 0; i < labels.numel(); ++i) {
      std::int64_t y = labels.data<std::int64_t>()[i];
      if (y < 0 || y > 9)
        throw UserError(ctx + ": " + lpath + ": label " + std::to_string(y) + " at index " +
                        std::to_string(i) + " is outside 0..9");
    }
    images = images.reshaped({s[0], 28 * 28});
  };
  FashionMnist out;
  load_split("train", out.train_images, out.train_labels);
  load_split("t10k", out.test_images, out.test_labels);
  return out;
}

}  // namespace mg::io
