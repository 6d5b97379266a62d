// Attribute storage: sorted (name, value) pairs with typed accessors.
#include "minigrad/ir/attrs.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace mg {

std::string_view name_of(AttrKind k) {
  switch (k) {
    case AttrKind::i64: return "i64";
    case AttrKind::f64: return "f64";
    case AttrKind::boolean: return "bool";
    case AttrKind::string: return "string";
    case AttrKind::i64_list: return "i64 list";
    case AttrKind::dtype: return "dtype";
  }
  return "?";
}

AttrKind kind_of(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

std::string to_string(const AttrValue& v) {
  std::ostringstream os;
  os.precision(17);
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, I64List>) {
          os << "[";
          for (std::size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
          os << "]";
        } else if constexpr (std::is_same_v<X, bool>) {
          os << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<X, std::string>) {
          os << '"' << x << '"';
        } else if constexpr (std::is_same_v<X, DType>) {
          os << name_of(x);
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) {
  for (auto& [k, v] : items) set(k, v);
}

Attrs& Attrs::set(std::string name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, const std::string& n) { return p.first < n; });
  if (it != items_.end() && it->first == name) it->second = std::move(value);
  else items_.insert(it, {std::move(name), std::move(value)});
  return *this;
}

const AttrValue* Attrs::find(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  return (it != items_.end() && it->first == name) ? &it->second : nullptr;
}

namespace {
template <class T>
const T& get(const Attrs& a, std::string_view name) {
  const AttrValue* v = a.find(name);
  if (!v) throw std::logic_error("missing attribute '" + std::string(name) + "'");
  if (const T* p = std::get_if<T>(v)) return *p;
  throw std::logic_error("attribute '" + std::string(name) + "' has kind " +
                         std::string(name_of(kind_of(*v))));
}
}  // namespace

std::int64_t Attrs::i64(std::string_view n) const { return get<std::int64_t>(*this, n); }
double Attrs::f64(std::string_view n) const { return get<double>(*this, n); }
bool Attrs::boolean(std::string_view n) const { return get<bool>(*this, n); }
const std::string& Attrs::str(std::string_view n) const { return get<std::string>(*this, n); }
const I64List& Attrs::list(std::string_view n) const { return get<I64List>(*this, n); }
DType Attrs::dtype(std::string_view n) const { return get<DType>(*this, n); }

}  // namespace mg
