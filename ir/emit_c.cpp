// Helpers of the registry's C99 column; see emit_c.hpp.
#include "minigrad/ir/emit_c.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/node.hpp"

namespace mg::ir {

void CWriter::line(const std::string& s) {
  out_.append(static_cast<std::size_t>(2 * depth_), ' ');
  out_ += s;
  out_ += '\n';
}
void CWriter::open(const std::string& s) {
  line(s + " {");
  ++depth_;
}
void CWriter::close(const std::string& tail) {
  --depth_;
  line("}" + tail);
}
std::string CWriter::fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }
std::string CWriter::take_since(std::size_t size) {
  std::string tail = out_.substr(size);
  out_.resize(size);
  return tail;
}

std::string c_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::i64: return "int64_t";
    case DType::boolean: return "uint8_t";
  }
  return "?";
}

std::string c_int(std::int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return "INT64_C(" + std::to_string(v) + ")";
}

std::string c_lit(double v, DType t) {
  char buf[64];
  switch (t) {
    case DType::f32: {
      const float f = static_cast<float>(v);
      if (std::isnan(f)) return std::signbit(f) ? "(-NAN)" : "NAN";
      if (std::isinf(f)) return f < 0 ? "(-INFINITY)" : "INFINITY";
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return f < 0 ? "(" + s + "f)" : s + "f";
    }
    case DType::f64: {
      if (std::isnan(v)) return std::signbit(v) ? "(-(double)NAN)" : "((double)NAN)";
      if (std::isinf(v)) return v < 0 ? "(-(double)INFINITY)" : "((double)INFINITY)";
      std::snprintf(buf, sizeof buf, "%.17g", v);
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return v < 0 ? "(" + s + ")" : s;
    }
    case DType::i64: {
      // The IR's conversion of a double to i64: truncate, saturate, NaN -> 0.
      constexpr double kLimit = 9223372036854775808.0;
      if (std::isnan(v)) return c_int(0);
      if (v >= kLimit) return "INT64_MAX";
      if (v < -kLimit) return "INT64_MIN";
      return c_int(static_cast<std::int64_t>(v));
    }
    case DType::boolean: return v != 0 ? "1" : "0";
  }
  return "0";
}

std::string c_math(const std::string& fn, DType t) { return t == DType::f32 ? fn + "f" : fn; }

EmitC c_expr(std::string tmpl) {
  EmitC e;
  e.expr = std::move(tmpl);
  return e;
}
EmitC c_expr(CExprFn fn) {
  EmitC e;
  e.expr_fn = std::move(fn);
  return e;
}
EmitC c_expr(std::string float_tmpl, std::string int_tmpl) {
  return c_expr([f = std::move(float_tmpl), i = std::move(int_tmpl)](const CExprArgs& a) {
    return expand_c_expr(a.dtype == DType::i64 ? i : f, a);
  });
}
EmitC c_loops(CLoopFn fn) {
  EmitC e;
  e.loops = std::move(fn);
  return e;
}
EmitC c_none(std::string why) {
  EmitC e;
  e.none = std::move(why);
  return e;
}

std::string expand_c_expr(const std::string& t, const CExprArgs& a) {
  std::string out;
  for (std::size_t p = 0; p < t.size(); ++p) {
    if (t[p] != '{') {
      out += t[p];
      continue;
    }
    const std::size_t end = t.find('}', p);
    MG_ASSERT(end != std::string::npos, "C template: unclosed '{' in " + t);
    const std::string key = t.substr(p + 1, end - p - 1);
    p = end;
    if (key.size() == 1 && key[0] >= '0' && key[0] <= '9') {
      const auto k = static_cast<std::size_t>(key[0] - '0');
      MG_ASSERT(k < a.in.size(), "C template: operand {" + key + "} of " + t);
      out += "(" + a.in[k] + ")";
    } else if (key == "i") {
      out += a.i;
    } else if (key == "T") {
      out += c_type(a.dtype);
    } else if (key == "f") {
      if (a.dtype == DType::f32) out += "f";
    } else if (key.rfind("c:", 0) == 0) {
      out += c_lit(std::stod(key.substr(2)), a.dtype);
    } else if (key.rfind("a:", 0) == 0) {
      out += c_lit(a.node.attrs.f64(key.substr(2)), a.dtype);
    } else {
      MG_ASSERT(false, "C template: unknown key {" + key + "} in " + t);
    }
  }
  return out;
}

std::string c_array(const std::string& name, const Array& a) {
  const DType t = a.dtype();
  const std::int64_t n = a.numel();
  std::string s = "static const " + c_type(t) + " " + name + "[" + std::to_string(n > 0 ? n : 1) + "] = {";
  if (n == 0) return s + "0};\n";
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 10 == 0) s += "\n  ";
    switch (t) {
      case DType::i64: s += c_int(a.data<std::int64_t>()[i]); break;
      case DType::boolean: s += a.data<std::uint8_t>()[i] ? "1" : "0"; break;
      default: s += c_lit(a.at(i), t); break;
    }
    s += i + 1 < n ? ", " : "";
  }
  return s + "\n};\n";
}

std::string c_offset(const std::string& flat, const Shape& shape, const std::vector<std::int64_t>& strides) {
  // Runs of axes that address memory as one axis (stride = inner stride * inner size, a
  // broadcast's zeros included) merge: one division per run, not per axis. A bias read
  // across a batch was (i % 28) + ((i / 28) % 28) * 28 + ((i / 784) % 8) * 784 per element.
  struct Axis {
    std::int64_t size, stride;
  };
  std::vector<Axis> axes;  // innermost first
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 1) continue;
    if (!axes.empty() && strides[k] == axes.back().stride * axes.back().size) axes.back().size *= shape[k];
    else axes.push_back({shape[k], strides[k]});
  }
  std::string s;
  std::int64_t div = 1;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].stride != 0) {
      std::string idx = div == 1 ? flat : "(" + flat + " / " + std::to_string(div) + ")";
      if (a + 1 < axes.size()) idx = "(" + idx + " % " + std::to_string(axes[a].size) + ")";
      s += (s.empty() ? "" : " + ") + idx + " * " + std::to_string(axes[a].stride);
    }
    div *= axes[a].size;
  }
  return s.empty() ? "0" : s;
}

void c_for(CWriter& w, const std::string& var, std::int64_t n, std::int64_t work, bool simd) {
  const bool par = work >= kCParallelWork && n > 1;
  if (par && simd) w.line("MG_OMP(omp parallel for simd schedule(static))");
  else if (par) w.line("MG_OMP(omp parallel for schedule(static))");
  else if (simd) w.line("MG_OMP(omp simd)");
  w.open("for (int64_t " + var + " = 0; " + var + " < " + std::to_string(n) + "; ++" + var + ")");
}

namespace {
struct FlatRange {
  std::int64_t n = -1;
  std::string lo, hi;
};
thread_local std::optional<FlatRange> g_flat_range;  // the CFlatRange in scope
}  // namespace

CFlatRange::CFlatRange(std::int64_t n, std::string lo, std::string hi) {
  MG_ASSERT(!g_flat_range, "C99: loop groups do not nest");
  g_flat_range = FlatRange{n, std::move(lo), std::move(hi)};
}

CFlatRange::~CFlatRange() {
  g_flat_range.reset();
}

bool c_flat_range_active() {
  return g_flat_range.has_value();
}

void c_flat_for(CWriter& w, std::int64_t n, std::int64_t work) {
  if (!g_flat_range) return c_for(w, "i", n, work, true);
  MG_ASSERT(g_flat_range->n == n, "C99: a loop of another length inside a loop group");
  w.line("MG_OMP(omp simd)");
  w.open("for (int64_t i = " + g_flat_range->lo + "; i < " + g_flat_range->hi + "; ++i)");
}

void c_strided_copy(CWriter& w, const std::string& dst, std::int64_t dst_off, const std::vector<std::int64_t>& ds,
                    const std::string& src, std::int64_t src_off, const std::vector<std::int64_t>& ss,
                    const Shape& shape) {
  // Drop size-1 axes; each remaining axis is one loop.
  std::vector<std::size_t> axes;
  std::int64_t n = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    n *= shape[k];
    if (shape[k] != 1) axes.push_back(k);
  }
  if (n == 0) return;
  std::string d = std::to_string(dst_off), s = std::to_string(src_off);
  // A transpose (dst contiguous, src strided, another axis contiguous in src): 32 x 32
  // tiles over those two axes keep both sides in cache.
  if (axes.size() >= 2) {
    const std::size_t in = axes.back();
    auto a = std::find_if(axes.begin(), axes.end() - 1, [&](std::size_t k) { return ss[k] == 1 || ss[k] == -1; });
    if (ds[in] == 1 && ss[in] != 1 && ss[in] != 0 && a != axes.end() - 1 && shape[in] >= 16 && shape[*a] >= 16) {
      const std::size_t ta = *a;
      w.open("");
      std::size_t loops = 0;
      for (std::size_t k : axes) {
        if (k == ta || k == in) continue;
        const std::string v = w.fresh("k");
        c_for(w, v, shape[k], loops == 0 ? n : 0, false);
        d += " + " + v + " * " + std::to_string(ds[k]);
        s += " + " + v + " * " + std::to_string(ss[k]);
        ++loops;
      }
      const std::string A = w.fresh("a"), B = w.fresh("b"), NA = std::to_string(shape[ta]), NB = std::to_string(shape[in]);
      c_for(w, A + "0", (shape[ta] + 31) / 32, loops == 0 ? n : 0, false);
      w.open("for (int64_t " + B + "0 = 0; " + B + "0 < " + NB + "; " + B + "0 += 32)");
      w.open("for (int64_t " + A + " = " + A + "0 * 32; " + A + " < " + A + "0 * 32 + 32 && " + A + " < " + NA + "; ++" + A + ")");
      w.open("for (int64_t " + B + " = " + B + "0; " + B + " < " + B + "0 + 32 && " + B + " < " + NB + "; ++" + B + ")");
      w.line(dst + "[" + d + " + " + A + " * " + std::to_string(ds[ta]) + " + " + B + "] = " + src + "[" + s + " + " + A +
             " * " + std::to_string(ss[ta]) + " + " + B + " * " + std::to_string(ss[in]) + "];");
      for (std::size_t j = 0; j < loops + 4; ++j) w.close();
      w.close();
      return;
    }
  }
  w.open("");
  for (std::size_t j = 0; j < axes.size(); ++j) {
    const std::size_t k = axes[j];
    const std::string v = w.fresh("k");
    c_for(w, v, shape[k], j == 0 ? n : 0, j + 1 == axes.size());
    d += " + " + v + " * " + std::to_string(ds[k]);
    s += " + " + v + " * " + std::to_string(ss[k]);
  }
  w.line(dst + "[" + d + "] = " + src + "[" + s + "];");
  for (std::size_t j = 0; j < axes.size(); ++j) w.close();
  w.close();
}

}  // namespace mg::ir
