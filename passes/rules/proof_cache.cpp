// The proof cache's file format (one entry per file, named by the key's hash):
//   minigrad-proof-cache 1
//   verdict proved|refuted
//   work <Z3 units>
//   counterexample <one line>
//   key <byte count>
//   <the key, verbatim>
//   checksum <FNV-1a of every byte above this line>
// Anything else — another header, a short key, a key that differs, a bad checksum — is a miss.
#include "minigrad/passes/rules/proof_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mg::passes::rules {

namespace {

constexpr const char* kHeader = "minigrad-proof-cache 1\n";

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string body_of(const std::string& key, const CachedVerdict& v) {
  std::string cex = v.counterexample;
  for (char& ch : cex)
    if (ch == '\n' || ch == '\r') ch = ' ';
  std::ostringstream o;
  o << kHeader << "verdict " << (v.proved ? "proved" : "refuted") << "\nwork " << v.work << "\ncounterexample " << cex
    << "\nkey " << key.size() << "\n"
    << key << "\n";
  return o.str();
}

}  // namespace

std::string verdict_file_name(const std::string& key) { return hex(fnv1a(key)) + ".proof"; }

std::optional<CachedVerdict> load_verdict(const std::string& dir, const std::string& key) {
  std::ifstream in(std::filesystem::path(dir) / verdict_file_name(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The checksum line is the last one; everything before it is what it covers.
  std::size_t cut = text.rfind("checksum ");
  if (cut == std::string::npos || cut == 0 || text[cut - 1] != '\n') return std::nullopt;
  std::string body = text.substr(0, cut);
  if (text.substr(cut) != "checksum " + hex(fnv1a(body)) + "\n") return std::nullopt;
  std::istringstream s(body);
  std::string line, word;
  if (!std::getline(s, line) || line + "\n" != kHeader) return std::nullopt;
  CachedVerdict v;
  if (!std::getline(s, line)) return std::nullopt;
  if (line == "verdict proved") v.proved = true;
  else if (line != "verdict refuted") return std::nullopt;
  if (!(s >> word >> v.work) || word != "work" || s.get() != '\n') return std::nullopt;
  if (!std::getline(s, line) || line.rfind("counterexample ", 0) != 0) return std::nullopt;
  v.counterexample = line.substr(std::string("counterexample ").size());
  std::size_t n = 0;
  if (!(s >> word >> n) || word != "key" || s.get() != '\n' || n != key.size()) return std::nullopt;
  std::string stored(n, '\0');
  if (!s.read(stored.data(), static_cast<std::streamsize>(n)) || stored != key) return std::nullopt;
  // The body must end right after the key: nothing appended between it and the checksum.
  if (s.get() != '\n' || s.peek() != std::char_traits<char>::eof()) return std::nullopt;
  return v;
}

void store_verdict(const std::string& dir, const std::string& key, const CachedVerdict& v) {
  static std::atomic<unsigned> serial{0};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  std::string body = body_of(key, v);
  std::filesystem::path final = std::filesystem::path(dir) / verdict_file_name(key);
  std::filesystem::path tmp = final;
  tmp += ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << body << "checksum " << hex(fnv1a(body)) << "\n";
    if (!out.flush()) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, final, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace mg::passes::rules
