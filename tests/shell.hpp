// Shell commands for tests that compile exported C: run one, find a tool, and compile
// through ccache where it is installed.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace mg::testing {

// Runs `cmd` in /bin/sh; its stdout and stderr go to *out. The exit status as pclose gives it.
inline int sh(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::string s;
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) s.append(buf, n);
  const int rc = pclose(p);
  if (out) *out = s;
  return rc;
}

inline bool have(const std::string& tool) { return sh("command -v " + tool + " >/dev/null") == 0; }

// Runs a compile `command` in `dir`, through ccache where it is installed. The exports these
// tests compile (-pedantic -Werror, several targets) are seconds of cc that a re-run of the
// suite spends again on unchanged C; ccache replays a compile it has seen with the same
// compiler, options, source and headers, warnings included, and never caches a failure, so
// changed C is compiled and checked every time. Name the files relative to `dir` (ccache
// then hits whatever scratch directory the test got). MG_TEST_CCACHE=0 compiles every time.
inline int compile_in(const std::filesystem::path& dir, const std::string& command, std::string* out = nullptr) {
  static const bool use_ccache = [] {
    const char* env = std::getenv("MG_TEST_CCACHE");
    return !(env && std::string(env) == "0") && have("ccache");
  }();
  return sh("cd '" + dir.string() + "' && " + (use_ccache ? "ccache " : "") + command, out);
}

}  // namespace mg::testing
