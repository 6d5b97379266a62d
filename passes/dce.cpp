// Dead-code elimination: the rewriter's live-only copy; see dce.hpp.
#include "minigrad/passes/dce.hpp"

#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> eliminate_dead_code(const ir::Graph& g) {
  return GraphRewriter(nullptr, /*only_live=*/true).run(g);
}

}  // namespace mg::passes
