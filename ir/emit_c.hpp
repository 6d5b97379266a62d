// The C99 column of the op registry (DESIGN invariant 2): how an op is written as C. An
// elementwise op gives a scalar expression (a template with typed operands, or a function
// building one), so chains of them become one loop; any other op writes a loop nest.
// An op with no sensible C says why in `none`. Light header: the emitter (runtime/c99/)
// and the op family files include it; it knows nothing of any particular op.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/type.hpp"

namespace mg::ir {

struct Node;

// Appends C source with indentation; blocks open with `open` and close with `close`.
class CWriter {
 public:
  void line(const std::string& s);
  void open(const std::string& s);  // writes "s {" and indents
  void close(const std::string& tail = "");  // dedents and writes "}" + tail
  void raw(const std::string& s) { out_ += s; }
  std::string fresh(const std::string& prefix);  // a new unique local name
  const std::string& str() const { return out_; }
  // Removes and returns what was written after str() had `size` characters (a block
  // written in place, with this writer's names, to be placed elsewhere).
  std::string take_since(std::size_t size);

 private:
  std::string out_;
  int depth_ = 1;
  int counter_ = 0;
};

// An elementwise expression: `in` are C expressions (plain names or element reads) of
// the operands' element values, `i` the flat element index (for ops of the index, e.g.
// arange); the result must have the C type of `dtype`.
struct CExprArgs {
  const Node& node;
  std::span<const std::string> in;
  std::span<const DType> in_dtypes;
  DType dtype;  // the result's
  std::string i;
};
using CExprFn = std::function<std::string(const CExprArgs&)>;

// How a view node (EmitC::view) reads its operand: element (i_0, ..., i_r-1) of the
// node's result is operand element `offset + sum_k i_k * strides[k]`. Empty strides: the
// operand is an ordinary contiguous row-major buffer of its own type.
struct CView {
  std::int64_t offset = 0;
  std::vector<std::int64_t> strides;
  bool contiguous() const { return strides.empty(); }
};

// A loop nest: `in` names the operand pointers (const T*), `out` the result pointer
// (T*, never aliasing an operand). `fail` is the statement that reports a run-time error
// of this node (an index out of range) and leaves the function.
struct CLoopArgs {
  const Node& node;
  std::span<const std::string> in;
  std::span<const Type> in_types;
  std::string out;
  CWriter& w;
  // The JIT module calls the library's compiled GEMM and conv kernels through pointers
  // instead of carrying their text (c_kernels.hpp); a standalone export has its own copy.
  bool host_kernels = false;
  std::string fail;
  // Adds a file-scope support definition (a static function) once per module, by name.
  const std::function<void(const std::string& name, const std::string& code)>& support;
  // Only for ops with EmitC::reads_views: per operand, how in[k] is read (a view's operand
  // buffer, at strides, instead of a copy; in_types[k] stays the logical type). Empty span
  // or a contiguous CView: plain row-major.
  std::span<const CView> in_views = {};
  // Only for ops with EmitC::scratch: a C expression (unsigned char*, 64-byte aligned in
  // the arena) of the step's scratch bytes; empty when the caller provides none (the op
  // must then still work, e.g. through a slower path).
  std::string scratch = {};
  // Only for ops that own regions: writes region `r`'s body inline (once: the op puts it
  // inside its own loop) reading parameters from `args` and storing results to `results`
  // (C pointer expressions, one per body input / output). The body's buffers live in the
  // step's scratch, after the op's own EmitC::scratch bytes. Supplied by the emitter.
  const std::function<void(std::size_t r, std::span<const std::string> args, std::span<const std::string> results)>*
      region = nullptr;
};
using CLoopFn = std::function<void(const CLoopArgs&)>;

struct EmitC {
  // Elementwise template: {0} {1} {2} operands, {i} flat index, {T} result C type,
  // {f} "f" when the result is f32 (expf vs exp), {c:1.5} a literal of the result type,
  // {a:name} the f64 attribute `name` as such a literal.
  std::string expr;
  CExprFn expr_fn;   // when a template cannot say it (dtype-dependent code)
  CLoopFn loops;     // non-elementwise ops
  std::string none;  // why the op has no C emission, when it has none
  // Capability of a pure re-indexing op (permute, broadcast_to): how its result reads
  // operand 0, or nullopt when it is no strided view for this node. When every consumer
  // has reads_views (or is an elementwise loop and the index needs no division), they read
  // the operand in place and the node's copy loop is never emitted (runtime/c99/schedule).
  std::function<std::optional<CView>(const Node&, std::span<const Type> in)> view;
  // What the node's `fail` statement reports, when not an index out of range (the
  // JIT's error message); a loop body's failures report the loop node.
  std::string fail_what;
  bool reads_views = false;  // `loops` handles CLoopArgs::in_views
  // The per-operand form, for ops that read only some operands through views (a fused
  // matmul prologue): whether `loops` handles in_views[operand].
  std::function<bool(const Node&, std::size_t operand)> reads_view_at;
  // Bytes of scratch `loops` wants while it runs (the emitter plans them in the arena for
  // that step only, so a board's export reports them); 0: none.
  std::function<std::int64_t(const Node&, std::span<const Type> in)> scratch;
  // Whether `loops` writes, for this node, ONE flat loop over its elements with
  // c_flat_for, element i reading operands of the node's element count at element i (and
  // others whole): then it may run over any sub-range, chunk by chunk beside other such
  // loops (the emitter's loop groups). Elementwise expressions are flat by construction.
  std::function<bool(const Node&)> flat;
  bool is_expr() const { return !expr.empty() || static_cast<bool>(expr_fn); }
  bool empty() const { return !is_expr() && !loops; }
};

// ---- helpers for the family files and the emitter --------------------------------

std::string c_type(DType t);                     // float, double, int64_t, uint8_t
std::string c_lit(double v, DType t);            // exact literal of type t (INFINITY, NAN too)
std::string c_int(std::int64_t v);               // an int64_t literal
std::string c_math(const std::string& fn, DType t);  // "exp" -> expf for f32
EmitC c_expr(std::string tmpl);
EmitC c_expr(CExprFn fn);
// A template for float results and another for i64 (wrapping arithmetic) results.
EmitC c_expr(std::string float_tmpl, std::string int_tmpl);
EmitC c_loops(CLoopFn fn);
EmitC c_none(std::string why);
// `static const T name[n] = {...};` holding an array's values (n >= 1 even when empty).
std::string c_array(const std::string& name, const Array& a);
// Expands an expression template (see EmitC::expr).
std::string expand_c_expr(const std::string& tmpl, const CExprArgs& a);

// The C expression of the row-major offset of `flat` (a C expression over an index
// space `shape`) in a layout with `strides`: sum_k ((flat / div_k) % shape_k) * strides_k.
std::string c_offset(const std::string& flat, const Shape& shape, const std::vector<std::int64_t>& strides);

// A loop over [0, n) with index `var`: parallel (OpenMP) when `work` is large, `simd`
// when the body is a plain vectorisable statement list.
void c_for(CWriter& w, const std::string& var, std::int64_t n, std::int64_t work, bool simd);
inline constexpr std::int64_t kCParallelWork = 1 << 16;
// The flat loop of an elementwise node over its n elements (index `i`): c_for(w, "i", n,
// work, true), or, while a CFlatRange is in scope, a plain `omp simd` loop over that range
// (the emitter runs several such loops chunk by chunk inside one parallel loop).
void c_flat_for(CWriter& w, std::int64_t n, std::int64_t work);
class CFlatRange {
 public:
  // `lo`, `hi`: C expressions of the chunk's bounds; loops over n elements only.
  CFlatRange(std::int64_t n, std::string lo, std::string hi);
  ~CFlatRange();
  CFlatRange(const CFlatRange&) = delete;
  CFlatRange& operator=(const CFlatRange&) = delete;
};
bool c_flat_range_active();  // whether a CFlatRange is in scope

// dst[dst_off + sum_k i_k*ds_k] = src[src_off + sum_k i_k*ss_k] over the index space
// `shape` (any rank; strides in elements, any sign).
void c_strided_copy(CWriter& w, const std::string& dst, std::int64_t dst_off, const std::vector<std::int64_t>& ds,
                    const std::string& src, std::int64_t src_off, const std::vector<std::int64_t>& ss,
                    const Shape& shape);

}  // namespace mg::ir
