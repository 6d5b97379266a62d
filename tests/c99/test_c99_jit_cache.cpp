// The C99 JIT as an attacker meets it: IR names cannot inject code into generated C, the
// cache directory must be private, a corrupted cached object is rebuilt rather than
// loaded, and eight processes compiling one graph at once all succeed.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "minigrad/runtime/c99/jit.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/scratch_dir.hpp"

extern char** environ;

namespace mg {
namespace {

namespace fs = std::filesystem;

// Points the JIT at `dir` for the test's lifetime.
struct CacheAt {
  std::string saved;
  bool had = false;
  explicit CacheAt(const fs::path& dir) {
    if (const char* old = std::getenv("MG_C99_CACHE")) had = true, saved = old;
    setenv("MG_C99_CACHE", dir.c_str(), 1);
  }
  ~CacheAt() {
    if (had) setenv("MG_C99_CACHE", saved.c_str(), 1);
    else unsetenv("MG_C99_CACHE");
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// x * 3 + 1 on f64[4], with the names given.
struct Graph3 {
  ir::Graph g;
  ir::NodeId out;
  explicit Graph3(const std::string& input_name, const std::string& output_name = "") {
    ir::Value x = g.add_input(input_name, Type{f64, {4}});
    out = ir::add(ir::mul(x, ir::full(g, Type{f64, {4}}, 3.0)), ir::full(g, Type{f64, {4}}, 1.0)).id;
    g.outputs = {out};
    g.output_names = {output_name};
  }
};

void expect_runs(const ir::Graph& g, ir::NodeId out, const std::string& input_name) {
  rt::Executable exe = rt::compile(g, {out}, {}, rt::Backend::c99);
  rt::Bindings b;
  b.emplace(input_name, Array::from<double>({4}, {0, 1, 2, -1}));
  auto r = exe.run(b);
  EXPECT_EQ(r[0].to_doubles(), (std::vector<double>{1, 4, 7, -2}));
}

const std::string kPayload = "x */\n#include <stdlib.h>\nstatic int pwned = (abort(), 0);\n/* ";

TEST(C99JitCache, HostileNamesCannotInjectCode) {
  testing::ScratchDir dir("mg_jit_hostile_");
  CacheAt cache(dir / "cache");
  Graph3 t(kPayload, "y */ #define expf(v) (abort(), v) /*");
  expect_runs(t.g, t.out, kPayload);  // compiled and ran: the payload did not execute
  rt::Executable exe = rt::compile(t.g, {t.out}, {}, rt::Backend::c99);
  const std::string src = slurp(exe.source_path());
  EXPECT_EQ(src.find("\n#include <stdlib.h>"), std::string::npos) << src.substr(0, 2000);
  EXPECT_EQ(src.find("#define expf"), std::string::npos);
  EXPECT_EQ(src.find("pwned ="), std::string::npos);

  // The standalone export: its header documents the arguments by name.
  rt::c99::Module m = rt::c99::export_c(t.g, (dir / "out").string(), {.name = "model"});
  const std::string header = slurp(dir / "out" / "model.h");
  // The payload shows up escaped inside the comment, never as a line of its own.
  EXPECT_EQ(header.find("\n#include <stdlib.h>"), std::string::npos) << header;
  EXPECT_EQ(header.find("\nstatic int pwned"), std::string::npos) << header;
  EXPECT_EQ(header.find("*/ #define expf"), std::string::npos) << header;
  EXPECT_NE(header.find("x %2A%2F%0A#include <stdlib.h>"), std::string::npos) << header;  // shown, escaped
  EXPECT_EQ(rt::c99::c_comment_text("a*/b\\\n%"), "a%2A%2Fb%5C%0A%");
}

TEST(C99JitCache, RefusesACacheOthersCanWrite) {
  testing::ScratchDir dir("mg_jit_private_");
  fs::create_directories(dir / "open");
  ::chmod((dir / "open").c_str(), 0777);
  {
    CacheAt cache(dir / "open");
    Graph3 t("x");
    try {
      rt::compile(t.g, {t.out}, {}, rt::Backend::c99);
      FAIL() << "a world-writable cache directory was used";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("writable by others"), std::string::npos) << e.what();
    }
  }
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "link");
  {
    CacheAt cache(dir / "link");
    Graph3 t("x");
    EXPECT_THROW(rt::compile(t.g, {t.out}, {}, rt::Backend::c99), UserError);
  }
  {
    CacheAt cache(dir / "fresh" / "cache");  // created by us: private
    Graph3 t("x");
    expect_runs(t.g, t.out, "x");
    struct stat st {};
    ASSERT_EQ(::stat((dir / "fresh" / "cache").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
}

TEST(C99JitCache, CorruptedObjectIsRebuiltNotLoaded) {
  testing::ScratchDir dir("mg_jit_corrupt_");
  CacheAt cache(dir / "cache");
  Graph3 t("x");
  expect_runs(t.g, t.out, "x");  // compiles; the executable is gone afterwards (no in-process copy)
  int objects = 0;
  for (auto& e : fs::directory_iterator(dir / "cache"))
    if (e.path().extension() == ".so") {
      fs::resize_file(e.path(), fs::file_size(e.path()) / 2);  // truncated: dlopen would SIGBUS
      ++objects;
    }
  ASSERT_EQ(objects, 1);
  expect_runs(t.g, t.out, "x");  // verified, found bad, rebuilt
}

// Eight processes compile and run the same graph into one empty cache at once.
TEST(C99JitCache, EightProcessesCompileOneGraphAtOnce) {
  testing::ScratchDir dir("mg_jit_race_");
  const std::string self = fs::canonical("/proc/self/exe").string();
  const std::string filter = "--gtest_filter=C99JitCache.CompilesAndRunsOneGraph";
  std::string cache_env = "MG_C99_CACHE=" + (dir / "cache").string();
  std::vector<char*> env;
  // The children run one named test: gtest's sharding variables (the c99 suite runs as
  // shards) would leave it in another shard and the child would pass having run nothing.
  for (char** e = environ; *e; ++e) {
    const std::string var(*e);
    if (var.rfind("MG_C99_CACHE=", 0) != 0 && var.rfind("GTEST_TOTAL_SHARDS=", 0) != 0 &&
        var.rfind("GTEST_SHARD_INDEX=", 0) != 0 && var.rfind("GTEST_SHARD_STATUS_FILE=", 0) != 0)
      env.push_back(*e);
  }
  env.push_back(cache_env.data());
  env.push_back(nullptr);
  std::vector<pid_t> pids;
  for (int i = 0; i < 8; ++i) {
    char* argv[] = {const_cast<char*>(self.c_str()), const_cast<char*>(filter.c_str()), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, env.data()), 0);
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failed, 0) << failed << " of 8 processes failed";
}

// One compile and run in the cache the environment names; alone it is a plain JIT test, and
// EightProcessesCompileOneGraphAtOnce runs it in eight processes sharing one fresh cache.
TEST(C99JitCache, CompilesAndRunsOneGraph) {
  Graph3 t("x");
  expect_runs(t.g, t.out, "x");
}

}  // namespace
}  // namespace mg
