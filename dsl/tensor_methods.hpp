// Out-of-line bodies of TensorMethods: each lowers `self` at the caller's line and
// forwards to the free function of the same name (dsl/functions.hpp).
#pragma once
#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"

namespace mg {

template <class D>
Tensor TensorMethods<D>::self(Loc loc) const { return static_cast<const D&>(*this).lower(loc); }

template <class D>
Tensor TensorMethods<D>::sum(Axes a, bool k, Loc l) const { return mg::sum(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::mean(Axes a, bool k, Loc l) const { return mg::mean(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::max(Axes a, bool k, Loc l) const { return mg::max(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::min(Axes a, bool k, Loc l) const { return mg::min(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::prod(Axes a, bool k, Loc l) const { return mg::prod(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::var(Axes a, std::int64_t c, bool k, Loc l) const {
  return mg::var(self(l), std::move(a), c, k, l);
}
template <class D>
Tensor TensorMethods<D>::logsumexp(Axes a, bool k, Loc l) const { return mg::logsumexp(self(l), std::move(a), k, l); }
template <class D>
Tensor TensorMethods<D>::argmax(std::int64_t a, bool k, Loc l) const { return mg::argmax(self(l), a, k, l); }
template <class D>
Tensor TensorMethods<D>::argmin(std::int64_t a, bool k, Loc l) const { return mg::argmin(self(l), a, k, l); }
template <class D>
Tensor TensorMethods<D>::reshape(std::vector<std::int64_t> s, Loc l) const { return mg::reshape(self(l), std::move(s), l); }
template <class D>
Tensor TensorMethods<D>::permute(std::vector<std::int64_t> p, Loc l) const { return mg::permute(self(l), std::move(p), l); }
template <class D>
Tensor TensorMethods<D>::transpose(std::int64_t a, std::int64_t b, Loc l) const { return mg::transpose(self(l), a, b, l); }
template <class D>
Tensor TensorMethods<D>::T(Loc l) const { return mg::transpose(self(l), -2, -1, l); }
template <class D>
Tensor TensorMethods<D>::expand(Shape s, Loc l) const { return mg::broadcast_to(self(l), std::move(s), l); }
template <class D>
Tensor TensorMethods<D>::squeeze(Axes a, Loc l) const { return mg::squeeze(self(l), std::move(a), l); }
template <class D>
Tensor TensorMethods<D>::unsqueeze(std::int64_t a, Loc l) const { return mg::unsqueeze(self(l), a, l); }
template <class D>
Tensor TensorMethods<D>::flatten(Loc l) const { return mg::flatten(self(l), 0, -1, l); }
template <class D>
Tensor TensorMethods<D>::cast(DType t, Loc l) const { return mg::cast(self(l), t, l); }
template <class D>
Tensor TensorMethods<D>::detach(Loc l) const { return mg::stop_gradient(self(l), l); }

}  // namespace mg
