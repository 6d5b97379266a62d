// .npy I/O (runtime/io/npy.hpp): exact round trips for every dtype, 0-d, empty and
// high-rank arrays (a 128+ byte header, which xnpy's own reader misreads); big-endian and
// Fortran-order files; and corrupted files, each a UserError naming the defect, never a
// crash (every truncation and random header bytes included).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "tests/scratch_dir.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/io/npy.hpp"

namespace mg {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  static testing::ScratchDir dir("mg_test_npy_");
  return dir / name;
}
std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
// A version-1.0 file with this header dict and data, padded as numpy pads.
std::string npy_bytes(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}
template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}
// Load must fail with a UserError whose message contains `needle`.
void expect_error(const fs::path& p, const std::string& needle) {
  try {
    Array a = io::load_npy(p.string());
    ADD_FAILURE() << p << " loaded as " << to_string(a.type()) << ", expected an error with '" << needle << "'";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << "names the file: " << e.what();
  }
}

void expect_same(const Array& a, const Array& b) {
  ASSERT_EQ(a.type(), b.type());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  if (a.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  }
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  std::vector<Array> cases = {
      Array::from<float>({2, 3}, {1.5f, -2, 3e-7f, 4, 5, 6}),
      Array::from<double>({3}, {0.1, -1e300, 5e-324}),
      Array::from<std::int64_t>({2, 2}, {std::int64_t{1} << 62, -3, 0, 7}),
      Array::from<bool>({4}, {true, false, false, true}),
      Array::scalar(f64, 2.5),
      Array::scalar(f32, -1),
      Array::scalar(i64, 42),
      Array::scalar(boolean, 1),
      Array(Type{f32, {0, 3}}),
      Array::zeros(Type{f64, Shape(24, 1)}),  // header of 182 bytes
      Array::zeros(Type{i64, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}}),
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const fs::path p = temp_path("rt" + std::to_string(i) + ".npy");
    io::save_npy(p.string(), cases[i]);
    expect_same(io::load_npy(p.string()), cases[i]);
  }
}

TEST(Npy, WritesWhatNumpyWrites) {
  const fs::path p = temp_path("hdr.npy");
  io::save_npy(p.string(), Array::scalar(f32, 3.5));
  const std::string bytes = read_bytes(p);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.size() % 64, 4u);  // header padded to 64, then one f32
  io::save_npy(p.string(), Array::from<bool>({1}, {true}));
  EXPECT_NE(read_bytes(p).find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(read_bytes(p).find("'shape': (1,)"), std::string::npos);
  EXPECT_EQ(io::describe_npy(Array::scalar(i64, 0)), "i64[] ('<i8')");
}

TEST(Npy, BigEndianAndFortranOrder) {
  const fs::path be = temp_path("be.npy");
  std::string data = raw<double>({1.0, -2.5});
  for (std::size_t e = 0; e < 2; ++e) std::reverse(data.begin() + e * 8, data.begin() + e * 8 + 8);
  write_bytes(be, npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", data));
  Array a = io::load_npy(be.string());
  EXPECT_EQ(a.type(), (Type{f64, {2}}));
  EXPECT_EQ(a.at(0), 1.0);
  EXPECT_EQ(a.at(1), -2.5);

  // Column-major 2x3 [[0,1,2],[3,4,5]] is stored 0,3,1,4,2,5.
  const fs::path f = temp_path("f.npy");
  write_bytes(f, npy_bytes("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }",
                           raw<std::int64_t>({0, 3, 1, 4, 2, 5})));
  Array b = io::load_npy(f.string());
  EXPECT_EQ(b.type(), (Type{i64, {2, 3}}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b.at(i), i);

  // Keys in another order, double quotes, no trailing comma, version 2.0 framing.
  const fs::path v2 = temp_path("v2.npy");
  std::string header = "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}\n";
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  bytes += std::string(1, static_cast<char>(header.size())) + std::string(3, '\0');
  write_bytes(v2, bytes + header + raw<float>({7.f, 8.f}));
  Array c = io::load_npy(v2.string());
  EXPECT_EQ(c.type(), (Type{f32, {2}}));
  EXPECT_EQ(c.at(1), 8.0);
}

TEST(Npy, CorruptFilesAreUserErrors) {
  auto file = [](const std::string& name, const std::string& bytes) {
    const fs::path p = temp_path(name);
    write_bytes(p, bytes);
    return p;
  };
  const std::string f8x2 = raw<double>({1, 2});
  expect_error(temp_path("missing.npy"), "cannot open");
  expect_error(temp_path(""), "is a directory");
  expect_error(file("empty.npy", ""), "magic");
  expect_error(file("magic.npy", "PK\x03\x04 this is a zip file"), "magic");
  expect_error(file("version.npy", std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' ')), "version 9.0");
  expect_error(file("hlen.npy", std::string("\x93NUMPY\x01\x00\xff\xff{}", 12)), "runs past the end");
  expect_error(file("blank.npy", npy_bytes("", f8x2)), "expected '{'");
  expect_error(file("garbage.npy", npy_bytes("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,)}", f8x2)),
               "True or False");
  expect_error(file("i4.npy", npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", f8x2)),
               "dtype '<i4' is not supported");
  expect_error(file("u1.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", "ab")),
               "dtype '|u1'");
  expect_error(file("rec.npy", npy_bytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", f8x2)),
               "structured");
  expect_error(file("neg.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", f8x2)),
               "non-negative dimension");
  expect_error(file("huge.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", f8x2)),
               "too large");
  expect_error(file("big.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", f8x2)),
               "too large");
  // No elements, yet dims whose strides cannot be represented (was accepted, then overflowed).
  expect_error(file("zero-then-huge.npy",
                    npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (0, 4611686018427387904, 4611686018427387904), }", "")),
               "too large");
  expect_error(file("short.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8x2)),
               "needs 24 data bytes but the file has 16");
  expect_error(file("long.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f8x2)),
               "needs 8 data bytes but the file has 16");
  expect_error(file("dup.npy", npy_bytes("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", f8x2)),
               "duplicate key");
  expect_error(file("nokey.npy", npy_bytes("{'descr': '<f8', 'shape': (2,)}", f8x2)), "missing key 'fortran_order'");
  expect_error(file("extra.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", f8x2)),
               "unexpected key");
  expect_error(file("bool.npy", npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02")),
               "not 0 or 1");
}

TEST(Npy, NoTruncationOrHeaderNoiseCrashes) {
  const fs::path good = temp_path("good.npy");
  io::save_npy(good.string(), Array::from<double>({2, 2}, {1, 2, 3, 4}));
  const std::string bytes = read_bytes(good);
  const fs::path p = temp_path("cut.npy");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    write_bytes(p, bytes.substr(0, n));
    EXPECT_THROW(io::load_npy(p.string()), UserError) << "length " << n;
  }
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string noisy = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) noisy[rng() % 80] = static_cast<char>(rng() % 256);
    write_bytes(p, noisy);
    try {
      Array a = io::load_npy(p.string());
      EXPECT_LE(a.nbytes(), bytes.size());
    } catch (const UserError&) {
    }
  }
}

}  // namespace
}  // namespace mg
