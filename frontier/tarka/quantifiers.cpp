// LTNtorch's aggregators (AggregPMean, AggregPMeanError, AggregMin, AggregMean) and a
// softmin forall, written with DSL ops so they differentiate to any order.
#include "minigrad/frontier/tarka/quantifiers.hpp"

#include <cmath>
#include <string>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/frontier/tarka/connectives.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::tarka {

namespace {
void check_p(double p, const char* what, const Loc& loc) {
  if (!(p >= 1) || !std::isfinite(p))
    throw UserError(std::string(what) + ": expected an exponent p >= 1 (finite), got " + std::to_string(p),
                    SourceLoc::from(loc));
}
// Elements reduced over `axes` of x (all when axes.all).
double count(const Tensor& x, const Axes& axes) {
  if (axes.all) return static_cast<double>(x.numel());
  double n = 1;
  for (auto a : axes.list) n *= static_cast<double>(x.size(a));
  return n;
}
}  // namespace

Tensor pmean(const Tensor& x, Axes axes, double p, bool stable, bool keepdim, Loc loc) {
  check_p(p, "pmean (exists)", loc);
  LocScope s(SourceLoc::from(loc));
  Tensor v = stable ? pi_0(x, loc) : x;
  return Tensor(pow(mean(Tensor(pow(v, p), loc), axes, keepdim, loc), 1.0 / p), loc);
}

Tensor pmean_error(const Tensor& x, Axes axes, double p, bool stable, bool keepdim, Loc loc) {
  check_p(p, "pmean_error (forall)", loc);
  LocScope s(SourceLoc::from(loc));
  Tensor v = stable ? pi_1(x, loc) : x;
  return Tensor(1.0 - pow(mean(Tensor(pow(1.0 - v, p), loc), axes, keepdim, loc), 1.0 / p), loc);
}

Tensor aggreg_min(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return min(x, axes, keepdim, loc); }
Tensor aggreg_mean(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return mean(x, axes, keepdim, loc); }

Tensor softmin_forall(const Tensor& x, Axes axes, double temperature, bool keepdim, Loc loc) {
  if (!(temperature > 0) || !std::isfinite(temperature))
    throw UserError("softmin_forall: expected a temperature > 0, got " + std::to_string(temperature),
                    SourceLoc::from(loc));
  LocScope s(SourceLoc::from(loc));
  double log_n = std::log(count(x, axes));
  Tensor lse = logsumexp(Tensor(x * (-1.0 / temperature), loc), axes, keepdim, loc);
  return Tensor((lse - log_n) * -temperature, loc);
}

}  // namespace mg::frontier::tarka
