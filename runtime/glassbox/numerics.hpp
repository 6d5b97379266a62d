// First-NaN root cause (the glass box, pillar 1). With numerics checks on, an executor
// scans every value it computes; the first non-finite one stops the run with an
// mg::NumericsError naming the ROOT CAUSE: the first node that made NaN/Inf out of finite
// operands (not a downstream node that merely passed it on), or the graph input (user
// data) the non-finite value came from. Inside a fused node the region is re-run op by op
// on the same operands to name the op inside it; inside a loop body (scan, while_loop, any
// op whose kernel runs regions) the node inside the body is named, with the loop step.
// Off: the executors never call this file.
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

// One level of a report's region path: node `node` (of the graph one level up) was running
// its region `region` for the (iteration + 1)-th time in this run of the node; iteration
// -1: a fused node's region (re-run once on the node's operands) or unknown.
struct RegionStep {
  ir::NodeId node = ir::kNoNode;
  std::size_t region = 0;
  std::int64_t iteration = -1;
  bool operator==(const RegionStep&) const = default;
};

struct NumericsReport {
  ir::NodeId node = ir::kNoNode;  // the root cause, in the graph region_path leads to
  // From the executed graph down to the region holding `node`; empty: a top-level node.
  std::vector<RegionStep> region_path;
  std::string op;                 // its op, or "input" / "constant"
  std::string input_name;         // when the value came from a graph input (user data)
  std::string node_text;          // "%7 = log(%6) : f32[4]"
  int ir_line = 0;                // 1-based line in the executed graph's text IR (0: unknown)
  std::string ir_line_text;
  SourceLoc loc;                  // the user's line
  ir::Role role = ir::Role::forward;
  std::string differentiating;    // adjoint nodes: the forward node they differentiate
  std::string inside;             // the enclosing nodes (innermost first) when region_path is set
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

// `r`, raised inside region `step.region` of node `step.node` of `g` (a fused node re-run,
// a loop body run by its kernel), restated for `g`: `step` joins the region path; the
// node's text, text-IR line (in to_text(g, roots), regions printed under their node),
// `inside` and, for an adjoint, the forward node it differentiates (wherever it is) are
// computed afresh. `in`/`source`: the node's operands as raise_nonfinite takes them; a
// report of a non-finite region parameter becomes the report of the graph input or
// constant among them that carried it in. Throws NumericsError.
[[noreturn]] void raise_in_region(const ir::Graph& g, std::span<const ir::NodeId> roots, RegionStep step,
                                  NumericsReport r, std::span<const Array> in, std::span<const ir::NodeId> source);

// The error path of an executor that found a non-finite value inside a region of node `id`
// without its values (the C99 backend: a check compiled into a loop body): runs the node's
// kernel again on its operands with every region run by the interpreter with checks on,
// and raises that report (as raise_in_region). Returns when the re-run stays finite.
void rerun_regions_checked(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id,
                           std::span<const Array> in, std::span<const ir::NodeId> source, const char* executor);

// A report naming node `r.node` at `r.region_path` (the rest of `r` kept), its text,
// text-IR line, `inside` and `differentiating` filled in for to_text(g, roots).
NumericsReport locate(const ir::Graph& g, std::span<const ir::NodeId> roots, NumericsReport r);

// The 1-based line of node `id` in to_text(g, roots) and the line itself; 0 when absent.
std::pair<int, std::string> ir_line(const ir::Graph& g, std::span<const ir::NodeId> roots, ir::NodeId id);

}  // namespace rt::glassbox
}  // namespace mg
