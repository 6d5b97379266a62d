// A model's parameters and buffers in a SafeTensors file, by dotted name, like PyTorch's
// state_dict / load_state_dict. (A whole training run — optimizer state, step counter,
// schedule — is TrainStep::save / load.)
//
//   nn::save(model, "mlp.safetensors");
//   nn::load(model, "mlp.safetensors");                     // strict: every key must match
//   auto r = nn::load(model, "encoder.safetensors", {.strict = false});  // r.missing, r.unexpected
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/dsl/nn/module.hpp"

namespace mg::nn {

struct LoadOptions {
  // true: a key of the model missing from the file, or a key of the file the model does
  // not have, is an error listing all of them. false: those are reported and skipped.
  // A shape or dtype mismatch is an error either way.
  bool strict = true;
};
struct LoadReport {
  std::vector<std::string> missing;     // model keys the file lacks (left unchanged)
  std::vector<std::string> unexpected;  // file keys the model lacks (ignored)
};

using NamedParameters = std::vector<std::pair<std::string, Parameter*>>;

template <class M>
NamedParameters named_parameters(M& m, bool include_buffers = true) {
  NamedParameters out;
  for_each_parameter(m, [&](const std::string& name, Parameter& p) {
    if (p.trainable || include_buffers) out.emplace_back(name, &p);
  });
  return out;
}

// The tensors of a SafeTensors file (runtime/io/safetensors.hpp), by name.
std::map<std::string, Array> io_load_tensors(const std::string& path);
// Assigns `values` to `params` as `options` says; on any error nothing is assigned.
// `source` names the file in messages.
LoadReport load_parameters(const NamedParameters& params, const std::map<std::string, Array>& values,
                           LoadOptions options, const std::string& source);
// Writes every parameter and buffer that has a value (unbound ones: an error naming them).
void save_parameters(const NamedParameters& params, const std::string& path);

template <class M>
void save(M& model, const std::string& path) {
  save_parameters(named_parameters(model), path);
}
template <class M>
LoadReport load(M& model, const std::string& path, LoadOptions options = {}) {
  return load_parameters(named_parameters(model), io_load_tensors(path), options, path);
}

}  // namespace mg::nn
