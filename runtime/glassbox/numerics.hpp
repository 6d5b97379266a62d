// First-NaN root cause (the glass box, pillar 1). With numerics checks on, an executor
// scans every value it computes; the first non-finite one stops the run with an
// mg::NumericsError naming the ROOT CAUSE: the first node that made NaN/Inf out of finite
// operands (not a downstream node that merely passed it on), or the graph input (user
// data) the non-finite value came from. Inside a fused node the region is re-run op by op
// on the same operands to name the op inside it. Off: the executors never call this file.
// Must not depend on the DSL; both executors (interpreter, C99) build the same report.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/graph.hpp"

namespace mg {

// What one value looked like: counts over all elements, min/max/mean over the finite ones.
struct ValueStats {
  std::string name;  // "%7" or "%x"
  Type type;
  double min = 0, max = 0, mean = 0;
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0, zero = 0, negative = 0;
  // A few elements worth seeing: (multi-index, value). For the result, its first
  // non-finite elements; for an operand of the result's shape, its values at those
  // positions; otherwise its first non-finite elements, or else its largest |x|.
  std::vector<std::pair<std::vector<std::int64_t>, double>> shown;
  std::string text() const;  // one line
};

struct NumericsReport {
  ir::NodeId node = ir::kNoNode;  // the root cause (inside `inside_node`'s region when set)
  std::string op;                 // its op, or "input" / "constant"
  std::string input_name;         // when the value came from a graph input (user data)
  std::string node_text;          // "%7 = log(%6) : f32[4]"
  int ir_line = 0;                // 1-based line in the executed graph's text IR (0: unknown)
  std::string ir_line_text;
  SourceLoc loc;                  // the user's line
  ir::Role role = ir::Role::forward;
  std::string differentiating;    // adjoint nodes: the forward node they differentiate
  std::string inside;             // a fused node's description when the root is in its region
  std::string first_use;          // input reports: the node that first read the bad value
  ValueStats result;
  std::vector<ValueStats> operands;
  std::string hint;               // from the op's registry entry
  std::string executor;           // "interpreter" or "c99"
  std::string text() const;       // the multi-line report
  // The same root cause as `o`: node, op, lines, role, region, input, the result's NaN/Inf
  // counts and positions shown, the operands' non-finite counts. (The finite statistics
  // may differ in the last digits between executors whose kernels round differently, e.g.
  // libm's expf and xsimd's exp; text() shows them.)
  bool same_root_cause(const NumericsReport& o) const;
};

class NumericsError : public UserError {
 public:
  explicit NumericsError(NumericsReport r);
  const NumericsReport& report() const { return report_; }

 private:
  NumericsReport report_;
};

namespace rt::glassbox {

// True when every element is finite (always for integer and bool arrays). Cheap: one
// vectorisable pass over the exponent bits.
bool all_finite(const Array& a);
bool all_finite(DType dt, const void* data, std::int64_t n);

// Whether MG_CHECK_NUMERICS is set to something other than "" or "0".
bool numerics_from_env();

// Called by an executor right after node `id` of `g` produced `out` with a non-finite
// element. `in`: its operands' values, each of the operand's type (views materialised);
// `source[k]`: the node operand k's value was checked as (a view's operand, else the
// operand itself); `roots`: what the executor computes (the text IR printed for them
// gives the line). Throws NumericsError.
[[noreturn]] void raise_nonfinite(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id,
                                  std::span<const Array> in, std::span<const ir::NodeId> source, const Array& out,
                                  const char* executor);

// `r`, raised inside a region of node `id` (a fused node re-run, a loop body run by its
// kernel), restated for the enclosing graph: `inside` names the node, the text-IR line
// is the line in the enclosing graph's text, an adjoint names its forward node there.
NumericsReport in_region(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id, NumericsReport r);

// The 1-based line of node `id` in to_text(g, roots) and the line itself; 0 when absent.
std::pair<int, std::string> ir_line(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id);

}  // namespace rt::glassbox
}  // namespace mg
