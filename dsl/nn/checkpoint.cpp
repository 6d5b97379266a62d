// Model checkpoints; see checkpoint.hpp.
#include "minigrad/dsl/nn/checkpoint.hpp"

#include <set>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/io/safetensors.hpp"

namespace mg::nn {

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

std::map<std::string, Array> io_load_tensors(const std::string& path) { return io::load_safetensors(path).tensors; }

LoadReport load_parameters(const NamedParameters& params, const std::map<std::string, Array>& values,
                           LoadOptions options, const std::string& source) {
  LoadReport report;
  std::vector<std::string> mismatched;
  std::set<std::string> known;
  for (auto& [name, p] : params) {
    known.insert(name);
    auto it = values.find(name);
    if (it == values.end()) {
      report.missing.push_back(name);
      continue;
    }
    const Type want{p->dtype, p->shape};
    if (!it->second.valid() || it->second.type() != want)
      mismatched.push_back(name + " (model " + to_string(want) + ", file " +
                           (it->second.valid() ? to_string(it->second.type()) : "no data") + ")");
  }
  for (auto& [name, value] : values)
    if (!known.count(name)) report.unexpected.push_back(name);

  std::string problems;
  if (!mismatched.empty()) problems += "\n  shape/dtype mismatches: " + joined(mismatched);
  if (options.strict && !report.missing.empty()) problems += "\n  missing keys: " + joined(report.missing);
  if (options.strict && !report.unexpected.empty()) problems += "\n  unexpected keys: " + joined(report.unexpected);
  if (!problems.empty())
    throw UserError(source + ": cannot load into the model (nothing was changed)" + problems +
                    (options.strict && mismatched.empty() ? "\n  (load with {.strict = false} to skip missing and unexpected keys)" : ""));
  for (auto& [name, p] : params) {
    auto it = values.find(name);
    if (it == values.end()) continue;
    p->storage->name = name;
    p->assign(it->second.clone());
  }
  return report;
}

void save_parameters(const NamedParameters& params, const std::string& path) {
  std::map<std::string, Array> out;
  std::vector<std::string> unbound;
  for (auto& [name, p] : params) {
    if (p->has_value()) out[name] = p->value();
    else unbound.push_back(name);
  }
  if (!unbound.empty())
    throw UserError(path + ": cannot save, these parameters have no value yet (nn::bind the model first): " +
                    joined(unbound));
  io::save_safetensors(path, out, {{"format", "minigrad.model"}});
}

}  // namespace mg::nn
