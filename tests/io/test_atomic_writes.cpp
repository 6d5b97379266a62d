// Every file we write is replaced atomically (runtime/io/atomic_file.hpp): .npy and C99
// exports as well as SafeTensors, and temps left by a killed save are cleaned by the next.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/io/atomic_file.hpp"
#include "minigrad/runtime/io/npy.hpp"
#include "minigrad/runtime/io/safetensors.hpp"
#include "tests/scratch_dir.hpp"

namespace mg {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

pid_t a_dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;  // reaped: no process has it (until the kernel reuses it, rare in a test)
}

TEST(AtomicWrites, NpyReplacesTheFileWhole) {
  testing::ScratchDir dir("mg_atomic_npy_");
  const std::string path = (dir / "a.npy").string();
  io::save_npy(path, Array::from<double>({2}, {1, 2}));
  io::save_npy(path, Array::from<double>({3}, {4, 5, 6}));
  EXPECT_EQ(io::load_npy(path).to_doubles(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(entries(dir / ""), (std::vector<std::string>{"a.npy"}));  // no temp left behind
  // A failed save (unwritable directory) leaves the old file intact.
  EXPECT_THROW(io::save_npy((dir / "missing" / "b.npy").string(), Array::from<double>({1}, {1})), UserError);
}

TEST(AtomicWrites, StaleTempsOfKilledSavesAreRemoved) {
  testing::ScratchDir dir("mg_atomic_stale_");
  const std::string stale = "." + std::string("w.safetensors") + ".tmp-" + std::to_string(a_dead_pid()) + "-0-42";
  const std::string live = ".w.safetensors.tmp-" + std::to_string(::getppid()) + "-0-7";  // a running process's
  std::ofstream(dir / stale) << "half a file";
  std::ofstream(dir / live) << "someone else's save in progress";
  io::save_safetensors((dir / "w.safetensors").string(), {{"x", Array::from<double>({1}, {1})}});
  EXPECT_EQ(entries(dir / ""), (std::vector<std::string>{live, "w.safetensors"}));
}

}  // namespace
}  // namespace mg
