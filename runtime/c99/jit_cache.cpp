// The JIT's private, crash- and race-safe object cache; see jit_cache.hpp.
#include "minigrad/runtime/c99/jit_cache.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/c99/jit.hpp"

extern char** environ;

namespace mg::rt::c99 {

namespace fs = std::filesystem;

namespace {

std::string why() { return std::strerror(errno); }

// mkdir -p with 0700 for what we create; the last component must end up private.
void make_private_dir(const fs::path& dir) {
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      throw UserError("C99 backend: cannot create the cache directory " + partial.string() + " (" + why() + ")");
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw UserError("C99 backend: cannot inspect the cache directory " + dir.string() + " (" + why() + ")");
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
    throw UserError("C99 backend: the cache directory " + dir.string() + " is not a plain directory (a symlink?); refusing to use it");
  if (st.st_uid != ::geteuid())
    throw UserError("C99 backend: the cache directory " + dir.string() + " belongs to another user (uid " +
                    std::to_string(st.st_uid) + "); refusing to load code from it (set MG_C99_CACHE)");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    throw UserError("C99 backend: the cache directory " + dir.string() +
                    " is writable by others; refusing to load code from it (chmod 700 it or set MG_C99_CACHE)");
}

// Creates `path` exclusively (no following symlinks) with `data`; UserError on failure.
void write_new_file(const fs::path& path, const std::string& data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw UserError("C99 backend: cannot create " + path.string() + " (" + why() + ")");
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string err = why();
      ::close(fd);
      throw UserError("C99 backend: cannot write " + path.string() + " (" + err + ")");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw UserError("C99 backend: cannot write " + path.string() + " (" + why() + ")");
}

std::string read_file(const fs::path& p, std::size_t max = SIZE_MAX) {
  std::ifstream f(p, std::ios::binary);
  std::string s;
  char buf[65536];
  while (f && s.size() < max) {
    f.read(buf, sizeof buf);
    s.append(buf, static_cast<std::size_t>(f.gcount()));
  }
  if (s.size() > max) s = s.substr(0, max) + "\n[...]";
  return s;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string content_hash(const std::string& bytes) { return hex(fnv1a(bytes)); }

namespace {

void rename_into_place(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw UserError("C99 backend: cannot place " + to.string() + " (" + why() + ")");
}

// Runs argv with stdout and stderr into `log` (created exclusively); returns the exit status.
int run_logged(const std::vector<std::string>& argv, const fs::path& log, const fs::path& cwd) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw UserError("C99 backend: cannot create " + log.string() + " (" + why() + ")");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fd);
  if (rc != 0) throw UserError("C99 backend: cannot run the C compiler '" + argv[0] + "' (" + std::strerror(rc) + ")");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw UserError("C99 backend: lost the C compiler process (" + why() + ")");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The record of a cached object: "<object file name> <size> <checksum>".
struct Record {
  std::string object;
  std::uintmax_t size = 0;
  std::string checksum;
};

bool read_record(const fs::path& path, Record& r) {
  std::istringstream in(read_file(path, 4096));
  return static_cast<bool>(in >> r.object >> r.size >> r.checksum) && r.object.find('/') == std::string::npos;
}

bool verifies(const fs::path& dir, const Record& r) {
  const fs::path obj = dir / r.object;
  std::error_code ec;
  struct stat st {};
  if (::lstat(obj.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return false;
  if (fs::file_size(obj, ec) != r.size || ec) return false;
  return content_hash(read_file(obj)) == r.checksum;
}

// Removes a temp directory and what is in it (our own files only: it is private).
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

fs::path private_cache_dir() {
  fs::path dir = cache_dir();
  make_private_dir(dir);
  return dir;
}

CachedObject cached_compile(const std::string& key, const std::string& header_name, const std::string& header,
                            const std::string& source, const std::vector<std::string>& compiler,
                            const std::vector<std::string>& libs) {
  const fs::path dir = private_cache_dir();
  const fs::path record_path = dir / (key + ".record"), source_path = dir / (key + ".c");
  Record rec;
  if (read_record(record_path, rec) && verifies(dir, rec)) return {dir / rec.object, source_path};

  // Compile in a private temp directory, then move the results into place.
  std::string tmpl = (dir / ("tmp-" + key + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw UserError("C99 backend: cannot create a temp directory in " + dir.string() + " (" + why() + ")");
  TempDir tmp{tmpl};
  write_new_file(tmp.path / header_name, header);
  write_new_file(tmp.path / "module.c", source);
  std::vector<std::string> argv = compiler;
  argv.insert(argv.end(), {"-I.", "module.c", "-o", "module.so"});
  argv.insert(argv.end(), libs.begin(), libs.end());
  const fs::path log = tmp.path / "compile.log";
  if (run_logged(argv, log, tmp.path) != 0) {
    std::string cmd;
    for (auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    // Keep the failing source where the user can read it.
    const fs::path kept = dir / (key + ".failed.c");
    std::error_code ec;
    fs::remove(kept, ec);
    rename_into_place(tmp.path / "module.c", kept);
    throw UserError("C99 backend: the C compiler failed on the generated source " + kept.string() + "\n  command (in " +
                    tmp.path.string() + "): " + cmd + "\n" + read_file(log, 4000));
  }
  const std::string object = read_file(tmp.path / "module.so");
  rec.size = object.size();
  rec.checksum = content_hash(object);
  rec.object = key + "-" + rec.checksum + ".so";  // by content: racing compiles never mix
  rename_into_place(tmp.path / "module.so", dir / rec.object);
  rename_into_place(tmp.path / "module.c", source_path);
  write_new_file(tmp.path / "record", rec.object + " " + std::to_string(rec.size) + " " + rec.checksum + "\n");
  rename_into_place(tmp.path / "record", record_path);
  return {dir / rec.object, source_path};
}

}  // namespace mg::rt::c99
