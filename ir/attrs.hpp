// Typed, named op attributes. Nodes store them as a small vector of (name, value) pairs
// sorted by name, so printing and hashing are deterministic. Each op declares a schema
// (AttrSpec) that the builder checks when a node is made.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "minigrad/ir/dtype.hpp"

namespace mg {

using I64List = std::vector<std::int64_t>;
using AttrValue = std::variant<std::int64_t, double, bool, std::string, I64List, DType>;

enum class AttrKind : std::uint8_t { i64, f64, boolean, string, i64_list, dtype };
std::string_view name_of(AttrKind k);
AttrKind kind_of(const AttrValue& v);
std::string to_string(const AttrValue& v);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items);

  Attrs& set(std::string name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;

  // Typed access; throws std::logic_error if missing or of another kind (the builder
  // validates against the schema, so a miss here is our bug).
  std::int64_t i64(std::string_view name) const;
  double f64(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& str(std::string_view name) const;
  const I64List& list(std::string_view name) const;
  DType dtype(std::string_view name) const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool operator==(const Attrs&) const = default;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  // nullopt: required
};

}  // namespace mg
