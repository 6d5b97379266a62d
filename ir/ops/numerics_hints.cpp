// OpDef::numerics_hint for every family: why an op can make NaN or Inf out of finite
// operands, in the words a first-NaN report (runtime/glassbox/) shows the user. One
// column over all families, kept in one place so the wording stays consistent; an op
// missing here cannot produce a non-finite value from finite input, or the report says so
// generically.
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops/families.hpp"

namespace mg::ir {

void register_numerics_hints() {
  static constexpr const char* kOverflow = "overflowed: above 3.4e38 in f32 (1.8e308 in f64) a value becomes inf";
  const struct {
    const char* op;
    std::string hint;
  } hints[] = {
      {"log", "log of a negative or zero value (log(0) = -inf, log(x < 0) = NaN)"},
      {"log1p", "log1p of a value <= -1 (log1p(-1) = -inf, below it NaN)"},
      {"sqrt", "sqrt of a negative value"},
      {"rsqrt", "rsqrt of a negative value (NaN) or of zero (inf)"},
      {"reciprocal", "reciprocal of zero"},
      {"div", "division by zero (x/0 = inf, 0/0 = NaN), or inf/inf"},
      {"exp", "exp overflowed above 88.7 in f32 (709.8 in f64)"},
      {"expm1", "expm1 overflowed above 88.7 in f32 (709.8 in f64)"},
      {"pow", "pow of a negative base to a non-integer power (NaN), of zero to a negative power (inf), or it "
              "overflowed"},
      {"square", "square overflowed: |x| above 1.8e19 in f32 (1.3e154 in f64)"},
      {"mul", "the product overflowed, or inf * 0 (NaN)"},
      {"add", std::string("the sum ") + kOverflow + ", or inf + -inf (NaN)"},
      {"sub", std::string("the difference ") + kOverflow + ", or inf - inf (NaN)"},
      {"matmul", std::string("a dot product ") + kOverflow + " (or inf * 0 = NaN inside it)"},
      {"conv2d", std::string("a convolution sum ") + kOverflow},
      {"conv2d_input_grad", std::string("a convolution gradient sum ") + kOverflow},
      {"conv2d_weight_grad", std::string("a convolution gradient sum ") + kOverflow},
      {"reduce_sum", std::string("the sum ") + kOverflow + ", or it mixed inf and -inf"},
      {"reduce_mean", std::string("the sum behind the mean ") + kOverflow + ", or it mixed inf and -inf"},
      {"reduce_prod", std::string("the product ") + kOverflow},
      {"var", std::string("the squared deviations ") + kOverflow},
      {"cumsum", std::string("a running sum ") + kOverflow},
      {"logsumexp", "a row with every value -inf (log of a zero sum)"},
      {"log_softmax", "a row with every value -inf (log of a zero sum)"},
      {"softmax", "a row with every value -inf (0/0)"},
      {"sin", "sin of a huge value lost all precision"},
      {"cos", "cos of a huge value lost all precision"},
      {"max_pool2d", "a window that holds only padding gives -inf"},
      {"full", "the fill value is not finite"},
      {"cast", "a value out of the target type's range (f64 -> f32 above 3.4e38)"},
      {"scatter_add", std::string("an accumulated sum ") + kOverflow},
      {"index_add", std::string("an accumulated sum ") + kOverflow},
  };
  for (auto& h : hints) defined_op(h.op).numerics_hint = h.hint;
}

}  // namespace mg::ir
