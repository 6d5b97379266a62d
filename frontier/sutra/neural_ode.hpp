// NeuralODE: a module whose forward is odeint of another module's dynamics (torchdiffeq's
// usual wrapper). `func` is a module called as func(y) (autonomous) or func(t, y); its
// parameters are the NeuralODE's ("func." prefix), bound and trained like any module's.
// For the adjoint they are passed to odeint as params: each call swaps the module's
// parameter tensors for the solver's handles while f is traced, then restores them.
#pragma once
#include <utility>

#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/frontier/sutra/odeint.hpp"

namespace mg::frontier::sutra {

template <class M>
class NeuralODE {
 public:
  explicit NeuralODE(M func, Options opt = {}) : func(std::move(func)), options(opt) {}

  // ys at ts ([N, ...y0.shape]); last() holds the solution (NFE) of the latest call.
  Tensor operator()(const Tensor& y0, const Tensor& ts, Loc loc = Loc::current()) const {
    std::vector<nn::Parameter*> ps;
    // Walking the parameters needs M&; the call only swaps their handles and restores them.
    nn::for_each_parameter(const_cast<M&>(func), [&](const std::string&, nn::Parameter& p) { ps.push_back(&p); });
    Tensors params;
    for (nn::Parameter* p : ps) params.push_back(p->tensor);
    last_ = odeint(
        [&](const Tensor& t, const Tensor& y, const Tensors& handles) {
          std::vector<Tensor> saved;
          for (std::size_t i = 0; i < ps.size(); ++i) saved.push_back(std::exchange(ps[i]->tensor, handles[i]));
          struct Restore {
            std::vector<nn::Parameter*>& ps;
            std::vector<Tensor>& saved;
            ~Restore() {
              for (std::size_t i = 0; i < ps.size(); ++i) ps[i]->tensor = saved[i];
            }
          } restore{ps, saved};
          if constexpr (std::is_invocable_v<const M&, const Tensor&, const Tensor&>) return Tensor(func(t, y));
          else return Tensor(func(y));
        },
        y0, ts, params, options, loc);
    return last_.ys;
  }
  const Solution& last() const { return last_; }

  template <class F>
  void for_each_parameter(F&& f) {
    nn::for_each_parameter(func, [&](const std::string& name, nn::Parameter& p) { f("func." + name, p); });
  }

  M func;
  Options options;

 private:
  mutable Solution last_;
};

}  // namespace mg::frontier::sutra
