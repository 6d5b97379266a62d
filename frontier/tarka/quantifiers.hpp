// LTN's aggregators, the fuzzy quantifiers, over chosen axes of a truth tensor:
//   pmean       (exists): (mean x^p)^(1/p), stable: x = pi_0(x) first;
//   pmean_error (forall): 1 - (mean (1 - x)^p)^(1/p), stable: x = pi_1(x) first;
//   aggreg_min / aggreg_mean: min and mean (LTNtorch's AggregMin / AggregMean);
//   softmin_forall: -T log mean exp(-x / T), a smooth minimum (our addition, not in LTN):
//     it tends to min(x) as T -> 0 and to mean(x) as T -> inf, and every element gets
//     gradient weight softmax(-x / T), so the worst cases dominate.
// Axes as in mg::sum (default: all); keepdim as there. LTNtorch's NaN masking for guarded
// quantifiers is not reproduced: masks are explicit (the caller selects what to quantify).
#pragma once
#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::tarka {

Tensor pmean(const Tensor& x, Axes axes = {}, double p = 2, bool stable = true, bool keepdim = false,
             Loc loc = Loc::current());
Tensor pmean_error(const Tensor& x, Axes axes = {}, double p = 2, bool stable = true, bool keepdim = false,
                   Loc loc = Loc::current());
Tensor aggreg_min(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor aggreg_mean(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor softmin_forall(const Tensor& x, Axes axes = {}, double temperature = 0.1, bool keepdim = false,
                      Loc loc = Loc::current());

}  // namespace mg::frontier::tarka
