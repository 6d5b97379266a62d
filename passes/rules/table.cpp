// The shipped rewrite rules: one table, one line per rule, in priority order (earlier
// rules win). Grammar and meaning: passes/README.md. Each declared label is what the
// checker must prove (`minigrad verify-rules`, tests/passes/test_rules_check.cpp):
// exact = IEEE bit-exact in f32 and f64; real = holds over the reals (fast math only);
// structural = tensor-level data movement, checked by shape rules and a numeric test.
// Elementwise rules apply to float (and bool) values only: i64 arithmetic wraps and is
// not what the proofs model.
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes::rules {

namespace {
constexpr std::string_view kTable = R"RULES(
// ---- additive and multiplicative identities ----
rule "add-neg-zero" [exact]: (add ?x -0) => ?x;
rule "add-zero" [real]: (add ?x 0) => ?x;                       // -0 + 0 = +0 in IEEE
rule "sub-zero" [exact]: (sub ?x 0) => ?x;
rule "zero-sub" [real]: (sub 0 ?x) => (neg ?x);                 // 0 - 0 = +0, -(0) = -0
rule "mul-one" [exact]: (mul ?x 1) => ?x;
rule "mul-neg-one" [exact]: (mul ?x -1) => (neg ?x);
rule "mul-zero" [real]: (mul ?x 0) => 0;                        // inf * 0 = nan, -1 * 0 = -0
rule "div-one" [exact]: (div ?x 1) => ?x;
rule "div-neg-one" [exact]: (div ?x -1) => (neg ?x);
rule "one-div" [exact]: (div 1 ?x) => (reciprocal ?x);
rule "div-self-finite" [exact]: (div ?x ?x) => 1 if nonzero(?x), finite(?x);
rule "div-self" [real]: (div ?x ?x) => 1 if nonzero(?x);
rule "sub-self-finite" [exact]: (sub ?x ?x) => 0 if finite(?x);
rule "sub-self" [real]: (sub ?x ?x) => 0;
rule "mul-self" [exact]: (mul ?x ?x) => (square ?x);
// ---- negation and reciprocals ----
rule "neg-neg" [exact]: (neg (neg ?x)) => ?x;
rule "reciprocal-reciprocal" [real]: (reciprocal (reciprocal ?x)) => ?x;
rule "sub-neg" [exact]: (sub ?x (neg ?y)) => (add ?x ?y);
rule "add-neg" [exact]: (add ?x (neg ?y)) => (sub ?x ?y);
rule "neg-sub" [real]: (neg (sub ?x ?y)) => (sub ?y ?x);
rule "mul-neg-neg" [exact]: (mul (neg ?x) (neg ?y)) => (mul ?x ?y);
rule "div-neg-neg" [exact]: (div (neg ?x) (neg ?y)) => (div ?x ?y);
rule "mul-neg" [exact]: (mul (neg ?x) ?y) => (neg (mul ?x ?y));
rule "div-neg" [exact]: (div (neg ?x) ?y) => (neg (div ?x ?y));
rule "mul-reciprocal" [real]: (mul ?x (reciprocal ?y)) => (div ?x ?y);
rule "div-reciprocal" [real]: (div ?x (reciprocal ?y)) => (mul ?x ?y);
rule "reciprocal-sqrt" [exact]: (reciprocal (sqrt ?x)) => (rsqrt ?x);
rule "div-div" [real]: (div (div ?x ?y) ?z) => (div ?x (mul ?y ?z));
rule "mul-div-cancel" [real]: (mul (div ?x ?y) ?y) => ?x if nonzero(?y);
rule "div-mul-cancel" [real]: (div (mul ?x ?y) ?y) => ?x if nonzero(?y);
rule "add-sub-cancel" [real]: (add (sub ?x ?y) ?y) => ?x;
rule "sub-add-cancel" [real]: (sub (add ?x ?y) ?y) => ?x;
// ---- constant re-association (the folder then evaluates ?a op ?b) ----
rule "mul-const-assoc" [real]: (mul (mul ?x ?a) ?b) => (mul ?x (mul ?a ?b)) if is_const(?a), is_const(?b), not_const(?x);
rule "add-const-assoc" [real]: (add (add ?x ?a) ?b) => (add ?x (add ?a ?b)) if is_const(?a), is_const(?b), not_const(?x);
// ---- distributivity (factoring saves an op) ----
rule "factor-add-mul" [real]: (add (mul ?x ?a) (mul ?y ?a)) => (mul (add ?x ?y) ?a);
rule "factor-sub-mul" [real]: (sub (mul ?x ?a) (mul ?y ?a)) => (mul (sub ?x ?y) ?a);
rule "factor-add-div" [real]: (add (div ?x ?a) (div ?y ?a)) => (div (add ?x ?y) ?a);
// ---- exp, log, sqrt, square, abs ----
rule "log-exp" [real]: (log (exp ?x)) => ?x;
rule "exp-log" [real]: (exp (log ?x)) => ?x if positive(?x);
rule "sqrt-square" [real]: (sqrt (square ?x)) => (abs ?x);
rule "square-sqrt" [real]: (square (sqrt ?x)) => ?x if positive(?x);
rule "abs-abs" [exact]: (abs (abs ?x)) => (abs ?x);
rule "abs-neg" [exact]: (abs (neg ?x)) => (abs ?x);
rule "abs-square" [exact]: (abs (square ?x)) => (square ?x);
rule "square-neg" [exact]: (square (neg ?x)) => (square ?x);
rule "square-abs" [exact]: (square (abs ?x)) => (square ?x);
rule "relu-relu" [exact]: (relu (relu ?x)) => (relu ?x);
rule "relu-abs" [exact]: (relu (abs ?x)) => (abs ?x);
rule "max-self" [exact]: (maximum ?x ?x) => ?x;
rule "min-self" [exact]: (minimum ?x ?x) => ?x;
// ---- selects and logic ----
rule "where-same" [exact]: (where ?c ?x ?x) => ?x;
rule "where-not" [exact]: (where (logical_not ?c) ?x ?y) => (where ?c ?y ?x);
rule "not-not" [exact]: (logical_not (logical_not ?c)) => ?c;
// ---- shape ops (a replacement of another type never applies) ----
rule "permute-permute" [structural]: (permute (permute ?x {perm = ?p}) {perm = ?q}) => (permute ?x {perm = compose(?p, ?q)});
rule "permute-identity" [structural]: (permute ?x {perm = ?p}) => ?x if is_identity(?p);
rule "reshape-same" [structural]: (reshape ?x) => ?x;
rule "reshape-reshape" [structural]: (reshape (reshape ?x) {shape = ?s}) => (reshape ?x {shape = ?s});
rule "reshape-squeeze" [structural]: (reshape (squeeze ?x) {shape = ?s}) => (reshape ?x {shape = ?s});
rule "reshape-unsqueeze" [structural]: (reshape (unsqueeze ?x) {shape = ?s}) => (reshape ?x {shape = ?s});
rule "squeeze-unsqueeze" [structural]: (squeeze (unsqueeze ?x {axes = ?a}) {axes = ?a}) => ?x;
rule "broadcast-same" [structural]: (broadcast_to ?x) => ?x;
rule "broadcast-unit-reshape" [structural]: (broadcast_to (reshape ?x {shape = ?r}) {shape = ?s}) => (broadcast_to ?x {shape = ?s}) if unit_reshape(?x, ?r);
rule "broadcast-broadcast" [structural]: (broadcast_to (broadcast_to ?x) {shape = ?s}) => (broadcast_to ?x {shape = ?s});
rule "flip-flip" [structural]: (flip (flip ?x {axes = ?a}) {axes = ?a}) => ?x;
rule "cast-same" [structural]: (cast ?x) => ?x;
rule "cast-f32-f64-f32" [structural]: (cast (cast ?x {dtype = f64}) {dtype = f32}) => ?x;
rule "slice-concat-first" [structural]: (slice (concat ?a ?b {axis = ?k}) {starts = ?s, stops = ?e, steps = ?t}) => ?a if selects(?s, ?e, ?t, ?k, ?a);
rule "slice-concat-second" [structural]: (slice (concat ?a ?b {axis = ?k}) {starts = ?s, stops = ?e, steps = ?t}) => ?b if selects(?s, ?e, ?t, ?k, ?b, ?a);
rule "slice-concat3-middle" [structural]: (slice (concat ?a ?b ?c {axis = ?k}) {starts = ?s, stops = ?e, steps = ?t}) => ?b if selects(?s, ?e, ?t, ?k, ?b, ?a);
// ---- elementwise ops move before a broadcast (fewer elements computed) ----
rule "neg-broadcast" [structural]: (neg (broadcast_to ?x {shape = ?s})) => (broadcast_to (neg ?x) {shape = ?s});
rule "sqrt-broadcast" [structural]: (sqrt (broadcast_to ?x {shape = ?s})) => (broadcast_to (sqrt ?x) {shape = ?s});
rule "exp-broadcast" [structural]: (exp (broadcast_to ?x {shape = ?s})) => (broadcast_to (exp ?x) {shape = ?s});
rule "reciprocal-broadcast" [structural]: (reciprocal (broadcast_to ?x {shape = ?s})) => (broadcast_to (reciprocal ?x) {shape = ?s});
rule "cast-broadcast" [structural]: (cast (broadcast_to ?x {shape = ?s}) {dtype = ?d}) => (broadcast_to (cast ?x {dtype = ?d}) {shape = ?s});
// ---- reductions of broadcasts (copies(?s, ?a): how many copies of each element the sum sees;
//      a sum of n copies rounds differently from one product, and -0s sum to +0: real) ----
rule "sum-broadcast" [real]: (reduce_sum (broadcast_to ?x {shape = ?s}) {axes = ?a}) => (mul ?x copies(?s, ?a)) if broadcast_axes(?x, ?s, ?a);
rule "mean-broadcast" [real]: (reduce_mean (broadcast_to ?x {shape = ?s}) {axes = ?a}) => ?x if broadcast_axes(?x, ?s, ?a);
// ---- matmul with transposes (rank 2; GEMM may sum in another order: real) ----
rule "transpose-matmul-transpose" [real]: (permute (matmul (permute ?a {perm = [1, 0]}) ?b) {perm = [1, 0]}) => (matmul (permute ?b {perm = [1, 0]}) ?a);
rule "matmul-transposes" [real]: (matmul (permute ?a {perm = [1, 0]}) (permute ?b {perm = [1, 0]})) => (permute (matmul ?b ?a) {perm = [1, 0]});
// ---- softmax family (the fused ops are the stable ones) ----
rule "log-softmax" [real]: (log (softmax ?x {axis = ?k})) => (log_softmax ?x {axis = ?k});
rule "exp-log-softmax" [real]: (exp (log_softmax ?x {axis = ?k})) => (softmax ?x {axis = ?k});
)RULES";
}  // namespace

std::string_view shipped_rules_text() { return kTable; }

}  // namespace mg::passes::rules
