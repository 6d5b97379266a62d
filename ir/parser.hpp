// The text-IR parser: reads what ir/printer.hpp writes (grammar in ir/README.md) back into
// a Graph. Op nodes are rebuilt through the builder (make_op with the op's schema), so
// attributes are checked and types re-inferred; a printed type that differs from the
// inferred one is an error at its line. Every error, syntactic or semantic, is a
// ParseError carrying file:line:column, what was expected and the offending line with a
// caret; no input (truncated, garbage, deeply nested, huge numbers) crashes or hangs it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/graph.hpp"

namespace mg {

// what(): "file:line:col: expected X, got Y\n<the line>\n   ^" (semantic errors replace
// "expected X, got Y" by their own message). message() is the part after "file:line:col: ".
class ParseError : public UserError {
 public:
  ParseError(std::string message, const char* file, std::uint32_t line, std::uint32_t column);
  const char* what() const noexcept override { return full_.c_str(); }
  const char* file() const { return where().file; }
  std::uint32_t line() const { return where().line; }
  std::uint32_t column() const { return where().column; }

 private:
  std::string full_;
};

}  // namespace mg

namespace mg::ir {

// Parses one graph in text form. The returned graph is verified (ir::verify); verification
// errors are reported as ParseError at the offending line when possible. `filename` is
// only used in messages.
std::unique_ptr<Graph> parse(std::string_view text, std::string_view filename = "<input>");
// Reads and parses a file; ParseError for bad text, UserError if it cannot be read.
std::unique_ptr<Graph> parse_file(const std::string& path);

}  // namespace mg::ir
