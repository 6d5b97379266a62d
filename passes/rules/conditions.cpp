// The precondition and attribute-function tables (see conditions.hpp).
#include "minigrad/passes/rules/conditions.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mg::passes::rules {

namespace {

using ir::SmtBuilder;
using ir::SmtTerm;

const I64List* list_of(const BoundArg& a) {
  return a.attr ? std::get_if<I64List>(a.attr) : nullptr;
}
std::optional<std::int64_t> int_of(const BoundArg& a) {
  if (a.number) return a.number;
  if (a.attr)
    if (auto* v = std::get_if<std::int64_t>(a.attr)) return *v;
  return std::nullopt;
}

bool is_identity(std::span<const BoundArg> a) {
  const I64List* p = list_of(a[0]);
  if (!p) return false;
  for (std::size_t i = 0; i < p->size(); ++i)
    if ((*p)[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

// selects(?starts, ?stops, ?steps, ?axis, ?part, ?before...): the slice takes exactly
// `part` out of a concatenation along `axis` in which `before...` precede it.
bool selects(std::span<const BoundArg> a) {
  const I64List *st = list_of(a[0]), *sp = list_of(a[1]), *step = list_of(a[2]);
  auto axis = int_of(a[3]);
  const Type* part = a[4].type;
  if (!st || !sp || !step || !axis || !part) return false;
  std::int64_t offset = 0;
  for (std::size_t i = 5; i < a.size(); ++i) {
    if (!a[i].type || a[i].type->rank() != part->rank()) return false;
    offset += a[i].type->shape[static_cast<std::size_t>(*axis)];
  }
  if (st->size() != part->shape.size()) return false;
  for (std::size_t d = 0; d < st->size(); ++d) {
    std::int64_t lo = static_cast<std::int64_t>(d) == *axis ? offset : 0;
    if ((*st)[d] != lo || (*sp)[d] != lo + part->shape[d] || (*step)[d] != 1) return false;
  }
  return true;
}

// unit_reshape(?x, ?shape): reshaping x to `shape` only puts 1s in front of x's shape, or
// x holds a single element and `shape` is all 1s: a broadcast after it can start from x.
bool unit_reshape(std::span<const BoundArg> a) {
  const I64List* s = list_of(a[1]);
  if (!a[0].type || !s) return false;
  const Shape& x = a[0].type->shape;
  bool ones = std::all_of(s->begin(), s->end(), [](std::int64_t d) { return d == 1; });
  if (ones && a[0].type->numel() == 1) return true;
  if (s->size() < x.size()) return false;
  std::size_t lead = s->size() - x.size();
  for (std::size_t i = 0; i < s->size(); ++i)
    if ((*s)[i] != (i < lead ? 1 : x[i - lead])) return false;
  return true;
}

// broadcast_axes(?x, ?shape, ?axes): broadcasting x to `shape` copies it along every axis
// in `axes` (x lacks the axis or has size 1 there) and the copies are not empty, so a
// reduction of the broadcast over `axes` sees each element of x copies(shape, axes) times.
bool broadcast_axes(std::span<const BoundArg> a) {
  const I64List *s = list_of(a[1]), *axes = list_of(a[2]);
  if (!a[0].type || !s || !axes || s->size() < a[0].type->shape.size()) return false;
  const Shape& x = a[0].type->shape;
  const std::size_t lead = s->size() - x.size();
  for (std::int64_t k : *axes) {
    const auto d = static_cast<std::size_t>(k);
    if (k < 0 || d >= s->size() || (*s)[d] < 1 || (d >= lead && x[d - lead] != 1)) return false;
  }
  return true;
}

const CondDef kConditions[] = {
    {"nonzero", 1, true, "x != 0 (NaN and infinities count as nonzero)",
     [](std::span<const BoundArg> a) { return a[0].splat && *a[0].splat != 0; },
     [](SmtBuilder& b, std::span<const SmtTerm> t) { return b.lnot(b.is_zero(t[0])); }},
    {"positive", 1, true, "x > 0 (+inf counts, NaN does not)",
     [](std::span<const BoundArg> a) { return a[0].splat && *a[0].splat > 0; },
     [](SmtBuilder& b, std::span<const SmtTerm> t) { return b.lt(b.num(0), t[0]); }},
    {"finite", 1, true, "x is neither infinite nor NaN",
     [](std::span<const BoundArg> a) { return a[0].splat && std::isfinite(*a[0].splat); },
     // x - x == 0 exactly when x is finite (inf - inf and NaN - NaN are NaN)
     [](SmtBuilder& b, std::span<const SmtTerm> t) { return b.eq(b.sub(t[0], t[0]), b.num(0)); }},
    {"is_const", 1, false, "computed from constants only (so folding removes what the rule builds)",
     [](std::span<const BoundArg> a) { return a[0].const_valued; }, nullptr},
    {"not_const", 1, false, "depends on some graph input (keeps constant re-association from cycling)",
     [](std::span<const BoundArg> a) { return !a[0].const_valued; }, nullptr},
    {"same_shape", 2, false, "two values of one shape",
     [](std::span<const BoundArg> a) { return a[0].type && a[1].type && a[0].type->shape == a[1].type->shape; },
     nullptr},
    {"is_identity", 1, false, "a permutation that keeps every axis in place",
     [](std::span<const BoundArg> a) { return is_identity(a); }, nullptr},
    {"selects", -1, false,
     "selects(starts, stops, steps, axis, part, before...): the slice is exactly `part` of a concat",
     [](std::span<const BoundArg> a) { return a.size() >= 5 && selects(a); }, nullptr},
    {"unit_reshape", 2, false, "unit_reshape(?x, ?shape): the reshape only adds leading 1s (or x is one element)",
     [](std::span<const BoundArg> a) { return unit_reshape(a); }, nullptr},
    {"broadcast_axes", 3, false,
     "broadcast_axes(?x, ?shape, ?axes): broadcasting ?x to ?shape only copies it along ?axes' (non-empty) dims",
     [](std::span<const BoundArg> a) { return broadcast_axes(a); }, nullptr},
    {"rank", 2, false, "rank(?x, n): ?x has rank n",
     [](std::span<const BoundArg> a) { return a[0].type && a[1].number && a[0].type->rank() == *a[1].number; },
     nullptr},
};

std::optional<AttrValue> compose(std::span<const BoundArg> a) {
  // permute(permute(x, p), q) == permute(x, r) with r[i] = p[q[i]]
  const I64List *p = list_of(a[0]), *q = list_of(a[1]);
  if (!p || !q || p->size() != q->size()) return std::nullopt;
  I64List r(q->size());
  for (std::size_t i = 0; i < q->size(); ++i) r[i] = (*p)[static_cast<std::size_t>((*q)[i])];
  return r;
}
std::optional<AttrValue> inverse(std::span<const BoundArg> a) {
  const I64List* p = list_of(a[0]);
  if (!p) return std::nullopt;
  I64List r(p->size());
  for (std::size_t i = 0; i < p->size(); ++i) r[static_cast<std::size_t>((*p)[i])] = static_cast<std::int64_t>(i);
  return r;
}
std::optional<AttrValue> shape_of(std::span<const BoundArg> a) {
  if (!a[0].type) return std::nullopt;
  return a[0].type->shape;
}

// copies(?shape, ?axes): the product of shape's dims at axes, as an f64 (a count).
std::optional<AttrValue> copies(std::span<const BoundArg> a) {
  const I64List *s = list_of(a[0]), *axes = list_of(a[1]);
  if (!s || !axes) return std::nullopt;
  double n = 1;
  for (std::int64_t k : *axes) {
    if (k < 0 || static_cast<std::size_t>(k) >= s->size()) return std::nullopt;
    n *= static_cast<double>((*s)[static_cast<std::size_t>(k)]);
  }
  return n;
}

const AttrFnDef kAttrFns[] = {
    {"compose", 2, "compose(?p, ?q): the one permutation equal to permuting by p, then by q", compose},
    {"inverse", 1, "inverse(?p): the permutation undoing p", inverse},
    {"shape_of", 1, "shape_of(?x): ?x's shape, as an i64 list", shape_of},
    {"copies", 2, "copies(?shape, ?axes): the product of ?shape's dims at ?axes, as an f64", copies},
};

}  // namespace

std::span<const CondDef> conditions() { return kConditions; }
const CondDef* find_condition(std::string_view name) {
  for (const CondDef& c : kConditions)
    if (c.name == name) return &c;
  return nullptr;
}
std::span<const AttrFnDef> attr_functions() { return kAttrFns; }
const AttrFnDef* find_attr_function(std::string_view name) {
  for (const AttrFnDef& f : kAttrFns)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace mg::passes::rules
