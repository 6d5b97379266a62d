// Where a node came from: the user's line, captured by std::source_location in the DSL.
// Invariant: `file` points to storage that outlives every graph (string literals from
// std::source_location, or strings interned by intern_file for parsed IR).
#pragma once
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace mg {

struct SourceLoc {
  const char* file = "";
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  static SourceLoc from(const std::source_location& l) {
    return {l.file_name(), static_cast<std::uint32_t>(l.line()),
            static_cast<std::uint32_t>(l.column())};
  }
  bool known() const { return line != 0; }
  bool operator==(const SourceLoc& o) const;
};

std::string to_string(const SourceLoc& l);  // "file.cpp:12" or "<unknown>"
const char* intern_file(std::string_view file);

// The location new nodes get when the builder is not told one. The DSL sets it to the
// user's line for the duration of one API call, so composite ops and VJP rules stamp every
// node they create with the line that asked for them.
SourceLoc ambient_loc();
class LocScope {
 public:
  // By default only the outermost scope takes effect (the user's call, not the library's
  // nested ones); `force` makes this scope win, e.g. the grad pass stamping adjoint nodes
  // with their forward node's line.
  explicit LocScope(SourceLoc loc, bool force = false);
  ~LocScope();
  LocScope(const LocScope&) = delete;
  LocScope& operator=(const LocScope&) = delete;

 private:
  SourceLoc saved_;
  bool active_;
};

}  // namespace mg
