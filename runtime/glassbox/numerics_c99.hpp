// First-NaN root cause for the C99 backend: the compiled module checks each loop's value
// (c99::Options::check_numerics) and returns the first node whose value is not finite;
// this reads that node's operands from the arena and the entry's arguments (still intact:
// the entry returned right after the loop) and gives the interpreter's report. An inlined
// elementwise chain has no buffers: its values are recomputed with the registry kernels
// from the loop's operands, in order, so the report names the op in the chain that made
// the first NaN/Inf, as the interpreter would. A check inside a loop body returns its site
// (Module::numerics_sites): the loop node's operands are read the same way and the loop
// re-run with its regions in the checking interpreter, which names the body's node and
// step; the site itself (compiled in) names the node should that re-run stay finite.
#pragma once
#include <cstddef>
#include <span>

#include "minigrad/runtime/c99/module.hpp"

namespace mg::rt::glassbox {

// `code`: the entry's -rc - 1 (a node id, or graph size + a site index); `args`: the
// pointers the entry was called with (one per Module::args), `arena` its arena.
// Throws NumericsError.
[[noreturn]] void raise_c99_nonfinite(const ir::Graph& g, const c99::Module& m, std::size_t code, const std::byte* arena,
                                      std::span<void* const> args);

}  // namespace mg::rt::glassbox
