// The user-facing error channel: every error names the op, what was expected and the
// user's file:line. Internal invariant violations use MG_ASSERT instead.
#pragma once
#include <stdexcept>
#include <string>

#include "minigrad/ir/source_loc.hpp"

namespace mg {

class UserError : public std::runtime_error {
 public:
  UserError(std::string message, SourceLoc loc = {})
      : std::runtime_error(compose(message, loc)), message_(std::move(message)), loc_(loc) {}
  const SourceLoc& where() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  static std::string compose(const std::string& m, const SourceLoc& l) {
    return l.known() ? to_string(l) + ": " + m : m;
  }
  std::string message_;
  SourceLoc loc_;
};

// Shape or dtype mismatch found while building a graph.
class ShapeError : public UserError {
  using UserError::UserError;
};
// Differentiating with respect to / through something that has no derivative.
class GradError : public UserError {
  using UserError::UserError;
};
// A graph that violates an IR invariant (from the verifier).
class VerifyError : public UserError {
  using UserError::UserError;
};

[[noreturn]] void assert_fail(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace mg

#define MG_ASSERT(cond, msg) \
  do { if (!(cond)) ::mg::assert_fail(#cond, __FILE__, __LINE__, (msg)); } while (0)
