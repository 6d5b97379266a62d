// .npy reading and writing; see npy.hpp.
//
// Writing uses xtensor's xt::dump_npy. Reading does not use xt::load_npy, because on the
// files a command-line tool meets it (checked with xtensor 0.24):
//  - needs the element type at compile time (the dynamic path is in xt::detail);
//  - reads the 1.0 header length through `char` (signed), so a header of 128+ bytes --
//    what numpy writes for arrays of rank ~10 and more -- is misread ("invalid header");
//  - accepts truncated data silently (uninitialised values), allocates whatever size the
//    header claims, and calls std::string::back() on empty strings for some malformed
//    headers (undefined behaviour);
//  - rejects big-endian files.
// So the frame and the header dict are read here, strictly; Fortran-order data is still
// reordered by xtensor (an assignment between a column-major and a row-major adaptor).
#include "minigrad/runtime/io/npy.hpp"
#include "minigrad/runtime/io/atomic_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xnpy.hpp>

#include "minigrad/ir/errors.hpp"

namespace mg::io {

namespace {

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// The header is a Python dict literal: {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    std::set<std::string> seen;
    expect('{');
    while (!eat('}')) {
      std::string key = quoted();
      if (!seen.insert(key).second) fail("duplicate key '" + key + "'");
      expect(':');
      if (key == "descr") {
        if (peek() == '[') fail("structured (record) dtypes are not supported");
        h.descr = quoted();
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        expect('(');
        while (!eat(')')) {
          h.shape.push_back(integer());
          if (!eat(',')) {
            expect(')');
            break;
          }
        }
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (i_ != s_.size()) fail("unexpected text after the dict");
    for (const char* k : {"descr", "fortran_order", "shape"})
      if (!seen.count(k)) fail(std::string("missing key '") + k + "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UserError(path_ + ": not a valid .npy file: header: " + why + " (at byte " + std::to_string(i_) +
                    " of \"" + std::string(s_.substr(0, 120)) + "\")");
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    skip_space();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c || i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string v(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return v;
  }
  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(i_, std::strlen(word)) == word) {
        i_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False");
  }
  std::int64_t integer() {
    skip_space();
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("expected a non-negative dimension");
    std::int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const int d = s_[i_++] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) fail("dimension too large");
      v = v * 10 + d;
    }
    if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs, in old files
    return v;
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t i_ = 0;
};

// '<f8' -> f64 and so on; the byte-order character is returned in `order`.
DType dtype_of_descr(const std::string& descr, const std::string& path, char& order) {
  static const std::pair<const char*, DType> kinds[] = {
      {"f4", DType::f32}, {"f8", DType::f64}, {"i8", DType::i64}, {"b1", DType::boolean}};
  if (descr.size() == 3 && std::strchr("<>|=", descr[0]) != nullptr) {
    order = descr[0];
    for (auto [code, dt] : kinds)
      if (descr.compare(1, 2, code) == 0) return dt;
  }
  throw UserError(path + ": dtype '" + descr +
                  "' is not supported (miniGrad reads f32 '<f4', f64 '<f8', i64 '<i8', bool '|b1'; "
                  "convert with numpy's astype)");
}

std::string descr_of(DType dt) {
  switch (dt) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i64: return "<i8";
    case DType::boolean: return "|b1";
  }
  return "?";
}

std::uint64_t read_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

void byteswap(Array& a) {
  const std::size_t w = size_of(a.dtype());
  auto* p = static_cast<unsigned char*>(a.raw());
  for (std::int64_t e = 0; e < a.numel(); ++e) std::reverse(p + e * w, p + (e + 1) * w);
}

// Column-major data in `a` reordered to row-major, through xtensor's layout-aware assignment.
Array from_fortran_order(const Array& a) {
  Array out(a.type());
  std::vector<std::size_t> shape(a.shape().begin(), a.shape().end());
  const auto n = static_cast<std::size_t>(a.numel());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using xt::layout_type;
    auto src = xt::adapt<layout_type::dynamic>(a.data<T>(), n, xt::no_ownership(), shape, layout_type::column_major);
    auto dst = xt::adapt<layout_type::dynamic>(out.data<T>(), n, xt::no_ownership(), shape, layout_type::row_major);
    dst = src;
  });
  return out;
}

}  // namespace

Array load_npy(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw UserError(path + ": is a directory, not a .npy file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UserError(path + ": cannot open (" + std::strerror(errno) + ")");
  f.seekg(0, std::ios::end);
  const std::streamoff file_size = f.tellg();
  f.seekg(0, std::ios::beg);
  auto invalid = [&](const std::string& why) { return UserError(path + ": not a valid .npy file: " + why); };

  unsigned char pre[12] = {};
  if (file_size < 10 || !f.read(reinterpret_cast<char*>(pre), 8) || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    throw invalid("it does not start with the \\x93NUMPY magic string");
  const int major = pre[6];
  if (major < 1 || major > 3 || pre[7] != 0)
    throw invalid("unsupported format version " + std::to_string(major) + "." + std::to_string(pre[7]));
  const int len_bytes = major == 1 ? 2 : 4;
  if (!f.read(reinterpret_cast<char*>(pre + 8), len_bytes)) throw invalid("truncated header");
  const std::uint64_t header_len = read_le(pre + 8, len_bytes);
  const auto data_start = static_cast<std::uint64_t>(8 + len_bytes) + header_len;
  if (data_start > static_cast<std::uint64_t>(file_size))
    throw invalid("header length " + std::to_string(header_len) + " runs past the end of the file");
  std::string text(header_len, '\0');
  f.read(text.data(), static_cast<std::streamsize>(header_len));
  if (!f) throw invalid("truncated header");

  const Header h = HeaderParser(text, path).parse();
  char order = '<';
  const DType dt = dtype_of_descr(h.descr, path, order);

  // Size check before allocating: the data must be exactly what the shape needs.
  std::uint64_t count = 1;
  for (std::int64_t d : h.shape) {
    if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / 16 / static_cast<std::uint64_t>(d))
      throw invalid("shape " + to_string(h.shape) + " is too large");
    count *= static_cast<std::uint64_t>(d);
  }
  try {
    check_type_sane(Type{dt, h.shape});  // e.g. [0, 2^62, 2^62]: no elements, but no strides either
  } catch (const ShapeError&) {
    throw invalid("shape " + to_string(h.shape) + " is too large");
  }
  const std::uint64_t need = count * size_of(dt);
  const std::uint64_t have = static_cast<std::uint64_t>(file_size) - data_start;
  if (need != have)
    throw invalid("shape " + to_string(h.shape) + " of " + std::string(name_of(dt)) + " needs " +
                  std::to_string(need) + " data bytes but the file has " + std::to_string(have));

  Array a(Type{dt, h.shape});
  if (need > 0 && !f.read(static_cast<char*>(a.raw()), static_cast<std::streamsize>(need)))
    throw invalid("read error in the data");
  if (order == '>' && size_of(dt) > 1) byteswap(a);
  if (dt == DType::boolean) {
    for (std::uint8_t b : a.span<std::uint8_t>())
      if (b > 1) throw invalid("a bool element holds byte " + std::to_string(b) + " (not 0 or 1)");
  }
  if (h.fortran_order && a.rank() > 1) a = from_fortran_order(a);
  return a;
}

void save_npy(const std::string& path, const Array& a) {
  std::vector<std::size_t> shape(a.shape().begin(), a.shape().end());
  const auto n = static_cast<std::size_t>(a.numel());
  const std::string bytes = visit_dtype(a.dtype(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      // Array stores bool as uint8_t; xnpy writes '|b1' only for a bool expression.
      xt::xarray<bool> b = xt::cast<bool>(xt::adapt(a.data<T>(), n, xt::no_ownership(), shape));
      return xt::dump_npy(b);
    } else {
      return xt::dump_npy(xt::adapt(a.data<T>(), n, xt::no_ownership(), shape));
    }
  });
  write_file_atomically(path, bytes, "save_npy('" + path + "')");  // never half a file
}

std::string describe_npy(const Array& a) {
  return to_string(a.type()) + " ('" + descr_of(a.dtype()) + "')";
}

}  // namespace mg::io
