// nn::ModuleList<M>: a run-time number of modules of one type (torch.nn.ModuleList), e.g.
// the blocks of a transformer whose depth is a command-line flag. Parameters are named by
// index ("0.attn.in_proj_weight", "1.ln_1.weight", ...), as PyTorch names them, and
// train()/eval() reach every element.
#pragma once
#include <string>
#include <vector>

#include "minigrad/dsl/nn/module.hpp"

namespace mg::nn {

template <class M>
struct ModuleList {
  std::vector<M> items;
  ModuleList() = default;
  explicit ModuleList(std::vector<M> v) : items(std::move(v)) {}
  std::size_t size() const { return items.size(); }
  M& operator[](std::size_t i) { return items[i]; }
  const M& operator[](std::size_t i) const { return items[i]; }
  auto begin() const { return items.begin(); }
  auto end() const { return items.end(); }
  auto begin() { return items.begin(); }  // to configure the children (e.g. add_lora) in a loop
  auto end() { return items.end(); }
  template <class F> void for_each_parameter(F&& f) {
    for (std::size_t i = 0; i < items.size(); ++i) nn::for_each_parameter(items[i], f, std::to_string(i) + ".");
  }
  template <class F> void for_each_submodule(F&& f) {
    for (M& m : items) f(m);
  }
};

}  // namespace mg::nn
