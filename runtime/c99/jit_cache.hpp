// The JIT's on-disk cache of compiled modules, built so that another user cannot make us
// load their code and concurrent or killed processes cannot leave us a broken object:
// - the directory is private: created 0700, and used only when it is a real directory (no
//   symlink) owned by us with no group/other write bit; never a shared world-writable path;
// - every file is first written under a fresh private temp directory (mkdtemp), with
//   exclusive creates, then renamed into place: readers see whole files or none;
// - the compiler runs without a shell (argv, output to a log file we created);
// - a compiled object is recorded with its size and checksum, and verified before dlopen;
//   a truncated or altered object is rebuilt, never loaded.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace mg::rt::c99 {

// A short content hash (FNV-1a, 16 hex digits): cache keys and object checksums.
std::string content_hash(const std::string& bytes);

// The cache directory (see cache_dir() in jit.hpp), created if needed and checked to be
// private; UserError naming the path and what is wrong otherwise.
std::filesystem::path private_cache_dir();

// What a compile produced: the object to dlopen and the source kept beside it.
struct CachedObject {
  std::filesystem::path object, source;
};

// The object cached under `key` if its record verifies (size and checksum), else compiles
// `source` (+ `header` named `header_name`) with `compiler` (argv form) plus `libs`, and
// caches it. Compiler failures are UserErrors quoting its output; I/O failures say so.
CachedObject cached_compile(const std::string& key, const std::string& header_name, const std::string& header,
                            const std::string& source, const std::vector<std::string>& compiler,
                            const std::vector<std::string>& libs);

}  // namespace mg::rt::c99
