// The rules grammar in Boost.Spirit X3 (the only rules file that includes Spirit). It reads
// token shapes; passes/rules/validate.cpp gives them meaning. Grammar (passes/README.md):
//   file    = { rule } ;
//   rule    = "rule" string "[" label "]" ":" term "=>" term [ "if" cond { "," cond } ] ";" ;
//   term    = "?" name | number | fn-call | "(" op-name { term } [ "{" attr { "," attr } "}" ] ")" ;
//   fn-call = name "(" [ "?" name { "," "?" name } ] ")" ;   (a computed constant)
//   attr    = name "=" ( "?" name | name "(" [ "?" name { "," "?" name } ] ")" | literal ) ;
//   cond    = name "(" [ arg { "," arg } ] ")" ;   arg = "?" name | integer ;
// Blanks and `//` comments separate tokens.
#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/spirit/home/x3.hpp>
#include <boost/spirit/home/x3/support/ast/variant.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes::rules::ast {
namespace x3 = boost::spirit::x3;
struct OpTerm;
struct Term : x3::variant<std::string, x3::forward_ast<OpTerm>> {
  using base_type::base_type;
  using base_type::operator=;
};
struct AttrEntry {
  std::string name;
  std::string value;  // raw token: ?var, [list], "string", number, word, fn(args)
};
struct OpTerm {
  std::string op;
  std::vector<Term> args;
  std::vector<AttrEntry> attrs;
};
struct CondAst {
  std::string name;
  std::vector<std::string> args;
};
struct RuleAst {
  std::string name;
  std::string label;
  Term lhs, rhs;
  std::vector<CondAst> conds;
};
}  // namespace mg::passes::rules::ast

BOOST_FUSION_ADAPT_STRUCT(mg::passes::rules::ast::AttrEntry, name, value)
BOOST_FUSION_ADAPT_STRUCT(mg::passes::rules::ast::OpTerm, op, args, attrs)
BOOST_FUSION_ADAPT_STRUCT(mg::passes::rules::ast::CondAst, name, args)
BOOST_FUSION_ADAPT_STRUCT(mg::passes::rules::ast::RuleAst, name, label, lhs, rhs, conds)

namespace mg::passes::rules {

namespace grammar {
namespace x3 = boost::spirit::x3;
using x3::char_;
using x3::lexeme;
using x3::lit;
using x3::raw;

// ASCII sets, not x3::alpha/alnum/digit/space (std::isalpha & co. on a plain char are
// undefined for bytes >= 0x80, which a rules file may hold).
const auto letter = char_("a-zA-Z");
const auto letter_or_digit = char_("a-zA-Z0-9");
const auto digit = char_("0-9");
const auto name_def = lexeme[(letter | char_('_')) >> *(letter_or_digit | char_('_') | char_('.'))];
const auto name_raw = lexeme[(letter | lit('_')) >> *(letter_or_digit | lit('_') | lit('.'))];
x3::rule<class var_tok_, std::string> const var_tok = "a ?variable";
x3::rule<class number_tok_, std::string> const number_tok = "a number";
x3::rule<class int_tok_, std::string> const int_tok = "an integer";
x3::rule<class call_tok_, std::string> const call_tok = "a computed constant (fn(?a, ...))";
const auto var_tok_def = raw[lexeme[lit('?') >> name_raw]];
const auto number_tok_def = raw[lexeme[x3::double_]];
const auto int_tok_def = raw[lexeme[-char_('-') >> +digit]];
const auto call_tok_def = raw[name_raw >> lit('(') >> -(lexeme[lit('?') >> name_raw] % ',') >> lit(')')];
const auto quoted = lexeme['"' >> *(char_ - '"' - '\n') >> '"'];

x3::rule<class term_, ast::Term> const term = "a term (?var, number or (op ...))";
x3::rule<class op_term_, ast::OpTerm> const op_term = "(op ...)";
x3::rule<class attr_, ast::AttrEntry> const attr_entry = "an attribute (name = value)";
x3::rule<class attr_value_, std::string> const attr_value = "an attribute value";
x3::rule<class cond_, ast::CondAst> const cond = "a condition (name(args))";
x3::rule<class rule_, ast::RuleAst> const one_rule = "a rule";
x3::rule<class name_, std::string> const name = "a name";
x3::rule<class string_, std::string> const string = "a quoted name";

const auto string_def = quoted;
const auto term_def = var_tok | number_tok | call_tok | op_term;
const auto op_term_def = '(' > name > *term > -('{' > (attr_entry % ',') > '}') > ')';
const auto attr_entry_def = name > '=' > attr_value;
const auto attr_value_def =
    raw[lexeme[lit('?') >> name_raw] | (lit('[') >> -(x3::double_ % ',') >> lit(']')) |
        (name_raw >> lit('(') >> -(lexeme[lit('?') >> name_raw] % ',') >> lit(')')) | quoted | x3::double_ |
        name_raw];
const auto cond_def = name > '(' > -((var_tok | int_tok) % ',') > ')';
const auto one_rule_def = lit("rule") > string > '[' > name > ']' > ':' > term > "=>" > term >
                      -(lit("if") > (cond % ',')) > ';';
BOOST_SPIRIT_DEFINE(var_tok, number_tok, int_tok, call_tok, term, op_term, attr_entry, attr_value, cond, one_rule, string, name)

const auto skipper = char_(" \t\r\n\f\v") | (lit("//") >> *(char_ - '\n'));
}  // namespace grammar

namespace {

std::pair<int, int> line_col(std::string_view text, const char* at) {
  int line = 1, col = 1;
  for (const char* p = text.data(); p < at && p < text.data() + text.size(); ++p) {
    if (*p == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

[[noreturn]] void rule_error(const std::string& rule, const std::string& msg) {
  throw UserError("rule '" + rule + "': " + msg);
}

double parse_number(const std::string& text) {
  std::string t = text;
  bool minus = !t.empty() && t[0] == '-';
  std::string body = minus ? t.substr(1) : t;
  double v;
  if (body == "inf") v = INFINITY;
  else if (body == "nan") v = NAN;
  else v = std::strtod(body.c_str(), nullptr);
  return minus ? -v : v;
}

bool is_integer_text(const std::string& t) {
  if (t.empty()) return false;
  std::size_t i = t[0] == '-' ? 1 : 0;
  if (i == t.size()) return false;
  for (; i < t.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
  return true;
}

std::string strip_blanks(const std::string& s) {
  std::string o;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) o += c;
  return o;
}

AttrExpr convert_attr(const std::string& rule, const std::string& raw_text) {
  AttrExpr e;
  std::string t = strip_blanks(raw_text);
  if (t.empty()) rule_error(rule, "empty attribute value");
  if (t[0] == '?') {
    e.kind = AttrExpr::Kind::var;
    e.name = t.substr(1);
  } else if (t[0] == '[') {
    I64List items;
    std::string inner = t.substr(1, t.size() - 2), cur;
    for (std::size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || inner[i] == ',') {
        if (!cur.empty()) {
          if (!is_integer_text(cur)) rule_error(rule, "list attributes hold integers, got '" + cur + "'");
          items.push_back(std::stoll(cur));
        }
        cur.clear();
      } else {
        cur += inner[i];
      }
    }
    e.literal = items;
  } else if (t[0] == '"') {
    e.literal = std::string(t.substr(1, t.size() - 2));
  } else if (auto paren = t.find('('); paren != std::string::npos) {
    e.kind = AttrExpr::Kind::call;
    e.name = t.substr(0, paren);
    std::string inner = t.substr(paren + 1, t.size() - paren - 2), cur;
    for (std::size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || inner[i] == ',') {
        if (!cur.empty()) e.args.push_back(cur[0] == '?' ? cur.substr(1) : cur);
        cur.clear();
      } else {
        cur += inner[i];
      }
    }
  } else if (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' || t[0] == '+' || t[0] == '.') {
    if (is_integer_text(t)) e.literal = static_cast<std::int64_t>(std::stoll(t));
    else e.literal = parse_number(t);
  } else if (t == "true" || t == "false") {
    e.literal = t == "true";
  } else if (auto dt = dtype_from_name(t)) {
    e.literal = *dt;
  } else if (t == "inf" || t == "nan") {
    e.literal = parse_number(t);
  } else {
    rule_error(rule, "attribute value '" + t + "' is not a literal, ?variable or function call");
  }
  return e;
}

struct TermConverter {
  const std::string& rule;
  Pattern operator()(const std::string& tok) const {
    Pattern p;
    if (!tok.empty() && tok[0] == '?') {
      p.kind = Pattern::Kind::var;
      p.var = strip_blanks(tok).substr(1);
    } else if (tok.find('(') != std::string::npos) {
      p.kind = Pattern::Kind::constant;
      p.computed = convert_attr(rule, tok);
    } else {
      p.kind = Pattern::Kind::constant;
      p.value = parse_number(strip_blanks(tok));
      if (std::isnan(p.value)) rule_error(rule, "NaN cannot be a pattern constant");
    }
    return p;
  }
  Pattern operator()(const ast::OpTerm& t) const {
    Pattern p;
    p.kind = Pattern::Kind::op;
    p.op = ir::find_op(t.op);
    if (!p.op) rule_error(rule, "unknown op '" + t.op + "'");
    for (const ast::Term& a : t.args) p.args.push_back(boost::apply_visitor(*this, a));
    for (const ast::AttrEntry& a : t.attrs) p.attrs.emplace_back(a.name, convert_attr(rule, a.value));
    return p;
  }
};

}  // namespace

RuleSet parse_rules(std::string_view text, std::string_view file) {
  namespace x3 = boost::spirit::x3;
  std::vector<ast::RuleAst> parsed;
  const char* first = text.data();
  const char* const last = text.data() + text.size();
  try {
    bool ok = x3::phrase_parse(first, last, *grammar::one_rule, grammar::skipper, parsed);
    // Skip trailing blanks/comments.
    x3::phrase_parse(first, last, x3::eps, grammar::skipper);
    if (!ok || first != last) {
      auto [l, c] = line_col(text, first);
      throw UserError(std::string(file) + ":" + std::to_string(l) + ":" + std::to_string(c) +
                      ": expected a rule (rule \"name\" [label]: lhs => rhs;)");
    }
  } catch (const x3::expectation_failure<const char*>& e) {
    auto [l, c] = line_col(text, e.where());
    std::string got = e.where() == last ? "end of input" : "'" + std::string(e.where(), std::min<std::size_t>(12, last - e.where())) + "'";
    throw UserError(std::string(file) + ":" + std::to_string(l) + ":" + std::to_string(c) + ": expected " +
                    e.which() + ", got " + got);
  }
  RuleSet set;
  for (const ast::RuleAst& a : parsed) {
    Rule r;
    r.name = a.name;
    auto label = label_from_name(a.label);
    if (!label || *label == Label::refuted || *label == Label::unproven)
      rule_error(a.name, "label must be exact, real or structural, got '" + a.label + "'");
    r.declared = *label;
    TermConverter conv{r.name};
    r.lhs = boost::apply_visitor(conv, a.lhs);
    r.rhs = boost::apply_visitor(conv, a.rhs);
    for (const ast::CondAst& c : a.conds) {
      Cond cond{c.name, {}};
      for (auto& arg : c.args) cond.args.push_back(strip_blanks(arg));
      r.conds.push_back(std::move(cond));
    }
    r.priority = static_cast<int>(set.rules.size());
    for (const Rule& other : set.rules)
      if (other.name == r.name) rule_error(r.name, "defined twice");
    detail::validate(r);
    set.rules.push_back(std::move(r));
  }
  set.index();
  return set;
}

}  // namespace mg::passes::rules
