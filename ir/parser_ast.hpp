// Internal to the text-IR parser (not installed API): the syntax tree the Spirit X3
// grammar (ir/parser.cpp) produces and the graph builder (ir/parser_build.cpp) consumes,
// plus the shared error reporting. The grammar only recognises shapes of tokens; every
// token keeps its raw text and position so that numbers, escapes and names are checked
// (range, kind, definedness) by the builder, with an exact line:column.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/optional.hpp>

#include "minigrad/ir/graph.hpp"

namespace mg::ir::text {

struct Source {
  std::string_view text;
  const char* file;  // interned
};

// Throws ParseError at `at` (a pointer into src.text; nullptr or end: end of input).
[[noreturn]] void fail_at(const Source& src, const char* at, const std::string& message);
// The token at `at` for "got ...": 'foo', '%x', "end of input", a byte as '\xff'.
std::string describe_token(const Source& src, const char* at);

// Regions nest; the grammar and the builder recurse once per level. Deeper input is
// rejected before parsing so the stack stays bounded.
inline constexpr int kMaxNesting = 64;

namespace ast {

struct Tagged {
  const char* at = nullptr;  // first character of the construct (after whitespace)
};
// A raw token: a number (-12, 0.5, 1e-3, inf, -nan), a word (true, f32, an op name) or a
// string literal including its quotes and escapes.
struct Tok : Tagged {
  std::string text;
};
// %12, %x, %"any name": `text` is what follows the '%'.
struct Name : Tagged {
  std::string text;
};
// An attribute value or a constant's literal: a scalar token or a [list] of them.
struct Lit : Tagged {
  bool is_list = false;
  std::vector<Tok> items;
};
struct Attr : Tagged {
  Tok name;
  Lit value;
};
struct Type : Tagged {
  Tok dtype;
  std::vector<Tok> dims;
};
struct Loc : Tagged {
  Tok file;
  Tok line;
  boost::optional<Tok> column;
};
struct Param : Tagged {
  Name name;
  Type type;
  Role role = Role::forward;  // `grad`, `grad2` or `update` after the type
  boost::optional<Loc> loc;
};
struct OpCall : Tagged {
  Tok op;
  std::vector<Name> args;
  boost::optional<std::vector<Attr>> attrs;
};
// The right-hand side: `constant <lit>` or `op(args) {attrs}`.
struct Rhs : Tagged {
  bool is_constant = false;
  Lit literal;
  OpCall call;
};
struct Graph;
struct Stmt : Tagged {
  Name name;
  Rhs rhs;
  Type type;
  Role role = Role::forward;  // `grad`, `grad2` or `update` after the type
  boost::optional<Loc> loc;
  std::vector<Graph> regions;
};
struct Result : Tagged {
  boost::optional<Tok> name;  // a bare name or a string token
  Name value;
};
struct Graph : Tagged {
  std::vector<Param> params;
  std::vector<Stmt> stmts;
  std::vector<Result> results;
};

}  // namespace ast

// The grammar (Spirit X3, ir/parser.cpp): text -> syntax tree, or ParseError.
ast::Graph parse_syntax(const Source& src);
// The builder (ir/parser_build.cpp): syntax tree -> verified Graph, or ParseError.
std::unique_ptr<Graph> build_graph(const Source& src, const ast::Graph& tree);

}  // namespace mg::ir::text
