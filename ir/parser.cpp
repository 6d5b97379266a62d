// The text-IR grammar in Boost.Spirit X3 (the only file that includes Spirit), error
// formatting, and the parse()/parse_file() entry points. The grammar is documented in
// ir/README.md and must stay the inverse of ir/printer.cpp. It recognises token shapes
// only; ranges, escapes and meaning are checked by the builder (ir/parser_build.cpp).
// Every expectation point (`>`) names what it wants, so a failure reads
// "expected <name>, got <token>"; nesting is bounded before parsing (kMaxNesting).
#include "minigrad/ir/parser.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/spirit/home/x3.hpp>

#include "minigrad/ir/parser_ast.hpp"

BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Lit, is_list, items)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Attr, name, value)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Type, dtype, dims)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Loc, file, line, column)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Param, name, type, role, loc)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::OpCall, op, args, attrs)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Stmt, name, rhs, type, role, loc, regions)
BOOST_FUSION_ADAPT_STRUCT(mg::ir::text::ast::Graph, params, stmts, results)

namespace mg {

namespace {
std::string with_position(const std::string& m, const char* file, std::uint32_t line, std::uint32_t col) {
  return std::string(file) + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + m;
}
}  // namespace

ParseError::ParseError(std::string message, const char* file, std::uint32_t line, std::uint32_t column)
    : UserError(message, SourceLoc{file, line, column}), full_(with_position(message, file, line, column)) {}

}  // namespace mg

namespace mg::ir::text {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// Skips what the grammar's skipper skips: blanks and // comments.
const char* skip_blank(const char* p, const char* end) {
  while (p < end) {
    if (is_space(*p)) ++p;
    else if (*p == '/' && p + 1 < end && p[1] == '/')
      while (p < end && *p != '\n') ++p;
    else break;
  }
  return p;
}

// One byte as a person can read it in a message.
std::string show_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static const char* hex = "0123456789abcdef";
  return std::string("\\x") + hex[u >> 4] + hex[u & 15];
}

}  // namespace

std::string describe_token(const Source& src, const char* at) {
  const char* end = src.text.data() + src.text.size();
  if (!at) return "end of input";
  const char* p = skip_blank(at, end);
  if (p >= end) return "end of input";
  const char* q = p + 1;
  if (*p == '%' || is_name_char(*p) || *p == '-') {
    while (q < end && is_name_char(*q)) ++q;
  } else if (*p == '"') {
    while (q < end && *q != '"' && *q != '\n' && q - p < 40) q += (*q == '\\' && q + 1 < end) ? 2 : 1;
    if (q < end && *q == '"') ++q;
  }
  std::string tok;
  for (const char* c = p; c < q && c - p < 40; ++c) tok += show_byte(*c);
  if (q - p > 40) tok += "...";
  return "'" + tok + "'";
}

void fail_at(const Source& src, const char* at, const std::string& message) {
  const char* begin = src.text.data();
  const char* end = begin + src.text.size();
  if (!at || at > end || at < begin) at = end;
  if (at == end)  // point just past the last token, not at an empty last line
    while (at > begin && is_space(at[-1])) --at;
  std::uint32_t line = 1;
  const char* line_start = begin;
  for (const char* p = begin; p < at; ++p)
    if (*p == '\n') {
      ++line;
      line_start = p + 1;
    }
  const char* line_end = line_start;
  while (line_end < end && *line_end != '\n') ++line_end;
  auto col = static_cast<std::size_t>(at - line_start);
  // Show at most ~100 columns around the caret; bytes that would shift it become '?'.
  std::size_t from = col > 60 ? col - 60 : 0;
  std::size_t to = std::min<std::size_t>(static_cast<std::size_t>(line_end - line_start), from + 120);
  std::string shown = from ? "..." : "";
  for (std::size_t i = from; i < to; ++i) {
    char c = line_start[i];
    shown += c == '\t' ? ' ' : (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f ? c : '?');
  }
  std::string caret(col - from + (from ? 3 : 0), ' ');
  throw ParseError(message + "\n" + shown + "\n" + caret + "^", src.file, line,
                   static_cast<std::uint32_t>(col + 1));
}

namespace {

// Rejects nesting deeper than kMaxNesting before the recursive grammar sees it.
void check_nesting(const Source& src) {
  const char* p = src.text.data();
  const char* end = p + src.text.size();
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      for (++p; p < end && *p != '"' && *p != '\n'; ++p)
        if (*p == '\\' && p + 1 < end) ++p;
    } else if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n') ++p;
    } else if (c == '{' || c == '(' || c == '[') {
      if (++depth > kMaxNesting + 4)
        fail_at(src, p, "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    } else if (c == '}' || c == ')' || c == ']') {
      depth = depth > 0 ? depth - 1 : 0;
    }
    if (p < end) ++p;
  }
}

namespace x3 = boost::spirit::x3;
using x3::char_;
using x3::lexeme;
using x3::lit;

// Every tagged rule records where its match starts (after skipping blanks).
struct tag_position {
  template <class It, class Attr, class Ctx>
  void on_success(const It& first, const It&, Attr& attr, const Ctx&) const {
    if constexpr (requires { attr.at = first; }) attr.at = first;
  }
};

// Rules whose right side has an action do not get on_success with their attribute, so
// these actions record the position themselves (raw[] starts after skipped blanks).
const auto set_text = [](auto& ctx) {
  auto& range = x3::_attr(ctx);
  x3::_val(ctx).at = range.begin();
  x3::_val(ctx).text.assign(range.begin(), range.end());
};
const auto set_name = [](auto& ctx) {  // drops the leading '%'
  auto& range = x3::_attr(ctx);
  x3::_val(ctx).at = range.begin();
  x3::_val(ctx).text.assign(range.begin() + 1, range.end());
};
const auto set_list = [](auto& ctx) { x3::_val(ctx) = x3::_attr(ctx); };
const auto set_scalar = [](auto& ctx) {
  x3::_val(ctx).at = x3::_attr(ctx).at;
  x3::_val(ctx).is_list = false;
  x3::_val(ctx).items = {x3::_attr(ctx)};
};
const auto set_constant = [](auto& ctx) {
  x3::_val(ctx).is_constant = true;
  x3::_val(ctx).literal = x3::_attr(ctx);
};
const auto set_named_result = [](auto& ctx) {
  auto& r = x3::_val(ctx);
  r.name = boost::fusion::at_c<0>(x3::_attr(ctx));
  r.value = boost::fusion::at_c<1>(x3::_attr(ctx));
  r.at = r.name->at;
};
const auto set_result = [](auto& ctx) {
  x3::_val(ctx).value = x3::_attr(ctx);
  x3::_val(ctx).at = x3::_attr(ctx).at;
};
const auto set_call = [](auto& ctx) { x3::_val(ctx).call = x3::_attr(ctx); };

// Character classes spelled as ranges: no <cctype> on bytes >= 0x80.
const auto name_start = char_('a', 'z') | char_('A', 'Z') | char_('_');
const auto name_char = name_start | char_('0', '9') | char_('.');
const auto digit = char_('0', '9');
const auto control = char_('\x00', '\x1f') | char_('\x7f');
const auto skipper = lit(' ') | '\t' | '\r' | '\n' | (lit("//") >> *(char_ - '\n'));

#define MG_RULE(id, attr, what) \
  struct id##_class;            \
  const x3::rule<id##_class, attr> id = what
#define MG_TAGGED(id, attr, what)               \
  struct id##_class : tag_position {};          \
  const x3::rule<id##_class, attr> id = what

MG_RULE(kw_graph, x3::unused_type, "'graph'");
MG_RULE(kw_region, x3::unused_type, "'region'");
MG_RULE(kw_constant, x3::unused_type, "'constant'");
MG_RULE(kw_return, x3::unused_type, "a statement (%name = ...) or 'return'");
MG_RULE(kw_role, mg::ir::Role, "a role ('grad', 'grad2' or 'update')");
MG_RULE(kw_loc, x3::unused_type, "'loc'");
MG_RULE(close_quote, x3::unused_type, "a closing '\"'");
MG_RULE(close_paren, x3::unused_type, "',' or ')'");
MG_RULE(close_bracket, x3::unused_type, "',' or ']'");
MG_RULE(close_brace, x3::unused_type, "',' or '}'");
MG_RULE(end_of_input, x3::unused_type, "end of input");
MG_RULE(escaped, x3::unused_type, "an escaped character");
MG_RULE(name_body, x3::unused_type, "a name after '%' (digits, a name or a string)");
MG_TAGGED(word, ast::Tok, "a name");
MG_TAGGED(number, ast::Tok, "a number");
MG_TAGGED(integer, ast::Tok, "an integer");
MG_TAGGED(string, ast::Tok, "a string");
MG_TAGGED(scalar, ast::Tok, "a value (number, true/false, dtype or string)");
MG_TAGGED(out_name, ast::Tok, "an output name");
MG_TAGGED(vname, ast::Name, "a value name (%name)");
MG_TAGGED(literal, ast::Lit, "a value or [list]");
MG_TAGGED(list, ast::Lit, "'['");
MG_TAGGED(attr_entry, ast::Attr, "an attribute (name = value)");
MG_RULE(attr_dict, std::vector<ast::Attr>, "'{'");
MG_TAGGED(type, ast::Type, "a type (e.g. f64[2,3])");
MG_TAGGED(loc, ast::Loc, "a location");
MG_TAGGED(param, ast::Param, "a parameter (%name: type)");
MG_RULE(params, std::vector<ast::Param>, "'('");
MG_RULE(args, std::vector<ast::Name>, "'('");
MG_TAGGED(op_call, ast::OpCall, "an op name or 'constant'");
MG_TAGGED(rhs, ast::Rhs, "an op name or 'constant'");
MG_TAGGED(stmt, ast::Stmt, "a statement");
MG_TAGGED(result, ast::Result, "a result (name = %value)");
MG_TAGGED(body, ast::Graph, "a graph body");
MG_TAGGED(region, ast::Graph, "'region'");
MG_TAGGED(graph, ast::Graph, "'graph'");

auto keyword(const char* s) { return lexeme[lit(s) >> !name_char]; }

const auto kw_graph_def = keyword("graph");
const auto kw_region_def = keyword("region");
const auto kw_constant_def = keyword("constant");
const auto kw_return_def = keyword("return");
// A node's role (ir::Role) after its type; forward is written as nothing.
struct RoleSymbols : x3::symbols<mg::ir::Role> {
  RoleSymbols() {
    add("grad", mg::ir::Role::adjoint)("grad2", mg::ir::Role::second_order)("update", mg::ir::Role::update);
  }
};
const RoleSymbols role_symbols;
const auto kw_role_def = lexeme[role_symbols >> !name_char];
const auto role = kw_role | x3::attr(mg::ir::Role::forward);
const auto kw_loc_def = keyword("loc");
const auto close_quote_def = lit('"');
const auto close_paren_def = lit(')');
const auto close_bracket_def = lit(']');
const auto close_brace_def = lit('}');
const auto end_of_input_def = x3::eoi;

const auto escaped_def = char_ - control;
const auto quoted = lit('"') > *((lit('\\') > escaped) | (char_ - '"' - '\\' - control)) > close_quote;
const auto name_body_def = +digit | (name_start >> *name_char) | quoted;
const auto word_def = x3::raw[lexeme[name_start >> *name_char]][set_text];
const auto number_def =
    x3::raw[lexeme[-lit('-') >> (((lit("inf") | lit("nan")) >> !name_char) |
                                 (+digit >> -(lit('.') >> *digit) >>
                                  -((lit('e') | 'E') >> -(lit('+') | '-') >> +digit)))]][set_text];
const auto integer_def = x3::raw[lexeme[-lit('-') >> +digit]][set_text];
const auto string_def = x3::raw[lexeme[quoted]][set_text];
const auto scalar_def = number | string | word;
const auto out_name_def = word | string;
const auto vname_def = x3::raw[lexeme[lit('%') > name_body]][set_name];
const auto list_def = lit('[') >> x3::attr(true) > -(scalar % ',') > close_bracket;
const auto literal_def = list[set_list] | scalar[set_scalar];
const auto attr_entry_def = word > '=' > literal;
const auto attr_dict_def = lit('{') > -(attr_entry % ',') > close_brace;
const auto type_def = word > '[' > -(integer % ',') > close_bracket;
const auto loc_def = kw_loc > '(' > string > ':' > integer > -(lit(':') > integer) > ')';
const auto param_def = vname > ':' > type > role > -loc;
const auto params_def = lit('(') > -(param % ',') > close_paren;
const auto args_def = lit('(') > -(vname % ',') > close_paren;
const auto op_call_def = word > args > -attr_dict;
const auto rhs_def = (kw_constant > literal)[set_constant] | op_call[set_call];
const auto stmt_def = vname > '=' > rhs > ':' > type > role > -loc > *region;
const auto result_def = (out_name > '=' > vname)[set_named_result] | vname[set_result];
const auto body_def = params > '{' > *stmt > kw_return > -(result % ',') > close_brace;
const auto region_def = kw_region > body;
const auto graph_def = kw_graph > body;

BOOST_SPIRIT_DEFINE(kw_graph, kw_region, kw_constant, kw_return, kw_role, kw_loc, close_quote,
                    close_paren, close_bracket, close_brace, end_of_input, escaped, name_body, word, number,
                    integer, string, scalar, out_name, vname, list, literal, attr_entry, attr_dict, type, loc,
                    param, params, args, op_call, rhs, stmt, result, body, region, graph)

#undef MG_RULE
#undef MG_TAGGED

}  // namespace

ast::Graph parse_syntax(const Source& src) {
  check_nesting(src);
  const char* first = src.text.data();
  const char* last = first + src.text.size();
  ast::Graph tree;
  try {
    bool ok = x3::phrase_parse(first, last, x3::eps > graph > end_of_input, skipper, tree);
    if (!ok) fail_at(src, skip_blank(first, last), "expected 'graph', got " + describe_token(src, first));
  } catch (const x3::expectation_failure<const char*>& e) {
    const char* at = skip_blank(e.where(), last);
    fail_at(src, at, "expected " + e.which() + ", got " + describe_token(src, at));
  }
  return tree;
}

}  // namespace mg::ir::text

namespace mg::ir {

std::unique_ptr<Graph> parse(std::string_view text, std::string_view filename) {
  text::Source src{text, intern_file(filename)};
  text::ast::Graph tree = text::parse_syntax(src);
  return text::build_graph(src, tree);
}

std::unique_ptr<Graph> parse_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError("cannot read IR file '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open IR file '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw UserError("cannot read IR file '" + path + "'");
  std::string text = buf.str();
  return parse(text, path);
}

}  // namespace mg::ir
