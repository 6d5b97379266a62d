// SafeTensors save (atomic: temp file, fsync, rename) and load (validate the whole header
// against the file before allocating anything). See safetensors.hpp for the format.
#include "minigrad/runtime/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/io/atomic_file.hpp"

namespace mg::io {

static_assert(std::endian::native == std::endian::little,
              "SafeTensors data is little-endian; a big-endian host needs byte swaps here");

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's cap

// ---- Dtypes on the wire ----------------------------------------------------------------

enum class Wire { f32, f64, i64, boolean, f16, bf16, i8, i16, i32, u8, u16, u32, u64 };

struct WireInfo {
  const char* name;
  Wire wire;
  std::size_t itemsize;
  DType loads_as;
};

constexpr std::array<WireInfo, 13> kWires{{
    {"F32", Wire::f32, 4, f32},  {"F64", Wire::f64, 8, f64},   {"I64", Wire::i64, 8, i64},
    {"BOOL", Wire::boolean, 1, boolean}, {"F16", Wire::f16, 2, f32}, {"BF16", Wire::bf16, 2, f32},
    {"I8", Wire::i8, 1, i64},    {"I16", Wire::i16, 2, i64},   {"I32", Wire::i32, 4, i64},
    {"U8", Wire::u8, 1, i64},    {"U16", Wire::u16, 2, i64},   {"U32", Wire::u32, 4, i64},
    {"U64", Wire::u64, 8, i64},
}};

const WireInfo* find_wire(std::string_view name) {
  for (const auto& w : kWires)
    if (name == w.name) return &w;
  return nullptr;
}

const char* wire_name(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f64: return "F64";
    case DType::i64: return "I64";
    case DType::boolean: return "BOOL";
  }
  return "?";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in f32
    float mag = std::ldexp(static_cast<float>(mant), -24);
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(mag));
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf/nan
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

template <class S>
S load_le(const std::byte* p) {
  S v;
  std::memcpy(&v, p, sizeof(S));
  return v;
}

// ---- POSIX file helpers ------------------------------------------------------------------

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

// Reads exactly n bytes at `offset`; false on a short file (errno untouched on EOF).
bool pread_all(int fd, void* buf, std::size_t n, std::uint64_t offset, const std::string& ctx) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw UserError(ctx + ": read failed: " + errno_text());
    }
    if (got == 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

// ---- Header validation -------------------------------------------------------------------

struct Entry {
  std::string name;
  const WireInfo* wire;
  Shape shape;
  std::uint64_t begin, end;
};

// Rejects nesting deeper than the format needs (top object > entry > shape array) before
// handing the text to the JSON parser, so a hostile header cannot make it build huge trees.
void check_nesting(const std::string& text, const std::string& ctx) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 3)
        throw UserError(ctx + ": header nests deeper than a SafeTensors header can (byte " +
                        std::to_string(8 + i) + ")");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

json parse_header(const std::string& text, const std::string& ctx) {
  if (text.empty() || text[0] != '{')
    throw UserError(ctx + ": header does not start with '{' (not a SafeTensors file?)");
  check_nesting(text, ctx);
  // nlohmann keeps the last of duplicate keys silently; the callback records them. Keys at
  // depth d belong to the object most recently opened at depth d - 1.
  std::vector<std::set<std::string>> seen(8);
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    auto d = static_cast<std::size_t>(depth);
    if (d + 1 >= seen.size()) return true;  // cannot happen after check_nesting
    if (event == json::parse_event_t::object_start) seen[d + 1].clear();
    if (event == json::parse_event_t::key && duplicate.empty() && parsed.is_string() &&
        !seen[d].insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(text, callback);
  } catch (const json::exception& e) {
    throw UserError(ctx + ": header is not valid JSON: " + e.what());
  }
  if (!duplicate.empty()) throw UserError(ctx + ": header has the key '" + duplicate + "' twice");
  if (!header.is_object()) throw UserError(ctx + ": header is not a JSON object");
  return header;
}

Entry parse_entry(const std::string& name, const json& v, const std::string& ctx) {
  std::string where = ctx + ": tensor '" + name + "'";
  if (!v.is_object()) throw UserError(where + ": entry is not a JSON object");
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets")
      throw UserError(where + ": unexpected key '" + it.key() + "'");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!v.contains(key)) throw UserError(where + ": missing '" + key + "'");
  Entry e{name, nullptr, {}, 0, 0};
  const json& dt = v["dtype"];
  if (!dt.is_string()) throw UserError(where + ": 'dtype' is not a string");
  auto dname = dt.get<std::string>();
  e.wire = find_wire(dname);
  if (!e.wire)
    throw UserError(where + ": dtype '" + dname + "' is not supported (supported: F32, F64, I64, "
                    "BOOL; widened on load: F16, BF16, I8, I16, I32, U8, U16, U32, U64)");
  const json& sh = v["shape"];
  if (!sh.is_array()) throw UserError(where + ": 'shape' is not an array");
  // Product of the non-zero dims times the item size must fit in int64, so no later
  // computation on this shape can overflow (even one visiting dims before a zero).
  std::uint64_t bytes_nonzero = e.wire->itemsize;
  bool has_zero = false;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (const json& d : sh) {
    if (!d.is_number_unsigned())
      throw UserError(where + ": shape entries must be non-negative integers, got " + d.dump());
    auto dim = d.get<std::uint64_t>();
    if (dim == 0) has_zero = true;
    else if (__builtin_mul_overflow(bytes_nonzero, dim, &bytes_nonzero) || bytes_nonzero > kMax)
      throw UserError(where + ": shape " + sh.dump() + " is too large");
    e.shape.push_back(static_cast<std::int64_t>(dim));
  }
  const std::uint64_t nbytes = has_zero ? 0 : bytes_nonzero;
  const json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    throw UserError(where + ": 'data_offsets' must be two non-negative integers [begin, end]");
  e.begin = off[0].get<std::uint64_t>();
  e.end = off[1].get<std::uint64_t>();
  if (e.end < e.begin)
    throw UserError(where + ": data_offsets " + off.dump() + " end before they begin");
  if (e.end - e.begin != nbytes)
    throw UserError(where + ": data_offsets " + off.dump() + " span " +
                    std::to_string(e.end - e.begin) + " bytes but dtype " + dname + " shape " +
                    sh.dump() + " needs " + std::to_string(nbytes));
  return e;
}

// The tensors must tile [0, data_len) exactly: sorted by offset, each starts where the
// previous one ended. This rules out overlap, gaps, out-of-range offsets and trailing data.
void check_tiling(std::vector<Entry>& entries, std::uint64_t data_len, const std::string& ctx) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t pos = 0;
  for (const Entry& e : entries) {
    std::string where = ctx + ": tensor '" + e.name + "' data_offsets [" +
                        std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.end > data_len)
      throw UserError(where + " run past the data section (" + std::to_string(data_len) +
                      " bytes; file truncated?)");
    if (e.begin < pos)
      throw UserError(where + " overlap the previous tensor, which ends at " + std::to_string(pos));
    if (e.begin > pos)
      throw UserError(where + " leave a gap: the previous tensor ends at " + std::to_string(pos));
    pos = e.end;
  }
  if (pos != data_len)
    throw UserError(ctx + ": the data section has " + std::to_string(data_len - pos) +
                    " bytes after the last tensor");
}

// Converts `n` little-endian wire values in `src` into `out` (already typed loads_as).
void widen(const Entry& e, const std::byte* src, Array& out, const std::string& ctx) {
  const auto n = static_cast<std::size_t>(out.numel());
  auto ints = [&](auto tag) {
    using S = decltype(tag);
    auto* dst = out.data<std::int64_t>();
    for (std::size_t i = 0; i < n; ++i) {
      S v = load_le<S>(src + i * sizeof(S));
      if constexpr (std::is_same_v<S, std::uint64_t>) {
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw UserError(ctx + ": tensor '" + e.name + "': U64 value " + std::to_string(v) +
                          " at index " + std::to_string(i) + " does not fit in i64");
      }
      dst[i] = static_cast<std::int64_t>(v);
    }
  };
  switch (e.wire->wire) {
    case Wire::f16:
    case Wire::bf16: {
      auto* dst = out.data<float>();
      for (std::size_t i = 0; i < n; ++i) {
        auto h = load_le<std::uint16_t>(src + 2 * i);
        dst[i] = e.wire->wire == Wire::f16
                     ? half_to_float(h)
                     : std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
      }
      return;
    }
    case Wire::i8: return ints(std::int8_t{});
    case Wire::i16: return ints(std::int16_t{});
    case Wire::i32: return ints(std::int32_t{});
    case Wire::u8: return ints(std::uint8_t{});
    case Wire::u16: return ints(std::uint16_t{});
    case Wire::u32: return ints(std::uint32_t{});
    case Wire::u64: return ints(std::uint64_t{});
    default: break;
  }
  MG_ASSERT(false, "widen called for a native dtype");
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Array>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const std::string ctx = "save_safetensors('" + path + "')";
  std::vector<std::pair<const std::string*, const Array*>> order;
  for (const auto& [name, a] : tensors) {
    if (name == "__metadata__")
      throw UserError(ctx + ": '__metadata__' is reserved and cannot name a tensor");
    if (!a.valid() || (a.nbytes() > 0 && a.raw() == nullptr))
      throw UserError(ctx + ": tensor '" + name + "' has no storage");
    order.emplace_back(&name, &a);
  }
  // Largest element first keeps every tensor aligned to its element size (names break ties
  // because `tensors` is ordered and the sort is stable).
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return size_of(x.second->dtype()) > size_of(y.second->dtype());
  });
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, a] : order) {
    std::uint64_t end = offset + a->nbytes();
    header[*name] = {{"dtype", wire_name(a->dtype())}, {"shape", a->shape()},
                     {"data_offsets", {offset, end}}};
    offset = end;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw UserError(ctx + ": a tensor name or metadata string is not valid UTF-8: " + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // data section starts 8-byte aligned

  AtomicFile file(path, ctx);
  std::uint64_t n = text.size();
  file.write(&n, 8);
  file.write(text.data(), text.size());
  for (const auto& [name, a] : order) {
    if (a->dtype() == boolean) {  // normalise to 0/1, which is all readers accept
      std::vector<std::uint8_t> bytes(a->span<std::uint8_t>().begin(), a->span<std::uint8_t>().end());
      for (auto& b : bytes) b = b != 0;
      file.write(bytes.data(), bytes.size());
    } else {
      file.write(a->raw(), a->nbytes());
    }
  }
  file.commit();
}

SafeTensors load_safetensors(const std::string& path) {
  const std::string ctx = "load_safetensors('" + path + "')";
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) throw UserError(ctx + ": cannot open: " + errno_text());
  struct stat st{};
  if (::fstat(fd.fd, &st) != 0) throw UserError(ctx + ": cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) throw UserError(ctx + ": not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8)
    throw UserError(ctx + ": the file has " + std::to_string(size) +
                    " bytes, fewer than the 8-byte header length");
  std::uint64_t n = 0;
  if (!pread_all(fd.fd, &n, 8, 0, ctx)) throw UserError(ctx + ": the file shrank while reading");
  if (n > size - 8)
    throw UserError(ctx + ": header length " + std::to_string(n) + " exceeds the " +
                    std::to_string(size - 8) + " bytes after the length field (truncated or "
                    "not a SafeTensors file)");
  if (n > kMaxHeaderBytes)
    throw UserError(ctx + ": header length " + std::to_string(n) + " exceeds the 100 MB limit");
  std::string text(n, '\0');
  if (!pread_all(fd.fd, text.data(), n, 8, ctx)) throw UserError(ctx + ": the file shrank while reading");
  json header = parse_header(text, ctx);

  SafeTensors out;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw UserError(ctx + ": '__metadata__' is not a JSON object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          throw UserError(ctx + ": metadata value for '" + m.key() + "' is not a string");
        out.metadata.emplace(m.key(), m->get<std::string>());
      }
      continue;
    }
    entries.push_back(parse_entry(it.key(), *it, ctx));
  }
  const std::uint64_t data_start = 8 + n;
  check_tiling(entries, size - data_start, ctx);

  std::vector<std::byte> staging;
  for (const Entry& e : entries) {
    Array a(e.wire->loads_as, e.shape);
    const auto bytes = static_cast<std::size_t>(e.end - e.begin);
    const bool native = e.wire->itemsize == size_of(e.wire->loads_as) &&
                        (e.wire->wire == Wire::f32 || e.wire->wire == Wire::f64 ||
                         e.wire->wire == Wire::i64 || e.wire->wire == Wire::boolean);
    void* dst = a.raw();
    if (!native) {
      staging.resize(bytes);
      dst = staging.data();
    }
    if (bytes > 0 && !pread_all(fd.fd, dst, bytes, data_start + e.begin, ctx))
      throw UserError(ctx + ": the file shrank while reading tensor '" + e.name + "'");
    if (!native) widen(e, staging.data(), a, ctx);
    if (e.wire->wire == Wire::boolean)
      for (std::uint8_t b : a.span<std::uint8_t>())
        if (b > 1)
          throw UserError(ctx + ": tensor '" + e.name + "': BOOL byte " + std::to_string(b) +
                          " is neither 0 nor 1");
    out.tensors.emplace(e.name, std::move(a));
  }
  return out;
}

}  // namespace mg::io
