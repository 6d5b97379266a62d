// Standalone C99 export: a .c/.h pair for a board — no malloc (one static arena sized by
// the memory plan), no BLAS (our own GEMM loop nest), no dependency beyond <math.h> and
// <stdint.h>; trained weights optionally embedded as `static const` arrays.
#pragma once
#include <string>
#include <vector>

#include "minigrad/runtime/c99/module.hpp"

namespace mg::rt::c99 {

struct ExportOptions {
  std::string name = "model";   // <dir>/<name>.c, <dir>/<name>.h, entry <name>_run
  std::string weights{};        // a SafeTensors file: graph inputs of these names are embedded
  // Refuse (UserError, nothing written) when the static memory the target needs — arena,
  // embedded weights and constants — exceeds this many bytes. 0: no limit.
  std::uint64_t max_bytes = 0;
};

// Writes the pair (each file atomically) and returns what was emitted (sizes included).
// The outputs are g.outputs; `state` pairs inputs with their next values (training).
Module export_c(const ir::Graph& g, const std::string& dir, const ExportOptions& options,
                const std::vector<StateUpdate>& state = {});

}  // namespace mg::rt::c99
