// The op registry: everything the system knows about an op, in one entry (DESIGN
// invariant 2). Passes and executors look ops up here and never switch on op names.
// Each family file in ir/ops/ defines its entries in one register_<family>() function,
// called explicitly from register_all_ops() (no static self-registration).
//
// Columns that later issues add (JVP, batching, C99 emission, Z3 semantics) get a field
// here and family defaults in ir/ops/; a registry-walking test reports empty columns.
// The jvp and batch columns are filled in after the entries, one file per family
// (ir/ops/*_transforms.cpp), by register_transform_rules().
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/attrs.hpp"
#include "minigrad/ir/emit_c.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/ir/smt.hpp"

namespace mg::ir {

// Thrown by shape/dtype rules; the builder turns it into a ShapeError naming the op, the
// input types and the user's line.
struct TypeRuleError {
  std::string message;
};

struct Traits {
  bool elementwise = false;  // out[i] depends only on in_k[i]; all operands share a shape
  bool commutative = false;  // binary, f(a,b) == f(b,a)
  bool random = false;       // output depends on a seed attribute, not only on inputs
  // out is operand 0's elements in row-major order, only the shape differs (reshape,
  // squeeze, unsqueeze): an executor may alias the operand's buffer (runtime/view_plan.hpp).
  bool reinterprets = false;
};

// What a reduction's kernel computes when it is a plain fold of its input's elements
// (reduce_kernel.hpp's reducers; mean = the sum over the element count). A fused node of
// kind "reduce" ends with such an op and folds values its region computes on the fly, bit
// for bit as the op's kernel would fold them. `none` for every other op.
enum class Fold : std::uint8_t { none, sum, mean, prod, max, min };

// Runs one of the node's regions (subgraphs) on given arguments; supplied by the
// executor to kernels of ops that own regions.
using RegionRunner =
    std::function<std::vector<Array>(std::size_t region, std::span<const Array> args)>;

struct KernelArgs {
  std::span<const Array* const> in;
  const Node& node;
  Array& out;  // allocated with node.type before the call
  const RegionRunner* run_region = nullptr;
  // Empty, or per operand: how in[k] is read (OpDef::kernel_reads_view accepted it). A
  // non-contiguous entry means in[k] is the view node's operand, not a buffer of the
  // node's operand type: take operand types from the graph, not from in[k].
  std::span<const CView> in_views = {};
};

// Reverse mode inside a region body (passes::vjp, which ir/ cannot call): the grad pass
// hands it to the VJP rules of ops that own regions, as executors hand kernels a RegionRunner.
using RegionVjp = std::function<std::vector<Value>(std::span<const Value> outputs, std::span<const Value> cotangents,
                                                   std::span<const Value> wrt)>;

struct VjpArgs {
  const Node& node;            // the forward node
  Value out;                   // its value (to reuse the forward result, e.g. exp)
  std::span<const Value> in;   // its inputs
  Value cotangent;             // d loss / d out, same type as out
  const RegionVjp* region_vjp = nullptr;  // set by the grad pass
  // Per input: whether the pass needs its gradient (empty: all). Rules may skip the rest
  // (a loop's backward then carries no unneeded accumulators or stacked gradients).
  std::span<const bool> wants = {};
};

// Supplied by the jvp driver to rules of ops that own regions: inlines `region` into the
// graph of `args` (the enclosing graph, or a new loop body the rule is building) and
// returns the tangents of its results, given the args' tangents (invalid: zero);
// `primals` (optional) receives the results' values.
using JvpRegionFn = std::function<std::vector<Value>(const Graph& region, std::span<const Value> args,
                                                     std::span<const Value> tangents, std::vector<Value>* primals)>;

struct JvpArgs {
  const Node& node;                 // the forward node
  Value out;                        // its value
  std::span<const Value> in;        // its inputs
  std::span<const Value> tangents;  // per input: d in / dt, or invalid (zero, or not a float)
  const JvpRegionFn* region = nullptr;
};

// A value with a batch axis (vmap): `axis` is where the batch runs, -1 when not batched.
struct Batched {
  Value value;
  int axis = -1;
};
// Supplied by the vmap driver to rules of ops that own regions: inlines `region` into the
// graph of `args` (the enclosing graph, or a new loop body the rule is building), batched
// along `axes` (-1: not), and returns its results batched.
using BatchRegionFn = std::function<std::vector<Batched>(const Graph& region, std::span<const Value> args,
                                                         std::span<const int> axes)>;

struct BatchArgs {
  const Node& node;           // the per-example node
  std::span<const Value> in;  // its operands, each batched (carrying the batch axis) or not
  std::span<const int> axes;  // per operand: its batch axis, or -1 (the same for every example)
  std::int64_t size;          // the batch size
  const BatchRegionFn* region = nullptr;
};

// Moment propagation (passes/moments.hpp): an op's output mean and variance from its
// operands' means and variances. Diagonal: every operand is taken as independent of the
// others, elementwise too (covariances are dropped; the rules state what else they assume).
enum class MomentKind : std::uint8_t {
  exact,          // the output's true moments, given independent operands (and, where the
                  // rule says so, Gaussian ones: relu, square, exp)
  approximation,  // a stated approximation (Gauss-Hermite quadrature for smooth activations)
  delta,          // first-order delta method: f(mean), sum_k (df/dx_k)^2 var_k
};
const char* moment_kind_name(MomentKind k);
struct MomentArgs {
  Graph& graph;                 // where the rule builds (ops without operands need it)
  const Node& node;             // the node being propagated (attrs, type)
  std::span<const Value> mean;  // per operand: its mean (a deterministic operand: itself)
  std::span<const Value> var;   // per operand: its variance, or invalid (deterministic)
};
struct Moments {
  Value mean, var;  // typed like the node; var invalid only for a deterministic result
  MomentKind kind = MomentKind::exact;
};
using MomentFn = std::function<Moments(const MomentArgs&)>;

using InferFn = std::function<Type(std::span<const Type> in, const Attrs& attrs)>;
using KernelFn = std::function<void(const KernelArgs&)>;
// One window of an elementwise op: `n` contiguous elements of `out` (out_dtype) from `n` of
// each operand (in_dtype, the first operand's), as raw pointers (OpDef::span_kernel).
struct SpanArgs {
  DType out_dtype, in_dtype;
  void* out;
  std::span<const void* const> in;
  std::int64_t n;
};
using SpanKernelFn = std::function<bool(const SpanArgs&)>;
// Returns one cotangent per input; an invalid Value means "no gradient flows here"
// (integer inputs, masks, indices).
using VjpFn = std::function<std::vector<Value>(const VjpArgs&)>;
// The tangent of the node's value given its inputs' tangents (forward mode), written with
// the builder so it differentiates again; an invalid Value means a zero tangent.
using JvpFn = std::function<Value(const JvpArgs&)>;
// The node applied to a batch: builds the batched node(s) and says where the result's batch
// axis is. Called only when at least one operand is batched.
using BatchFn = std::function<Batched(const BatchArgs&)>;

// How the registry-driven tests exercise an op.
enum class Domain : std::uint8_t {
  any,       // standard normal samples
  positive,  // in [0.5, 2]
  unit,      // in (-0.9, 0.9)
  nonzero,   // |x| in [0.3, 2], random sign (kinks at 0 avoided)
};
struct OpTestCase {
  std::vector<Type> inputs;
  Attrs attrs;
};
struct OpTestSpec {
  std::vector<OpTestCase> cases;  // empty: the family default shapes
  Domain domain = Domain::any;
  int grad_order = 2;  // 0: not differentiable, 1: first order only, 2: also second
  // Non-empty: why the VJP is deliberately not the function's derivative (stop_gradient:
  // identity forward, no gradient back), so finite differences cannot check it; with
  // grad_order 0. Tests of the rule's own meaning stand in for the check.
  std::string vjp_not_derivative;
  double tol = 1e-6;   // relative tolerance of the f64 finite-difference check
  // Custom input generator (indices, masks); default draws floats from `domain`.
  std::function<Array(std::size_t input, const Type& type, std::uint64_t seed)> make_input;
  // Ops that own regions: gives the test node (made from a case) its regions.
  std::function<void(Graph& g, NodeId node)> attach_regions;
};

struct OpDef {
  std::string name;
  std::string doc;  // one line: exact semantics and edge cases
  int arity = 1;    // -1: variadic (at least one)
  Traits traits;
  Fold fold = Fold::none;  // reductions that are a plain fold (see Fold)
  std::vector<AttrSpec> attrs;
  InferFn infer;
  KernelFn kernel;
  // Elementwise ops, optionally: `kernel` over one window of raw contiguous spans, with no
  // Array, view or OpenMP region. Fused bodies call it per window (ir/ops/fused.cpp), where
  // `kernel`'s per-call costs rivalled the arithmetic. Computes exactly what `kernel` does,
  // element for element; returns false for dtypes it does not cover (then `kernel` runs).
  SpanKernelFn span_kernel;
  VjpFn vjp;
  std::string not_differentiable;  // why vjp (and jvp) is empty, when it is
  JvpFn jvp;      // forward mode (passes/jvp.hpp); set wherever vjp is, unless no_jvp_rule says why
  std::string no_jvp_rule;  // why jvp is empty although vjp is not (jvp then stops, naming it)
  BatchFn batch;  // vmap (passes/vmap.hpp)
  std::string no_batch_rule;  // why batch is empty, when it is (vmap then stops, naming it)
  // Moment propagation (ir/ops/moment_rules.cpp). Random ops with a rule are noise sources
  // (dropout_mask: mean 1, variance p/(1-p)). Empty: passes/moments stops, naming the op.
  MomentFn moments;
  EmitC emit_c;  // C99: an elementwise expression or a loop nest (ir/emit_c.hpp); `none` says why not
  // Whether `kernel` reads operand `operand` through `view` (a view node's strides over its
  // own operand, EmitC::view) in place of a materialised copy. When every consumer of a
  // view node accepts its view, the interpreter never runs that node (a Linear's weight.T
  // is not copied per run: the GEMM reads it transposed). Empty: no views.
  std::function<bool(const Node& node, std::size_t operand, const CView& view, std::span<const Type> in)>
      kernel_reads_view;
  // Ops that own regions: checks the node's regions against its inputs, attrs and type
  // (throws TypeRuleError); the verifier calls it. Empty for ops without regions.
  std::function<void(const Node& node, std::span<const Type> in)> check_regions;
  // The kernel runs its regions through KernelArgs::run_region (loops; not fused, whose
  // kernel evaluates its body itself): memory plans count the regions' own buffers.
  bool runs_regions = false;
  // Loops (ops whose regions run many times per run of the node): per operand, whether it
  // is loop-invariant and reaches every region as the parameter of the same index; and,
  // for `count` more such operands, the operand index they go to (the same parameter
  // index in every region) and the node's attrs then. passes/hoist moves body nodes that
  // depend only on them out of the loop. Empty: not a loop.
  std::function<std::vector<bool>(const Node& node)> invariant_operands;
  std::function<std::pair<std::size_t, Attrs>(const Node& node, std::size_t count)> add_invariants;
  // Z3 semantics of an elementwise op (ir/smt.hpp), used to prove rewrite rules; empty for
  // tensor-level ops (rules over them are checked structurally).
  SmtFn smt;
  // Glass box (runtime/glassbox/): a short plain-English reason this op can turn finite
  // operands into NaN/Inf ("log of a negative or zero value"); empty: it cannot, or no
  // reason is known. Filled in ir/ops/numerics_hints.cpp.
  std::string numerics_hint;
  // Telemetry: floating-point operations one application does (a multiply-add is 2), from
  // the node (its type, attrs, regions) and its operand types. Exact for matmul and
  // convolutions; an estimate of one per element computed otherwise; 0 for data movement.
  // Filled in ir/ops/flop_counts.cpp.
  std::function<std::int64_t(const Node& node, std::span<const Type> in)> flops;
  OpTestSpec test;
};

// Registry access. The first call registers every family.
const OpDef& op(std::string_view name);  // throws UserError for an unknown name
const OpDef* find_op(std::string_view name);
std::vector<const OpDef*> all_ops();

// For register_<family>() functions and tests that add ops of their own.
OpDef& define_op(std::string name);
// An op already defined by a register function (for columns filled in after the entry).
OpDef& defined_op(std::string_view name);
// Every op defined so far (for a column over all families; unlike all_ops, no registration).
std::vector<OpDef*> defined_ops();

}  // namespace mg::ir
