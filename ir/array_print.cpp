// Printing an Array the way NumPy and PyTorch users read tensors: nested brackets per axis,
// right-aligned columns, `...` summaries for large arrays, a dtype/shape trailer. The format
// is documented at operator<< in ir/array.hpp; only this file knows it. It reads elements
// through Array::at (no xtensor), so it stays cheap to compile.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"

namespace mg {

namespace {

constexpr std::int64_t kThreshold = 1000;  // summarise above this many elements (torch)
constexpr std::int64_t kEdgeItems = 3;     // entries kept at each end of a summarised axis
constexpr std::size_t kLineWidth = 80;     // rows wrap here (torch, NumPy)
constexpr int kPrecision = 4;              // decimals of fixed and scientific floats

// The indices printed along an axis of size n: all of them, or the first and last
// kEdgeItems with -1 marking the `...` between them.
std::vector<std::int64_t> shown(std::int64_t n, bool summarise) {
  std::vector<std::int64_t> idx;
  if (summarise && n > 2 * kEdgeItems) {
    for (std::int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);
    for (std::int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

// How every element of one array is formatted (decided once from the shown elements, so
// columns align): torch's rules for floats.
class ElementFormat {
 public:
  ElementFormat(DType dtype, const std::vector<double>& values) : dtype_(dtype) {
    if (!is_float(dtype)) return;
    double lo = INFINITY, hi = 0;
    bool integral = true, any = false;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      any = true;
      if (v != std::nearbyint(v)) integral = false;
      const double m = std::fabs(v);
      hi = std::max(hi, m);
      if (m != 0) lo = std::min(lo, m);
    }
    if (!any) return;
    if (integral) {
      mode_ = hi > 1e8 ? Mode::scientific : Mode::integral;
    } else if (lo != INFINITY && (hi / lo > 1e3 || hi > 1e8 || lo < 1e-4)) {
      mode_ = Mode::scientific;
    }
  }

  std::string operator()(double v) const {
    if (dtype_ == DType::boolean) return v != 0 ? "true" : "false";
    if (dtype_ == DType::i64) return std::to_string(static_cast<std::int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    switch (mode_) {
      case Mode::integral: std::snprintf(buf, sizeof buf, "%.0f.", v); break;
      case Mode::fixed: std::snprintf(buf, sizeof buf, "%.*f", kPrecision, v); break;
      case Mode::scientific: std::snprintf(buf, sizeof buf, "%.*e", kPrecision, v); break;
    }
    return buf;
  }

 private:
  enum class Mode { integral, fixed, scientific };
  DType dtype_;
  Mode mode_ = Mode::fixed;
};

class Printer {
 public:
  Printer(const Array& a, std::ostream& os)
      : a_(a), os_(os), strides_(strides_of(a.shape())), summarise_(a.numel() > kThreshold) {
    std::vector<double> values;
    collect(0, 0, values);
    ElementFormat fmt(a.dtype(), values);
    for (double v : values) width_ = std::max(width_, fmt(v).size());
    fmt_ = std::make_unique<ElementFormat>(fmt);
  }

  // The body between "array(" and the trailer; `indent` is the column of the first '['.
  void print(std::size_t indent) {
    if (a_.rank() == 0) {
      os_ << (*fmt_)(a_.at(0));
      return;
    }
    block(0, 0, indent);
  }

 private:
  // Every element that will be printed, in order (for the format and the column width).
  void collect(int axis, std::int64_t offset, std::vector<double>& out) const {
    if (axis == a_.rank()) {
      out.push_back(a_.at(offset));
      return;
    }
    for (std::int64_t i : shown(a_.shape()[axis], summarise_))
      if (i >= 0) collect(axis + 1, offset + i * strides_[axis], out);
  }

  void block(int axis, std::int64_t offset, std::size_t indent) {
    os_ << '[';
    const auto idx = shown(a_.shape()[axis], summarise_);
    const int rank = a_.rank();
    if (axis == rank - 1) {
      // The last axis: elements separated by ", ", wrapped to the line width.
      std::size_t col = indent + 1;
      for (std::size_t j = 0; j < idx.size(); ++j) {
        std::string s = idx[j] < 0 ? "..." : pad((*fmt_)(a_.at(offset + idx[j])));
        if (j > 0) {
          os_ << ',';
          if (col + 2 + s.size() + 2 > kLineWidth) {
            os_ << '\n' << std::string(indent + 1, ' ');
            col = indent + 1;
          } else {
            os_ << ' ';
            col += 2;
          }
        }
        os_ << s;
        col += s.size();
      }
    } else {
      // Outer axes: one sub-block per line, a blank line per axis nested below.
      std::string sep(1, ',');
      sep.append(static_cast<std::size_t>(rank - axis - 1), '\n').append(indent + 1, ' ');
      for (std::size_t j = 0; j < idx.size(); ++j) {
        if (j > 0) os_ << sep;
        if (idx[j] < 0) os_ << "...";
        else block(axis + 1, offset + idx[j] * strides_[axis], indent + 1);
      }
    }
    os_ << ']';
  }

  std::string pad(std::string s) const {
    return s.size() < width_ ? std::string(width_ - s.size(), ' ') + s : s;
  }

  const Array& a_;
  std::ostream& os_;
  std::vector<std::int64_t> strides_;
  bool summarise_;
  std::size_t width_ = 0;
  std::unique_ptr<ElementFormat> fmt_;
};

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Array& a) {
  const std::string trailer =
      "dtype=" + std::string(name_of(a.dtype())) + ", shape=" + shape_text(a.shape()) + ")";
  if (!a.valid()) return os << "array(<no storage>, " << trailer;
  if (a.numel() == 0) return os << "array([], " << trailer;
  // Format into a string first, so the stream's own flags (width, precision) play no part.
  std::ostringstream body;
  Printer(a, body).print(std::string("array(").size());
  return os << "array(" << body.str() << ", " << trailer;
}

std::ostream& operator<<(std::ostream& os, const std::vector<Array>& arrays) {
  os << '[';
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    std::ostringstream one;
    one << arrays[i];
    const std::string s = one.str();
    if (i > 0) os << ",\n ";
    // Continuation lines shift right by the list's own bracket (blank lines stay blank).
    for (std::size_t c = 0; c < s.size(); ++c) {
      os << s[c];
      if (s[c] == '\n' && c + 1 < s.size() && s[c + 1] != '\n') os << ' ';
    }
  }
  return os << ']';
}

}  // namespace mg
