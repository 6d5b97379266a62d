// mg::visualize over the ASCII view (visualize.hpp).
#include "minigrad/dsl/visualize.hpp"

#include "minigrad/ir/errors.hpp"

namespace mg {

std::string visualize(const std::vector<Tensor>& values, const ViewOptions& options) {
  if (values.empty()) throw UserError("visualize: no values given");
  std::vector<ir::NodeId> ids;
  for (auto& v : values) {
    if (!v.valid() || &v.graph() != &values[0].graph()) throw UserError("visualize: the values come from different graphs");
    ids.push_back(v.value().id);
  }
  return rt::glassbox::ascii_view(values[0].graph(), ids, options);
}

std::string visualize(const Tensor& value, const ViewOptions& options) {
  return visualize(std::vector<Tensor>{value}, options);
}

}  // namespace mg
