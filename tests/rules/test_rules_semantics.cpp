// The registry's Z3 column agrees with the interpreter's kernels: every elementwise op
// with exact semantics, evaluated by Z3 in IEEE f32 and f64 on sample operands (±0, ±inf,
// NaN, ordinary numbers), gives the kernel's result bit for bit (NaN: any NaN). Ops left
// uninterpreted (transcendental) are listed, not silently skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rules/check.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

// Operand positions that take bools, found through the op's type rule (as the checker does).
std::vector<bool> bool_inputs(const ir::OpDef& op, DType dt) {
  int n = op.arity;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<Type> in;
    for (int i = 0; i < n; ++i) in.push_back(Type{mask & (1u << i) ? DType::boolean : dt, {}});
    Attrs a;
    for (const AttrSpec& s : op.attrs)
      if (s.default_value) a.set(s.name, *s.default_value);
    try {
      op.infer(in, a);
      std::vector<bool> out;
      for (int i = 0; i < n; ++i) out.push_back(mask & (1u << i));
      return out;
    } catch (...) {
    }
  }
  return {};
}

TEST(RuleSemantics, EveryElementwiseOpHasAZ3Column) {
  for (const ir::OpDef* d : ir::all_ops()) {
    // cast: its result is of another value sort than its operand, and Z3 checks one sort
    // at a time; rules over casts are structural.
    if (d->traits.elementwise && d->arity > 0 && d->name != "cast") {
      EXPECT_TRUE(static_cast<bool>(d->smt)) << d->name;
    }
  }
}

TEST(RuleSemantics, Z3AgreesWithTheKernelsAtSamplePoints) {
  const double samples[] = {-0.0, 0.0, 1.5, -2.25, INFINITY, -INFINITY, NAN, 3.0, 1e-310};
  int exact_ops = 0;
  std::string uninterpreted;
  for (const ir::OpDef* d : ir::all_ops()) {
    if (!d->traits.elementwise || d->arity <= 0 || !d->smt) continue;
    for (DType dt : {DType::f32, DType::f64}) {
      std::vector<bool> is_bool = bool_inputs(*d, dt);
      if (is_bool.empty()) continue;
      Attrs attrs;
      for (const AttrSpec& s : d->attrs)
        if (s.default_value) attrs.set(s.name, *s.default_value);
      bool interpreted = true;
      std::size_t n = static_cast<std::size_t>(d->arity);
      std::size_t combos = 1;
      for (std::size_t i = 0; i < n; ++i) combos *= std::size(samples);
      for (std::size_t k = 0; k < combos && interpreted; ++k) {
        std::vector<double> args(n);
        std::vector<bool> flags(is_bool);
        std::size_t rest = k;
        for (std::size_t i = 0; i < n; ++i) {
          args[i] = samples[rest % std::size(samples)];
          rest /= std::size(samples);
          if (flags[i]) args[i] = std::isnan(args[i]) ? 1 : args[i] != 0;
        }
        std::unique_ptr<bool[]> fl(new bool[n]);
        for (std::size_t i = 0; i < n; ++i) fl[i] = flags[i];
        auto z = passes::rules::evaluate_smt(*d, args, std::span<const bool>(fl.get(), n), attrs, dt);
        if (!z) {
          interpreted = false;
          break;
        }
        ir::Graph g;
        std::vector<ir::Value> ins;
        rt::Bindings b;
        for (std::size_t i = 0; i < n; ++i) {
          Type t{flags[i] ? DType::boolean : dt, {}};
          std::string name = "a" + std::to_string(i);
          ins.push_back(g.add_input(name, t));
          b[name] = Array::scalar(t.dtype, args[i]);
        }
        ir::Value out = ir::make_op(g, *d, ins, attrs);
        double k_val = rt::compile(g, {out.id}).run(b)[0].at(0);
        std::string where = d->name + "(" + std::to_string(args[0]) + (n > 1 ? ", " + std::to_string(args[1]) : "") +
                            (n > 2 ? ", " + std::to_string(args[2]) : "") + ") in " + std::string(name_of(dt));
        if (std::isnan(k_val)) {
          EXPECT_TRUE(std::isnan(*z)) << where << ": kernel nan, Z3 " << *z;
        } else {
          EXPECT_EQ(std::memcmp(&k_val, &*z, sizeof k_val), 0) << where << ": kernel " << k_val << ", Z3 " << *z;
        }
      }
      if (interpreted && dt == DType::f64) ++exact_ops;
      if (!interpreted && dt == DType::f64) uninterpreted += " " + d->name;
    }
  }
  EXPECT_GE(exact_ops, 20);
  std::printf("uninterpreted (axioms only):%s\n", uninterpreted.c_str());
}

}  // namespace
}  // namespace mg
