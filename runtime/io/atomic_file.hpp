// Writing a file so that a reader, a crash or kill -9 never sees half of it (DESIGN
// invariant 9): the bytes go to a fresh temp file in the target's directory
// (".<name>.tmp-<pid>-<n>-<r>", created exclusively), are fsynced, and the temp file is
// renamed over the target. A failure leaves the old file untouched and removes the temp;
// temps that killed processes left behind (their pid no longer runs) are removed by the
// next save of the same file.
#pragma once
#include <cstddef>
#include <string>

namespace mg::io {

class AtomicFile {
 public:
  // `ctx` prefixes every error ("save_npy('x.npy')").
  AtomicFile(const std::string& target, const std::string& ctx);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temp file unless committed

  void write(const void* data, std::size_t n);  // UserError on failure
  void commit();                               // fsync, rename over the target, fsync the directory

 private:
  std::string target_, ctx_, dir_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The whole of `bytes` as `path`, atomically.
void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& ctx);

}  // namespace mg::io
