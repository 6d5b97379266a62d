// The DSL wrapper over passes/moments.hpp.
#include "minigrad/dsl/moments.hpp"

#include <map>
#include <sstream>

#include "minigrad/ir/errors.hpp"

namespace mg {

namespace {
std::vector<ir::Value> values(const std::vector<Tensor>& ts) {
  std::vector<ir::Value> vs;
  for (auto& t : ts) {
    if (!t.valid()) throw UserError("propagate_moments: an empty Tensor handle", ambient_loc());
    vs.push_back(t.value());
  }
  return vs;
}
}  // namespace

MomentsOf propagate_moments(const std::vector<Tensor>& outputs, const std::vector<Tensor>& random,
                            const std::vector<Tensor>& means, const std::vector<Tensor>& vars, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  passes::MomentResult r = passes::propagate_moments(values(outputs), values(random), values(means), values(vars));
  MomentsOf m;
  for (const ir::Value& v : r.mean) m.mean.emplace_back(v);
  for (const ir::Value& v : r.var) m.var.emplace_back(v);
  m.report = std::move(r.report);
  return m;
}

std::string MomentsOf::report_text() const {
  std::ostringstream os;
  std::map<std::string, int> count;
  for (const auto& s : report) {
    os << "  " << s.op << std::string(s.op.size() < 14 ? 14 - s.op.size() : 1, ' ') << ir::moment_kind_name(s.kind);
    if (s.loc.file && *s.loc.file) os << "  " << s.loc.file << ":" << s.loc.line;
    os << "\n";
    ++count[ir::moment_kind_name(s.kind)];
  }
  os << "  nodes:";
  for (auto& [k, n] : count) os << " " << n << " " << k;
  os << "\n";
  return os.str();
}

}  // namespace mg
