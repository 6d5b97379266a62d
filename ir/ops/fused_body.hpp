// The body of a `fused` node, shared by its two halves: fused.cpp (the contract check,
// kinds "elementwise" and "matmul") and fused_reduce.cpp (kind "reduce"). A body is
// evaluated over windows of its loop's flat index space, calling each body op's own
// registry kernel on window-sized buffers, so no value inside it gets a full-size buffer.
// Internal to ir/ops (ir/README.md, "Fused nodes", is the contract); no xtensor here.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/ops/rules.hpp"
#include "minigrad/ir/ops/strided_copy.hpp"

namespace mg::ir::fused {

inline constexpr std::int64_t kTile = 1024;  // elements per window (at most)

// What each body value is, per the contract in ir/README.md.
enum class BodyRole : std::uint8_t {
  tiled,      // a parameter or constant read at the loop index
  whole,      // a parameter or constant read whole (by broadcast_to or matmul)
  broadcast,  // broadcast_to of a whole value to the loop shape
  compute,    // an elementwise op
  matmul,     // the GEMM prologue (kind "matmul")
  reduce,     // the final reduction (kind "reduce"), folding `result` over its axes
};

struct BodyPlan {
  std::vector<BodyRole> role;
  Type loop;                // the loop shape; the dtype of `result`
  NodeId matmul = kNoNode;
  NodeId result = kNoNode;  // the last elementwise value (kind "reduce": the value folded)
  NodeId reduce = kNoNode;  // kind "reduce": the body's last node
};

// Checks `n` (a fused node, inputs typed `in`) against the contract; returns its plan.
// Throws TypeRuleError.
BodyPlan analyze(const Node& n, std::span<const Type> in);
// The same without the parameter check, for a node whose operands are its region's own
// parameter types (the kernel: the verifier checked them against the graph).
BodyPlan analyze_body(const Node& n);

// Evaluates a body's elementwise values over windows [off, off + len) of the loop.
class BodyEval {
 public:
  // `in`: the node's inputs; `out`: the node's result buffer (kind "matmul": the GEMM
  // result the epilogue reads), or null.
  BodyEval(const Node& n, const BodyPlan& p, std::span<const Array* const> in, const Array* out);

  // Per-thread window buffers (taken from a thread-local pool, kept between calls). Set up
  // on every call of the node's kernel, so it allocates little: window buffers are held
  // as pointers, and typed Arrays over them (an Array copy allocates its shape) are made
  // only for ops without a span kernel.
  class Scratch {
   public:
    explicit Scratch(const BodyEval& e);

   private:
    friend class BodyEval;
    struct Slot {
      Array* buf = nullptr;        // the value's window buffer (compute and broadcast values)
      std::int64_t len = -1;       // the window length tile[id] is typed for (-1: none)
      std::int64_t splat_filled = 0;  // a splat's window (one value at every offset) is filled
                                      // once a call: how many leading elements hold it
      const void* ptr = nullptr;   // the value's window this call (raw, for span kernels)
    };
    std::vector<Slot> slot;
    std::vector<Array> tile;  // typed views, made on demand (typed(), window())
    std::vector<const Array*> ins;
    std::vector<const void*> args;  // one op's operand windows
  };

  // Computes the window [off, off + len) (len <= kTile); the result into that window of
  // `dst` (the node's whole result) or, when dst is null, into scratch. Returns the
  // result's window.
  const void* run(Scratch& s, std::int64_t off, std::int64_t len, Array* dst) const;

 private:
  struct Bcast {
    Shape shape;
    std::vector<std::int64_t> sstride;
    std::size_t elem = 0;
    bool splat = false;  // every stride 0: the same value at every offset
  };
  // Value x's window as an Array (a view of a tiled or matmul value, or a computed value's
  // buffer typed to the window, made on demand: span kernels read raw pointers and need none).
  const Array& window(Scratch& s, NodeId x, std::int64_t off, std::int64_t len) const;
  Array& typed(Scratch& s, NodeId x, std::int64_t len) const;

  const Graph& body_;
  const BodyPlan& p_;
  const Array* out_;
  std::vector<const Array*> whole_;
  std::vector<Bcast> bmap_;
};

// C99 of the body's elementwise values at flat loop index `i`: `code` declares one
// temporary per op (with each op's registry expression), `value[id]` is each value's C
// expression. `name` holds the C names of parameters and constants (the caller's).
struct CBody {
  std::string code;
  std::vector<std::string> value;
  std::int64_t ops = 0;
};
// `row` > 0: the loop runs as rows (io) of `row` elements (ii), i = io * row + ii, and
// broadcasts index by io and ii (contiguous or invariant along the row, not gathers).
CBody c_body(const Graph& body, const BodyPlan& p, const std::vector<std::string>& name, const std::string& i,
             std::int64_t row = 0);

// The C names of a body's parameters (the node's inputs) and constants (file-scope
// arrays, added through a.support, named after a.out).
std::vector<std::string> c_names(const Graph& body, const CLoopArgs& a);
using kernels::broadcast_strides;

}  // namespace mg::ir::fused
