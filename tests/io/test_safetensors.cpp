// SafeTensors: round trips of every dtype (0-d, empty, metadata), files written and read
// by an independent Python writer/reader (json + struct only), atomic replacement when a
// save fails or the process dies mid-write, and many corruptions — each a UserError.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "io_test_util.hpp"
#include "minigrad/runtime/io/safetensors.hpp"

namespace mg::io {
namespace {

using test::read_bytes;
using test::TempDir;
using test::user_error_of;
using test::write_bytes;

bool same(const Array& a, const Array& b) {
  return a.type() == b.type() && (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

std::map<std::string, Array> sample_tensors() {
  std::map<std::string, Array> t;
  t["features.0.weight"] = Array::from<float>({2, 3}, {1.5f, -2.f, 0.25f, 3.f, -0.5f, 1e30f});
  t["features.0.bias"] = Array::from<double>({3}, {0.1, -1e300, 2.5});
  t["step"] = Array::scalar(i64, -42);               // 0-d
  t["mask"] = Array::from<bool>({2, 2}, {true, false, false, true});
  t["empty.f32"] = Array::zeros(Type{f32, {0, 5}});  // empty
  t["empty.i64"] = Array::zeros(Type{i64, {0}});
  t["flag"] = Array::scalar(boolean, 1);
  return t;
}

TEST(SafeTensors, RoundTripAllDtypesZeroDimEmptyAndMetadata) {
  TempDir dir;
  auto path = dir.file("model.safetensors");
  auto tensors = sample_tensors();
  std::map<std::string, std::string> meta{{"format", "pt"}, {"note", "epoch 3 — ünïcode"}};
  save_safetensors(path, tensors, meta);
  SafeTensors back = load_safetensors(path);
  EXPECT_EQ(back.metadata, meta);
  ASSERT_EQ(back.tensors.size(), tensors.size());
  for (const auto& [name, a] : tensors) {
    ASSERT_TRUE(back.tensors.count(name)) << name;
    EXPECT_TRUE(same(a, back.tensors.at(name))) << name;
  }
  // Layout: header length a multiple of 8, padded with spaces; no temp files left.
  std::string bytes = read_bytes(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.find_last_not_of(' ', 8 + n - 1), bytes.rfind('}', 8 + n - 1));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
}

TEST(SafeTensors, NoMetadataAndNoTensors) {
  TempDir dir;
  auto path = dir.file("empty.safetensors");
  save_safetensors(path, {});
  std::string bytes = read_bytes(path);
  EXPECT_EQ(bytes.size(), 16u);  // "{}" padded to 8
  EXPECT_EQ(bytes.substr(8), "{}      ");
  SafeTensors back = load_safetensors(path);
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_TRUE(back.metadata.empty());
}

TEST(SafeTensors, OverwriteReplacesTheOldFile) {
  TempDir dir;
  auto path = dir.file("w.safetensors");
  save_safetensors(path, {{"a", Array::from<float>({2}, {1.f, 2.f})}});
  save_safetensors(path, {{"b", Array::from<double>({1}, {3.0})}}, {{"k", "v"}});
  SafeTensors back = load_safetensors(path);
  ASSERT_EQ(back.tensors.size(), 1u);
  EXPECT_EQ(back.tensors.at("b").at(0), 3.0);
  EXPECT_EQ(back.metadata.at("k"), "v");
  EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(SafeTensors, RejectsReservedNameAndMissingStorage) {
  TempDir dir;
  auto path = dir.file("x.safetensors");
  EXPECT_NE(user_error_of([&] { save_safetensors(path, {{"__metadata__", Array::scalar(f32, 1)}}); })
                .find("reserved"), std::string::npos);
  EXPECT_NE(user_error_of([&] { save_safetensors(path, {{"w", Array()}}); }).find("'w' has no storage"),
            std::string::npos);
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_NE(user_error_of([&] { save_safetensors(dir.file("no/such/dir/x"), {}); })
                .find("temporary file"), std::string::npos);
}

// ---- An independent writer and reader: Python's json and struct, nothing else ----------

bool have_python() { return ::access("/usr/bin/python3", X_OK) == 0; }

int run_python(const TempDir& dir, const std::string& script, const std::string& arg) {
  auto py = dir.file("script.py");
  write_bytes(py, script);
  std::string cmd = "/usr/bin/python3 '" + py + "' '" + arg + "'";
  return std::system(cmd.c_str());
}

constexpr const char* kPythonWriter = R"(import json, struct, sys
tensors = [
    ("features.0.weight", "F32", [2, 3], struct.pack("<6f", 1.5, -2.0, 0.25, 3.0, -0.5, 100.0)),
    ("features.0.bias", "F64", [3], struct.pack("<3d", 0.1, -1e300, 2.5)),
    ("step", "I64", [], struct.pack("<q", -42)),
    ("mask", "BOOL", [4], bytes([1, 0, 0, 1])),
    ("half", "F16", [4], struct.pack("<4e", 1.0, -0.5, 65504.0, 2.0 ** -24)),
    ("bhalf", "BF16", [2], struct.pack("<2H", 0x3F80, 0xC040)),
    ("i32", "I32", [2], struct.pack("<2i", -7, 2147483647)),
    ("u8", "U8", [3], bytes([0, 128, 255])),
    ("u64", "U64", [1], struct.pack("<Q", 2 ** 62)),
    ("empty", "F32", [0, 4], b""),
]
header, data = {}, b""
for name, dtype, shape, raw in tensors:  # file order, no alignment, no header padding
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
header["__metadata__"] = {"format": "pt", "writer": "python json+struct"}
h = json.dumps(header).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
)";

TEST(SafeTensors, LoadsFileFromIndependentPythonWriter) {
  ASSERT_TRUE(have_python()) << "/usr/bin/python3 not installed (scripts/setup.sh installs it)";
  TempDir dir;
  auto path = dir.file("py.safetensors");
  ASSERT_EQ(run_python(dir, kPythonWriter, path), 0);
  SafeTensors st = load_safetensors(path);
  EXPECT_EQ(st.metadata.at("format"), "pt");
  EXPECT_EQ(st.metadata.at("writer"), "python json+struct");
  const auto& t = st.tensors;
  EXPECT_TRUE(same(t.at("features.0.weight"),
                   Array::from<float>({2, 3}, {1.5f, -2.f, 0.25f, 3.f, -0.5f, 100.f})));
  EXPECT_TRUE(same(t.at("features.0.bias"), Array::from<double>({3}, {0.1, -1e300, 2.5})));
  EXPECT_TRUE(same(t.at("step"), Array::scalar(i64, -42)));
  EXPECT_TRUE(same(t.at("mask"), Array::from<bool>({4}, {true, false, false, true})));
  // Widened on load: F16/BF16 -> f32, integers -> i64 (exact).
  EXPECT_TRUE(same(t.at("half"), Array::from<float>({4}, {1.f, -0.5f, 65504.f, 0x1p-24f})));
  EXPECT_TRUE(same(t.at("bhalf"), Array::from<float>({2}, {1.f, -3.f})));
  EXPECT_TRUE(same(t.at("i32"), Array::from<std::int64_t>({2}, {-7, 2147483647})));
  EXPECT_TRUE(same(t.at("u8"), Array::from<std::int64_t>({3}, {0, 128, 255})));
  EXPECT_TRUE(same(t.at("u64"), Array::from<std::int64_t>({1}, {std::int64_t{1} << 62})));
  EXPECT_TRUE(same(t.at("empty"), Array::zeros(Type{f32, {0, 4}})));
}

constexpr const char* kPythonReader = R"(import json, struct, sys
b = open(sys.argv[1], "rb").read()
n, = struct.unpack("<Q", b[:8])
assert n % 8 == 0 and (8 + n) % 8 == 0, n
h = json.loads(b[8:8 + n].decode("utf-8"))
data = b[8 + n:]
assert h.pop("__metadata__") == {"epoch": "3"}, "metadata"
def get(name, dtype, shape, fmt):
    e = h[name]
    assert e["dtype"] == dtype and e["shape"] == shape, (name, e)
    lo, hi = e["data_offsets"]
    return struct.unpack("<" + fmt, data[lo:hi])
assert get("w", "F32", [2, 2], "4f") == (1.0, 2.0, 3.0, 4.0)
assert get("d", "F64", [], "d") == (-0.125,)
assert get("n", "I64", [3], "3q") == (-1, 0, 2 ** 40)
assert get("b", "BOOL", [3], "3B") == (1, 0, 1)
assert get("z", "F32", [0], "0f") == ()
ends = sorted(tuple(e["data_offsets"]) for e in h.values())
assert ends[0][0] == 0 and ends[-1][1] == len(data), ends
assert all(ends[i][1] == ends[i + 1][0] for i in range(len(ends) - 1)), ends
print("python reader: ok")
)";

TEST(SafeTensors, IndependentPythonReaderAcceptsOurFile) {
  ASSERT_TRUE(have_python()) << "/usr/bin/python3 not installed (scripts/setup.sh installs it)";
  TempDir dir;
  auto path = dir.file("ours.safetensors");
  save_safetensors(path,
                   {{"w", Array::from<float>({2, 2}, {1.f, 2.f, 3.f, 4.f})},
                    {"d", Array::scalar(f64, -0.125)},
                    {"n", Array::from<std::int64_t>({3}, {-1, 0, std::int64_t{1} << 40})},
                    {"b", Array::from<bool>({3}, {true, false, true})},
                    {"z", Array::zeros(Type{f32, {0}})}},
                   {{"epoch", "3"}});
  EXPECT_EQ(run_python(dir, kPythonReader, path), 0);
}

// ---- Atomicity -------------------------------------------------------------------------

std::map<std::string, Array> big_tensor() {
  return {{"big", Array::full(Type{f32, {1 << 18}}, 7.0)}};  // 1 MiB of data
}

TEST(SafeTensors, FailedWriteMidwayKeepsOldFileAndRemovesTemp) {
  TempDir dir;
  auto path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"old", Array::from<float>({2}, {1.f, 2.f})}});
  const std::string before = read_bytes(path);
  // The file-size limit makes write() fail with EFBIG after the header and part of the
  // data went out: a real failure in the middle of the save.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string msg = user_error_of([&] { save_safetensors(path, big_tensor()); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(msg.find("write failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt.safetensors"});
  EXPECT_EQ(load_safetensors(path).tensors.at("old").at(1), 2.0);
}

TEST(SafeTensors, ProcessKilledMidSaveKeepsOldFile) {
  TempDir dir;
  auto path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"old", Array::from<float>({2}, {1.f, 2.f})}});
  const std::string before = read_bytes(path);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // child: SIGXFSZ (default action: terminate) kills it mid-write
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    rlimit small{};
    ::getrlimit(RLIMIT_FSIZE, &small);
    small.rlim_cur = 4096;
    ::setrlimit(RLIMIT_FSIZE, &small);
    ::signal(SIGXFSZ, SIG_DFL);
    try {
      save_safetensors(path, big_tensor());
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
  EXPECT_EQ(read_bytes(path), before);  // the crash left the previous checkpoint intact
  EXPECT_EQ(load_safetensors(path).tensors.at("old").at(0), 1.0);
}

// ---- Corruptions -----------------------------------------------------------------------

// A file from a raw header text (padded to 8 unless told otherwise) and data bytes.
std::string craft(const std::string& header, const std::string& data, bool pad = true) {
  std::string h = header;
  if (pad) h.append((8 - h.size() % 8) % 8, ' ');
  std::uint64_t n = h.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + h + data;
}

std::string load_error(const TempDir& dir, const std::string& bytes) {
  auto path = dir.file("bad.safetensors");
  write_bytes(path, bytes);
  std::string msg = user_error_of([&] { load_safetensors(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
  return msg;
}

TEST(SafeTensors, EveryTruncationIsAUserError) {
  TempDir dir;
  auto good = dir.file("good.safetensors");
  save_safetensors(good, sample_tensors(), {{"k", "v"}});
  const std::string bytes = read_bytes(good);
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE("truncated to " + std::to_string(len) + " of " + std::to_string(bytes.size()));
    load_error(dir, bytes.substr(0, len));
  }
  // Trailing garbage is also rejected (the data section must be tiled exactly).
  EXPECT_NE(load_error(dir, bytes + "x").find("after the last tensor"), std::string::npos);
}

TEST(SafeTensors, LyingHeaderLength) {
  TempDir dir;
  auto good = dir.file("good.safetensors");
  save_safetensors(good, {{"a", Array::from<float>({3}, {1.f, 2.f, 3.f})}});
  const std::string bytes = read_bytes(good);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  auto with_len = [&](std::uint64_t len) {
    std::string b = bytes;
    std::memcpy(b.data(), &len, 8);
    return b;
  };
  EXPECT_NE(load_error(dir, with_len(~std::uint64_t{0})).find("exceeds"), std::string::npos);
  EXPECT_NE(load_error(dir, with_len(bytes.size() - 7)).find("exceeds"), std::string::npos);
  for (std::uint64_t len : {std::uint64_t{0}, std::uint64_t{1}, n - 1, n + 1, n + 4, n - 8})
    load_error(dir, with_len(len));
}

TEST(SafeTensors, MalformedHeaders) {
  TempDir dir;
  const std::string d12(12, '\0');  // room for one F32 [3]
  auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offs) {
    return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offs + "}";
  };
  auto ok = entry("F32", "[3]", "[0,12]");
  // Sanity: the well-formed version loads.
  write_bytes(dir.file("ok"), craft("{\"a\":" + ok + "}", d12));
  EXPECT_EQ(load_safetensors(dir.file("ok")).tensors.at("a").numel(), 3);
  write_bytes(dir.file("ok2"), craft("{\"a\":" + ok + "}", d12, /*pad=*/false));
  EXPECT_EQ(load_safetensors(dir.file("ok2")).tensors.size(), 1u);

  struct Case {
    std::string header, data, expect;
  };
  const std::vector<Case> cases = {
      {"", "", "does not start with '{'"},
      {"[1,2]", "", "does not start with '{'"},
      {"{not json", "", "not valid JSON"},
      {"{\"a\":" + ok, d12, "not valid JSON"},
      {"{\"a\":" + ok + "}}", d12, "not valid JSON"},
      {"{\"a\":" + ok + ",\"a\":" + ok + "}", d12, "'a' twice"},
      {"{\"a\":" + entry("F32", "[3]", "[0,12]").insert(1, "\"dtype\":\"F32\",") + "}", d12, "twice"},
      {"{\"a\":[[[[1]]]]}", "", "nests deeper"},
      {"{\"a\":5}", "", "not a JSON object"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3]}}", d12, "missing 'data_offsets'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12],\"x\":1}}", d12, "unexpected key 'x'"},
      {"{\"a\":" + entry("F33", "[3]", "[0,12]") + "}", d12, "dtype 'F33' is not supported"},
      {"{\"a\":" + entry("F8_E4M3", "[12]", "[0,12]") + "}", d12, "tensor 'a': dtype 'F8_E4M3'"},
      {"{\"a\":{\"dtype\":7,\"shape\":[3],\"data_offsets\":[0,12]}}", d12, "'dtype' is not a string"},
      {"{\"a\":" + entry("F32", "[-3]", "[0,12]") + "}", d12, "non-negative integers"},
      {"{\"a\":" + entry("F32", "[3.0]", "[0,12]") + "}", d12, "non-negative integers"},
      {"{\"a\":" + entry("F32", "[\"3\"]", "[0,12]") + "}", d12, "non-negative integers"},
      {"{\"a\":" + entry("F32", "3", "[0,12]") + "}", d12, "'shape' is not an array"},
      {"{\"a\":" + entry("F32", "[4294967296,4294967296]", "[0,12]") + "}", d12, "too large"},
      {"{\"a\":" + entry("F32", "[18446744073709551615]", "[0,12]") + "}", d12, "too large"},
      {"{\"a\":" + entry("F32", "[4]", "[0,12]") + "}", d12, "needs 16"},
      {"{\"a\":" + entry("F64", "[3]", "[0,12]") + "}", d12, "needs 24"},
      {"{\"a\":" + entry("F32", "[1000000000]", "[0,4000000000]") + "}", d12, "run past the data"},
      {"{\"a\":" + entry("F32", "[3]", "[12,0]") + "}", d12, "end before they begin"},
      {"{\"a\":" + entry("F32", "[3]", "[0]") + "}", d12, "two non-negative integers"},
      {"{\"a\":" + entry("F32", "[3]", "[0,-12]") + "}", d12, "two non-negative integers"},
      {"{\"a\":" + entry("F32", "[3]", "[4,16]") + "}", d12, "run past the data"},
      {"{\"a\":" + entry("F32", "[3]", "[4,16]") + "}", std::string(16, '\0'), "leave a gap"},
      {"{\"a\":" + entry("F32", "[3]", "[0,12]") + ",\"b\":" + entry("F32", "[1]", "[8,12]") + "}",
       d12, "overlap"},
      {"{\"a\":" + entry("F32", "[3]", "[0,12]") + ",\"b\":" + entry("F32", "[3]", "[0,12]") + "}",
       d12, "overlap"},
      {"{\"a\":" + entry("F32", "[2]", "[0,8]") + "}", d12, "4 bytes after the last tensor"},
      {"{\"__metadata__\":[\"x\"]}", "", "'__metadata__' is not a JSON object"},
      {"{\"__metadata__\":{\"k\":1}}", "", "metadata value for 'k' is not a string"},
      {"{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", "", "'k' twice"},
      {"{\"a\":" + entry("BOOL", "[2]", "[0,2]") + "}", std::string("\x01\x02", 2), "neither 0 nor 1"},
      {"{\"a\":" + entry("U64", "[1]", "[0,8]") + "}", std::string(8, '\xff'), "does not fit in i64"},
      {"{\"a\":\"\xff\xfe\"}", "", "not valid JSON"},  // invalid UTF-8
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    std::string msg = load_error(dir, craft(c.header, c.data));
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
  // Files too short to hold the length field, and a directory.
  EXPECT_NE(load_error(dir, "").find("fewer than the 8-byte"), std::string::npos);
  EXPECT_NE(load_error(dir, "1234567").find("fewer than the 8-byte"), std::string::npos);
  EXPECT_NE(user_error_of([&] { load_safetensors(dir.path); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] { load_safetensors(dir.file("missing")); }).find("cannot open"),
            std::string::npos);
}

TEST(SafeTensors, RandomByteFlipsNeverCrash) {
  TempDir dir;
  auto good = dir.file("good.safetensors");
  save_safetensors(good, sample_tensors(), {{"format", "pt"}});
  const std::string bytes = read_bytes(good);
  auto path = dir.file("flipped.safetensors");
  std::mt19937_64 rng(20240611);
  int errors = 0, loaded = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string b = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k)
      b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    write_bytes(path, b);
    try {
      load_safetensors(path);
      ++loaded;  // flips inside float data are undetectable by design
    } catch (const UserError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 500);
  EXPECT_GT(loaded, 10);
}

}  // namespace
}  // namespace mg::io
