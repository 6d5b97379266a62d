// Small out-of-line pieces of the IR vocabulary: dtype names, shapes, types, source
// locations and the assertion handler.
#include <algorithm>
#include <mutex>
#include <set>
#include <sstream>

#include "minigrad/ir/dtype.hpp"
#include "minigrad/ir/checked.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/source_loc.hpp"
#include "minigrad/ir/type.hpp"

namespace mg {

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : {DType::f32, DType::f64, DType::i64, DType::boolean})
    if (name_of(t) == name) return t;
  return std::nullopt;
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n = checked_mul(n, d);
  return n;
}

void check_type_sane(const Type& t) {
  for (auto d : t.shape)
    if (d < 0) throw ShapeError("negative dimension in " + to_string(t), ambient_loc());
  // Bytes representable, and strides too: [0, 2^62, 2^62] has no elements but its strides
  // (products of the trailing dims) overflow, so count zero dims as one here.
  std::int64_t extent = static_cast<std::int64_t>(size_of(t.dtype));
  for (auto d : t.shape) extent = checked_mul(extent, std::max<std::int64_t>(d, 1));
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string to_string(const Type& t) { return std::string(name_of(t.dtype)) + to_string(t.shape); }

std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

bool SourceLoc::operator==(const SourceLoc& o) const {
  return line == o.line && column == o.column && std::string_view(file) == o.file;
}

std::string to_string(const SourceLoc& l) {
  if (!l.known()) return "<unknown>";
  return std::string(l.file) + ":" + std::to_string(l.line);
}

const char* intern_file(std::string_view file) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> pool;
  std::lock_guard lock(mu);
  auto it = pool.find(file);
  if (it == pool.end()) it = pool.emplace(file).first;
  return it->c_str();
}

namespace {
thread_local SourceLoc g_ambient;
}
SourceLoc ambient_loc() { return g_ambient; }

// A scope only takes effect when no outer scope is active: the outermost API call is
// the user's, inner calls are the library's own.
LocScope::LocScope(SourceLoc loc, bool force) : saved_(g_ambient), active_(force || !g_ambient.known()) {
  if (active_) g_ambient = loc;
}
LocScope::~LocScope() {
  if (active_) g_ambient = saved_;
}

void assert_fail(const char* cond, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "internal error (a miniGrad bug) at " << file << ":" << line << ": " << cond << ": "
     << msg;
  throw std::logic_error(os.str());
}

}  // namespace mg
