// The formula grammar (formula.hpp) in Boost.Spirit X3: the only file of TARKA that
// includes Spirit. Semantic actions build the immutable AST directly (precedence by rule
// layering, left folds for & | <->, right recursion for ->). Every expectation point names
// what it wants, so an error reads "file:line:col: expected X, got Y" with a caret.
#include <algorithm>
#include <string>

#include <boost/spirit/home/x3.hpp>

#include "minigrad/frontier/tarka/formula.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/source_loc.hpp"

namespace mg::frontier::tarka {

namespace {

constexpr int kMaxNesting = 200;  // deeper nesting is refused before the recursive grammar runs

struct Text {
  std::string_view text;
  const char* name;
};

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

struct Position {
  std::uint32_t line = 1, column = 1;
};
Position position(const Text& src, const char* at) {
  const char* begin = src.text.data();
  const char* end = begin + src.text.size();
  while (at && at < end && blank(*at)) ++at;
  if (!at || at > end) at = end;
  Position p;
  const char* line_start = begin;
  for (const char* c = begin; c < at; ++c)
    if (*c == '\n') {
      ++p.line;
      line_start = c + 1;
    }
  p.column = static_cast<std::uint32_t>(at - line_start) + 1;
  return p;
}

std::string token_at(const Text& src, const char* at) {
  const char* end = src.text.data() + src.text.size();
  while (at < end && blank(*at)) ++at;
  if (at >= end) return "end of input";
  const char* q = at + 1;
  if (name_char(*at))
    while (q < end && name_char(*q) && q - at < 40) ++q;
  std::string tok;
  for (const char* c = at; c < q; ++c) tok += (static_cast<unsigned char>(*c) >= 0x20 && *c != 0x7f) ? *c : '?';
  return "'" + tok + "'";
}

[[noreturn]] void fail(const Text& src, const char* at, const std::string& message) {
  Position p = position(src, at);
  // The offending line with a caret under the column.
  const char* begin = src.text.data();
  const char* end = begin + src.text.size();
  const char* ls = begin;
  for (std::uint32_t l = 1; l < p.line; ++ls)
    if (*ls == '\n') ++l;
  const char* le = ls;
  while (le < end && *le != '\n') ++le;
  std::string shown(ls, le);
  std::replace_if(shown.begin(), shown.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  throw ParseError(message + "\n" + shown + "\n" + std::string(p.column - 1, ' ') + "^", src.name, p.line, p.column);
}

// Bounds the grammar's recursion: parentheses nest it, and so do runs of prefix operators
// ('~', quantifiers) and right-nested '->' until an '&', '|' or ')' ends the run.
void check_nesting(const Text& src) {
  int parens = 0, run = 0;
  for (const char* c = src.text.data(); c < src.text.data() + src.text.size(); ++c) {
    if (*c == '(') ++parens;
    else if (*c == ')') parens = parens > 0 ? parens - 1 : 0, run = 0;
    else if (*c == '&' || *c == '|') run = 0;
    else if (*c == '~' || *c == ':' || *c == '-') ++run;
    if (parens + run > kMaxNesting)
      fail(src, c, "formula nested deeper than " + std::to_string(kMaxNesting) + " levels");
  }
}

namespace x3 = boost::spirit::x3;
using x3::lit;

struct text_tag;  // x3::with<text_tag>: the Text, so actions can compute positions

template <class Ctx>
std::shared_ptr<Formula> node(const Ctx& ctx, FormulaKind kind, const char* at) {
  const Text& src = x3::get<text_tag>(ctx).get();
  auto f = std::make_shared<Formula>();
  f->kind = kind;
  f->source = src.name;
  Position p = position(src, at);
  f->line = p.line;
  f->column = p.column;
  return f;
}

const auto set = [](auto& ctx) { x3::_val(ctx) = x3::_attr(ctx); };
template <FormulaKind K>
const auto fold = [](auto& ctx) {
  FormulaPtr left = x3::_val(ctx);
  auto f = std::make_shared<Formula>();
  f->kind = K;
  f->source = left->source;
  f->line = left->line;
  f->column = left->column;
  f->operands = {left, x3::_attr(ctx)};
  x3::_val(ctx) = f;
};
// Each node's position comes from `here` (raw[eps] after the skipper: the first token).
const auto set_here = [](auto& ctx) { x3::_val(ctx) = x3::_attr(ctx).begin(); };
const auto make_not = [](auto& ctx) {
  auto& a = x3::_attr(ctx);
  auto f = node(ctx, FormulaKind::negation, boost::fusion::at_c<0>(a));
  f->operands = {boost::fusion::at_c<1>(a)};
  x3::_val(ctx) = f;
};
const auto make_atom = [](auto& ctx) {
  auto& a = x3::_attr(ctx);
  auto f = node(ctx, FormulaKind::atom, boost::fusion::at_c<0>(a));
  f->name = boost::fusion::at_c<1>(a);
  f->terms = boost::fusion::at_c<2>(a);
  x3::_val(ctx) = f;
};
const auto make_quant = [](auto& ctx) {
  auto& a = x3::_attr(ctx);
  auto f = node(ctx, boost::fusion::at_c<1>(a), boost::fusion::at_c<0>(a));
  if (const auto& p = boost::fusion::at_c<2>(a)) f->p = *p;
  f->terms = boost::fusion::at_c<3>(a);
  f->operands = {boost::fusion::at_c<4>(a)};
  x3::_val(ctx) = f;
};

struct QuantSymbols : x3::symbols<FormulaKind> {
  QuantSymbols() { add("forall", FormulaKind::forall)("exists", FormulaKind::exists); }
};
const QuantSymbols quant_symbols;

const auto name_start = x3::char_('a', 'z') | x3::char_('A', 'Z') | x3::char_('_');
const auto name_rest = name_start | x3::char_('0', '9');
const auto keyword = x3::lexeme[(lit("forall") | lit("exists")) >> !name_rest];

const x3::rule<struct formula_c, FormulaPtr> formula = "a formula";
const x3::rule<struct iff_c, FormulaPtr> iff = "a formula";
const x3::rule<struct implies_c, FormulaPtr> implies = "a formula";
const x3::rule<struct or_c, FormulaPtr> disj = "a formula";
const x3::rule<struct and_c, FormulaPtr> conj = "a formula";
const x3::rule<struct unary_c, FormulaPtr> unary = "a formula (an atom P(x), '~', '(' or a quantifier)";
const x3::rule<struct atom_c, FormulaPtr> atom = "an atom P(x, ...)";
const x3::rule<struct quant_c, FormulaPtr> quantified = "a quantifier";
const x3::rule<struct quant_kw_c, FormulaKind> quant_kw = "'forall' or 'exists'";
const x3::rule<struct name_c, std::string> name = "a name";
const x3::rule<struct names_c, std::vector<std::string>> names = "a name";
const x3::rule<struct here_c, const char*> here = "a formula";
const x3::rule<struct number_c, double> number = "a number";
const x3::rule<struct close_paren_c> close_paren = "')'";
const x3::rule<struct close_args_c> close_args = "',' or ')'";
const x3::rule<struct colon_c> colon = "',' or ':'";
const x3::rule<struct end_c> end = "an operator (&, |, ->, <->) or the end of the formula";

const auto name_def = !keyword >> x3::lexeme[name_start >> *name_rest];
const auto names_def = name > *(lit(',') > name);
const auto here_def = x3::raw[x3::eps][set_here];
const auto number_def = x3::double_;
const auto close_paren_def = lit(')');
const auto close_args_def = lit(')');
const auto colon_def = lit(':');
const auto end_def = x3::eoi;
const auto quant_kw_def = x3::lexeme[quant_symbols >> !name_rest];
const auto exponent = lit('[') > lit('p') > lit('=') > number > lit(']');
const auto quantified_def = (here >> quant_kw > -exponent > names > colon > formula)[make_quant];
const auto atom_def = (here >> name >> lit('(') > names > close_args)[make_atom];
const auto unary_def = (here >> lit('~') > unary)[make_not] | (lit('(') > formula > close_paren)[set] | quantified[set] |
                       atom[set];
// The action sits on the whole (op > operand) so the expectation names the operand rule.
const auto conj_def = unary[set] >> *((lit('&') > unary)[fold<FormulaKind::conjunction>]);
const auto disj_def = conj[set] >> *((lit('|') > conj)[fold<FormulaKind::disjunction>]);
const auto implies_def = disj[set] >> -((lit("->") > implies)[fold<FormulaKind::implication>]);
const auto iff_def = implies[set] >> *((lit("<->") > implies)[fold<FormulaKind::equivalence>]);
const auto formula_def = quantified[set] | iff[set];

BOOST_SPIRIT_DEFINE(formula, iff, implies, disj, conj, unary, atom, quantified, quant_kw, name, names, here, number, close_paren,
                    close_args, colon, end)

}  // namespace

FormulaPtr parse_formula(std::string_view text, std::string_view source_name) {
  Text src{text, intern_file(source_name)};
  check_nesting(src);
  const char* first = text.data();
  const char* last = first + text.size();
  FormulaPtr out;
  const auto skipper = lit(' ') | '\t' | '\r' | '\n';
  auto ref = std::cref(src);
  const auto parser = x3::with<text_tag>(ref)[x3::eps > formula > end];
  try {
    bool ok = x3::phrase_parse(first, last, parser, skipper, out);
    if (!ok || !out) fail(src, first, "expected a formula, got " + token_at(src, first));
  } catch (const x3::expectation_failure<const char*>& e) {
    fail(src, e.where(), "expected " + e.which() + ", got " + token_at(src, e.where()));
  }
  return out;
}

}  // namespace mg::frontier::tarka
