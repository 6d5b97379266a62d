// Atomic file replacement; see atomic_file.hpp.
#include "minigrad/runtime/io/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "minigrad/ir/errors.hpp"

namespace mg::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

// Removes "<dir>/.<base>.tmp-<pid>-..." files whose pid no longer runs (a killed save).
void remove_stale_temps(const std::string& dir, const std::string& base) {
  const std::string prefix = "." + base + ".tmp-";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || digits > 9 || digits >= rest.size() || rest[digits] != '-') continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, digits)));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

}  // namespace

AtomicFile::AtomicFile(const std::string& target, const std::string& ctx) : target_(target), ctx_(ctx) {
  auto slash = target.rfind('/');
  dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  if (base.empty()) throw UserError(ctx + ": the path names a directory, not a file");
  remove_stale_temps(dir_, base);
  static std::atomic<std::uint64_t> counter{0};
  std::random_device rd;
  const std::string prefix = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_ = prefix + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
           std::to_string(rd() % 1000000);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    if (errno != EEXIST) throw UserError(ctx + ": cannot create a temporary file in '" + dir_ + "': " + errno_text());
  }
  throw UserError(ctx + ": cannot find a free temporary file name in '" + dir_ + "'");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      throw UserError(ctx_ + ": write failed: " + errno_text());
    }
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) throw UserError(ctx_ + ": fsync failed: " + errno_text());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw UserError(ctx_ + ": close failed: " + errno_text());
  if (::rename(tmp_.c_str(), target_.c_str()) != 0)
    throw UserError(ctx_ + ": cannot rename the temporary file over the target: " + errno_text());
  committed_ = true;
  // Make the rename itself durable. Best effort: the new file is already in place, and some
  // file systems refuse fsync on directories.
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& ctx) {
  AtomicFile f(path, ctx);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

}  // namespace mg::io
