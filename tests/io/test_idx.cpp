// IDX reading: small files written here (plain and gzip through zlib) round-trip for
// every type code; truncated and corrupt files are UserErrors; the real Fashion-MNIST
// files load with the known sizes, class balance, first labels and pixel statistics.
#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cmath>

#include "io_test_util.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"

namespace mg::io {
namespace {

using test::read_bytes;
using test::TempDir;
using test::user_error_of;
using test::write_bytes;

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string idx_header(unsigned char code, const std::vector<std::uint32_t>& dims) {
  std::string out{'\0', '\0', static_cast<char>(code), static_cast<char>(dims.size())};
  for (auto d : dims) put_be(out, d, 4);
  return out;
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// u8 [3,2,2] = 0, 17, 34, ..., 187 (value 17 * i).
std::string u8_file() {
  std::string s = idx_header(0x08, {3, 2, 2});
  for (int i = 0; i < 12; ++i) s.push_back(static_cast<char>(17 * i));
  return s;
}

TEST(Idx, U8PlainAndGzipRoundTrip) {
  TempDir dir;
  write_bytes(dir.file("a.idx"), u8_file());
  write_gz(dir.file("a.idx.gz"), u8_file());
  write_gz(dir.file("gz-without-suffix"), u8_file());  // detected by magic, not by name
  for (const char* name : {"a.idx", "a.idx.gz", "gz-without-suffix"}) {
    SCOPED_TRACE(name);
    Array f = read_idx(dir.file(name), f32, 1.0 / 255.0);
    EXPECT_EQ(f.type(), (Type{f32, {3, 2, 2}}));
    for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(f.data<float>()[i], static_cast<float>(17 * i / 255.0));
    Array l = read_idx(dir.file(name), i64);
    EXPECT_EQ(l.type(), (Type{i64, {3, 2, 2}}));
    for (int i = 0; i < 12; ++i) EXPECT_EQ(l.data<std::int64_t>()[i], 17 * i);
    Array d = read_idx(dir.file(name), f64);
    EXPECT_EQ(d.data<double>()[11], 187.0);
  }
}

TEST(Idx, AllTypeCodesBigEndian) {
  TempDir dir;
  std::string s8 = idx_header(0x09, {3});
  s8 += std::string{'\xff', '\x7f', '\x80'};  // -1, 127, -128
  write_gz(dir.file("i8.gz"), s8);
  EXPECT_EQ(read_idx(dir.file("i8.gz"), i64).to_doubles(), (std::vector<double>{-1, 127, -128}));

  std::string s16 = idx_header(0x0B, {2});
  put_be(s16, 0xfffe, 2);  // -2
  put_be(s16, 0x1234, 2);
  write_bytes(dir.file("i16"), s16);
  EXPECT_EQ(read_idx(dir.file("i16"), i64).to_doubles(), (std::vector<double>{-2, 0x1234}));

  std::string s32 = idx_header(0x0C, {2, 1});
  put_be(s32, 0x80000000u, 4);
  put_be(s32, 70000, 4);
  write_bytes(dir.file("i32"), s32);
  Array a32 = read_idx(dir.file("i32"), i64);
  EXPECT_EQ(a32.shape(), (Shape{2, 1}));
  EXPECT_EQ(a32.to_doubles(), (std::vector<double>{-2147483648.0, 70000}));

  std::string sf = idx_header(0x0D, {2});
  put_be(sf, std::bit_cast<std::uint32_t>(1.5f), 4);
  put_be(sf, std::bit_cast<std::uint32_t>(-0.25f), 4);
  write_bytes(dir.file("f32"), sf);
  EXPECT_EQ(read_idx(dir.file("f32"), f64, 2.0).to_doubles(), (std::vector<double>{3.0, -0.5}));

  std::string sd = idx_header(0x0E, {1});
  put_be(sd, std::bit_cast<std::uint64_t>(1e-300), 8);
  write_gz(dir.file("f64.gz"), sd);
  EXPECT_EQ(read_idx(dir.file("f64.gz"), f64).to_doubles(), (std::vector<double>{1e-300}));

  // Float data cannot become i64; an i64 target takes no scale; bool is no target.
  EXPECT_NE(user_error_of([&] { read_idx(dir.file("f32"), i64); }).find("cannot read f32 data as i64"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] { read_idx(dir.file("i16"), i64, 0.5); }).find("scale"), std::string::npos);
  EXPECT_NE(user_error_of([&] { read_idx(dir.file("i16"), boolean); }).find("bool"), std::string::npos);
}

TEST(Idx, EveryTruncationIsAUserErrorPlainAndGzip) {
  TempDir dir;
  const std::string plain = u8_file();
  auto path = dir.file("t");
  for (std::size_t len = 0; len < plain.size(); ++len) {
    SCOPED_TRACE("plain truncated to " + std::to_string(len));
    write_bytes(path, plain.substr(0, len));
    std::string msg = user_error_of([&] { read_idx(path, f32); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  // Truncating the compressed stream anywhere (including its CRC/length trailer).
  write_gz(dir.file("full.gz"), plain);
  const std::string gz = read_bytes(dir.file("full.gz"));
  for (std::size_t len = 2; len < gz.size(); ++len) {
    SCOPED_TRACE("gzip truncated to " + std::to_string(len) + " of " + std::to_string(gz.size()));
    write_bytes(path, gz.substr(0, len));
    user_error_of([&] { read_idx(path, f32); });
  }
}

TEST(Idx, CorruptFiles) {
  TempDir dir;
  auto path = dir.file("c");
  auto error_for = [&](const std::string& bytes) {
    write_bytes(path, bytes);
    return user_error_of([&] { read_idx(path, f32); });
  };
  std::string bad_magic = u8_file();
  bad_magic[1] = 1;
  EXPECT_NE(error_for(bad_magic).find("bad magic"), std::string::npos);
  std::string bad_code = u8_file();
  bad_code[2] = 0x0A;
  EXPECT_NE(error_for(bad_code).find("unknown IDX type code 10"), std::string::npos);
  EXPECT_NE(error_for(idx_header(0x08, {})).find("ndim is 0"), std::string::npos);
  EXPECT_NE(error_for(u8_file() + "x").find("unexpected bytes after"), std::string::npos);
  // A lying header: claims 2^31 x 2^31 bytes in a tiny file -> truncated, no huge allocation.
  EXPECT_NE(error_for(idx_header(0x08, {0x80000000u, 0x80000000u}) + "abc").find("truncated"),
            std::string::npos);
  EXPECT_NE(error_for(idx_header(0x0E, {0xffffffffu, 0xffffffffu, 0xffffffffu})).find("too large"),
            std::string::npos);
  // gzip with a damaged CRC trailer, and with damaged deflate data.
  write_gz(dir.file("ok.gz"), u8_file());
  std::string gz = read_bytes(dir.file("ok.gz"));
  std::string crc = gz;
  crc[crc.size() - 6] ^= 0x5a;
  EXPECT_NE(error_for(crc).find("gzip"), std::string::npos);
  std::string body = gz;
  body[12] ^= 0xff;
  body[13] ^= 0xff;
  error_for(body);
  EXPECT_NE(user_error_of([&] { read_idx(dir.file("missing"), f32); }).find("cannot open"),
            std::string::npos);
}

// ---- The real data set (Debian package dataset-fashion-mnist) -----------------------------

const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

TEST(FashionMnist, LoadsRealFiles) {
  if (!std::filesystem::exists(kFashionDir + "/train-labels-idx1-ubyte.gz"))
    FAIL() << "dataset-fashion-mnist is not installed (scripts/setup.sh installs it)";
  FashionMnist ds = load_fashion_mnist();
  EXPECT_EQ(ds.train_images.type(), (Type{f32, {60000, 784}}));
  EXPECT_EQ(ds.train_labels.type(), (Type{i64, {60000}}));
  EXPECT_EQ(ds.test_images.type(), (Type{f32, {10000, 784}}));
  EXPECT_EQ(ds.test_labels.type(), (Type{i64, {10000}}));
  // First labels, as in the files (zcat train-labels-idx1-ubyte.gz | xxd): 9 ankle boot,
  // 0 T-shirt, 0, 3 dress, ...
  const std::vector<std::int64_t> train_first{9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9};
  const std::vector<std::int64_t> test_first{9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5};
  for (std::size_t i = 0; i < train_first.size(); ++i) {
    EXPECT_EQ(ds.train_labels.data<std::int64_t>()[i], train_first[i]) << i;
    EXPECT_EQ(ds.test_labels.data<std::int64_t>()[i], test_first[i]) << i;
  }
  // Balanced classes: 6000 per class in train, 1000 in test.
  std::vector<int> train_count(10), test_count(10);
  for (auto y : ds.train_labels.span<std::int64_t>()) ++train_count.at(static_cast<std::size_t>(y));
  for (auto y : ds.test_labels.span<std::int64_t>()) ++test_count.at(static_cast<std::size_t>(y));
  EXPECT_EQ(train_count, std::vector<int>(10, 6000));
  EXPECT_EQ(test_count, std::vector<int>(10, 1000));
  // Pixels in [0, 1], both ends reached; the training set's statistics are the widely
  // quoted Fashion-MNIST normalisation constants (mean 0.2860, std 0.3530).
  float lo = 1, hi = 0;
  for (float v : ds.train_images.span<float>()) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 0.f);
  EXPECT_EQ(hi, 1.f);
  Normalizer norm = fit_normalizer(ds.train_images);
  EXPECT_NEAR(norm.mean.at(0), 0.2860, 1e-4);
  EXPECT_NEAR(norm.stddev.at(0), 0.3530, 1e-4);
  EXPECT_EQ(ds.train_images.reshaped({60000, 1, 28, 28}).shape(), (Shape{60000, 1, 28, 28}));
}

TEST(FashionMnist, MissingOrInconsistentDirectory) {
  TempDir dir;
  EXPECT_NE(user_error_of([&] { load_fashion_mnist(dir.path); }).find("train-images-idx3-ubyte"),
            std::string::npos);
  // Plain (uncompressed) files are found too; a label count that disagrees is an error.
  std::string images = idx_header(0x08, {2, 28, 28}) + std::string(2 * 784, '\x10');
  std::string labels = idx_header(0x08, {3}) + std::string{'\1', '\2', '\3'};
  for (const char* split : {"train", "t10k"}) {
    write_bytes(dir.file(std::string(split) + "-images-idx3-ubyte"), images);
    write_bytes(dir.file(std::string(split) + "-labels-idx1-ubyte"), labels);
  }
  EXPECT_NE(user_error_of([&] { load_fashion_mnist(dir.path); }).find("there are 2 images"),
            std::string::npos);
  labels = idx_header(0x08, {2}) + std::string{'\1', '\x0c'};
  write_bytes(dir.file("train-labels-idx1-ubyte"), labels);
  EXPECT_NE(user_error_of([&] { load_fashion_mnist(dir.path); }).find("label 12 at index 1"),
            std::string::npos);
  labels = idx_header(0x08, {2}) + std::string{'\1', '\2'};
  write_bytes(dir.file("train-labels-idx1-ubyte"), labels);
  write_bytes(dir.file("t10k-labels-idx1-ubyte"), labels);
  FashionMnist ds = load_fashion_mnist(dir.path);
  EXPECT_EQ(ds.test_images.shape(), (Shape{2, 784}));
  EXPECT_FLOAT_EQ(ds.test_images.data<float>()[0], 16.f / 255.f);
}

}  // namespace
}  // namespace mg::io
