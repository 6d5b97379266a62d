// How every example ends on an error: a UserError (bad data file, bad argument, a shape
// mistake) prints its message and exits 1, anything else exits 3 as an internal error —
// never std::terminate. Use as a function-try-block: `int main() try { ... } MG_EXAMPLE_CATCH`.
#pragma once
#include <cstdio>
#include <exception>

#include <minigrad/ir/errors.hpp>

#define MG_EXAMPLE_CATCH                                                 \
  catch (const ::mg::UserError& e) {                                     \
    std::fprintf(stderr, "error: %s\n", e.what());                       \
    return 1;                                                            \
  }                                                                      \
  catch (const std::exception& e) {                                      \
    std::fprintf(stderr, "internal error: %s\n", e.what());              \
    return 3;                                                            \
  }
