// The registry's storage. Families register explicitly, once, on first use.
#include "minigrad/ir/op_registry.hpp"

#include <deque>
#include <map>
#include <mutex>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/families.hpp"

namespace mg::ir {

namespace {
struct Registry {
  std::deque<OpDef> defs;  // stable addresses: nodes point at their OpDef
  std::map<std::string, OpDef*, std::less<>> by_name;
};
Registry& storage() {
  static Registry r;
  return r;
}
Registry& registry() {
  static std::once_flag once;
  std::call_once(once, [] { register_all_ops(); });
  return storage();
}
}  // namespace

OpDef& define_op(std::string name) {
  Registry& r = storage();
  MG_ASSERT(!r.by_name.count(name), "op '" + name + "' registered twice");
  OpDef& d = r.defs.emplace_back();
  d.name = std::move(name);
  r.by_name[d.name] = &d;
  return d;
}

OpDef& defined_op(std::string_view name) {
  Registry& r = storage();
  auto it = r.by_name.find(name);
  MG_ASSERT(it != r.by_name.end(), "op '" + std::string(name) + "' is not defined yet");
  return *it->second;
}

std::vector<OpDef*> defined_ops() {
  std::vector<OpDef*> out;
  for (auto& [name, def] : storage().by_name) out.push_back(def);
  return out;
}

const OpDef* find_op(std::string_view name) {
  Registry& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

const OpDef& op(std::string_view name) {
  if (const OpDef* d = find_op(name)) return *d;
  throw UserError("unknown op '" + std::string(name) + "'", ambient_loc());
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> out;
  for (auto& [name, def] : registry().by_name) out.push_back(def);
  return out;
}

void register_all_ops() {
  register_unary_ops();
  register_binary_ops();
  register_reduce_ops();
  register_shape_ops();
  register_linalg_ops();
  register_index_ops();
  register_creation_ops();
  register_nn_ops();
  register_pool_ops();
  register_fused_ops();
  register_control_ops();
  register_custom_vjp_ops();
  register_while_loop_ops();
  register_transform_rules();
  register_moment_rules();  // the delta-method default reads the jvp column
  register_numerics_hints();  // columns over the families above
  register_flop_counts();
}

}  // namespace mg::ir
