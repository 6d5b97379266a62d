// Text IR errors: each kind of mistake (unknown op or attribute, wrong attribute kind,
// undefined or duplicate names, type mismatches, huge numbers, bad escapes, truncation,
// garbage bytes, deep nesting) is a ParseError with file:line:column, what was expected
// and the line with a caret; and a corruption sweep (every truncation point of a real
// printed graph, seeded random byte edits) never crashes, hangs or escapes as another
// exception. Also: ir/README.md names every registered op and attribute.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/grad.hpp"

namespace mg::ir {
namespace {

using namespace std::string_literals;

// What a failing parse reported: the exception's line, column and full text.
struct Failure {
  bool threw = false;
  std::uint32_t line = 0, column = 0;
  std::string what;
};

Failure parse_failure(std::string_view text) {
  Failure f;
  try {
    parse(text, "bad.mgir");
  } catch (const ParseError& e) {
    f = {true, e.line(), e.column(), e.what()};
  }
  return f;
}

// Expects a ParseError at line:column whose message contains `needle`.
void expect_error(const std::string& text, std::uint32_t line, std::uint32_t column, const std::string& needle) {
  Failure f = parse_failure(text);
  ASSERT_TRUE(f.threw) << "no error for:\n" << text;
  EXPECT_EQ(f.line, line) << f.what;
  EXPECT_EQ(f.column, column) << f.what;
  EXPECT_NE(f.what.find(needle), std::string::npos) << f.what;
  std::string prefix = "bad.mgir:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  EXPECT_EQ(f.what.rfind(prefix, 0), 0u) << f.what;
  EXPECT_NE(f.what.find("\n"), std::string::npos) << f.what;
  EXPECT_EQ(f.what.back(), '^') << f.what;
}

const std::string kHead = "graph(%x: f64[2,3]) {\n";

TEST(TextIrErrors, MessageShowsTheLineAndACaret) {
  Failure f = parse_failure(kHead + "  %1 = frobnicate(%x) : f64[2,3]\n  return %1\n}\n");
  ASSERT_TRUE(f.threw);
  EXPECT_EQ(f.what, "bad.mgir:2:8: unknown op 'frobnicate'\n  %1 = frobnicate(%x) : f64[2,3]\n       ^");
  f = parse_failure(kHead + "  %1 = exp(%x) f64[2,3]\n  return %1\n}\n");
  EXPECT_EQ(f.what, "bad.mgir:2:16: expected ':', got 'f64'\n  %1 = exp(%x) f64[2,3]\n               ^");
}

TEST(TextIrErrors, EachKindOfMistakeIsReportedWhereItIs) {
  auto stmt = [](const std::string& s) { return kHead + "  " + s + "\n  return %1\n}\n"; };
  expect_error(stmt("%1 = exp(%y) : f64[2,3]"), 2, 12, "undefined value %y");
  expect_error(stmt("%1 = exp(%x) {bogus = 1} : f64[2,3]"), 2, 17, "op 'exp' has no attribute 'bogus'");
  expect_error(stmt("%1 = reduce_sum(%x) {axes = 1, keepdim = true} : f64[2,1]"), 2, 31, "expected an i64 list");
  expect_error(stmt("%1 = reduce_sum(%x) {axes = [1], keepdim = 1} : f64[2,1]"), 2, 46, "(true or false)");
  expect_error(stmt("%1 = reduce_sum(%x) {axes = [1], axes = [1]} : f64[2,1]"), 2, 36, "given twice");
  expect_error(stmt("%1 = cumsum(%x) {axis = 1.5} : f64[2,3]"), 2, 27, "(an integer), got '1.5'");
  expect_error(stmt("%1 = cast(%x) {dtype = f16} : f16[2,3]"), 2, 26, "expected a dtype");
  expect_error(stmt("%1 = gelu(%x) {approximate = none} : f64[2,3]"), 2, 32, "expected a string");
  expect_error(stmt("%1 = exp(%x) : f64[3,2]"), 2, 18, "expected type f64[2,3] (what 'exp' infers");
  expect_error(stmt("%1 = add(%x) : f64[2,3]"), 2, 8, "takes 2 input(s), got 1");
  expect_error(stmt("%1 = reduce_sum(%x) : f64[2,3]"), 2, 8, "missing required attribute 'axes'");
  expect_error(stmt("%1 = reshape(%x) {shape = [7]} : f64[7]"), 2, 8, "reshape");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]\n  %1 = neg(%x) : f64[2,3]\n  return %1\n}\n", 3, 3,
               "value %1 is already defined");
  expect_error("graph(%x: f64[2], %x: f64[2]) {\n  return %x\n}\n", 1, 19, "duplicate input name %x");
  expect_error("graph(%7: f64[2]) {\n  return %7\n}\n", 1, 7, "expected a named input");
  expect_error("graph(%\"\": f64[2]) {\n  return %\"\"\n}\n", 1, 7, "non-empty name");
  expect_error(kHead + "  return a = %x, a = %x\n}\n", 2, 18, "duplicate output name 'a'");
  expect_error(kHead + "  %1 = constant [1.0, 2.0] : f64[3]\n  return %1\n}\n", 2, 17, "expected 3 element(s)");
  expect_error(kHead + "  %1 = constant [1, 2.5] : i64[2]\n  return %1\n}\n", 2, 21, "got '2.5'");
  expect_error(kHead + "  %1 = constant 1 : i64[] {\n", 2, 27, "expected");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]\n    region() {\n      return\n    }\n  %2 = constant 1.0 : f64[]\n"
                   "    region() {\n      return\n    }\n  return %1\n}\n",
               7, 5, "only op nodes own regions");
}

TEST(TextIrErrors, HugeNumbersAreRangeErrors) {
  auto stmt = [](const std::string& s) { return kHead + "  " + s + "\n  return %1\n}\n"; };
  expect_error(stmt("%1 = cumsum(%x) {axis = 99999999999999999999} : f64[2,3]"), 2, 27, "out of range of i64");
  expect_error(stmt("%1 = leaky_relu(%x) {alpha = 1e999} : f64[2,3]"), 2, 32, "out of range of f64");
  expect_error("graph(%x: f64[99999999999999999999]) {\n  return %x\n}\n", 1, 15, "out of range of i64");
  expect_error("graph(%x: f64[-1]) {\n  return %x\n}\n", 1, 15, "dimension >= 0");
  expect_error("graph(%x: f64[1000000000,1000000000,1000000000]) {\n  return %x\n}\n", 1, 26, "too many elements");
  expect_error(kHead + "  %1 = constant 1.0 : f64[100000,100000]\n  return %1\n}\n", 2, 17, "too large");
  expect_error(kHead + "  %1 = constant [1e39] : f32[1]\n  return %1\n}\n", 2, 18, "out of range of f32");
  expect_error(stmt("%1 = exp(%x) : f64[2,3]  loc(\"a\":4294967296)"), 2, 36, "fits 32 bits");
  expect_error(stmt("%1 = exp(%x) : f64[2,3]  loc(\"a\":0)"), 2, 36, "line number >= 1");
}

TEST(TextIrErrors, SyntaxTruncationAndGarbage) {
  expect_error("", 1, 1, "expected 'graph', got end of input");
  expect_error("   \n  // just a comment\n", 2, 20, "expected 'graph'");
  expect_error("grph(%x: f64[2]) {}", 1, 1, "expected 'graph', got 'grph'");
  expect_error(kHead + "  %1 = exp(", 2, 12, "expected ',' or ')', got end of input");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]\n", 2, 26, "a statement (%name = ...) or 'return'");
  expect_error(kHead + "  return %x\n", 2, 12, "expected ',' or '}'");
  expect_error(kHead + "  return %x\n}\ngraph", 4, 1, "expected end of input, got 'graph'");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3] \xff\n  return %1\n}\n", 2, 27, "got '\\xff'");
  expect_error(kHead + "  %1 = exp(%x)\0 : f64[2,3]\n"s, 2, 15, "got '\\x00'");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]  loc(\"ab\n", 2, 35, "a closing '\"'");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]  loc(\"a\\qb\":1)\n  return %1\n}\n", 2, 34, "unknown escape '\\q'");
  expect_error(kHead + "  %1 = exp(%x) : f64[2,3]  loc(\"a\\x4\":1)\n  return %1\n}\n", 2, 34, "two hex digits");
  expect_error(kHead + "  % = exp(%x) : f64[2,3]\n", 2, 5, "a name after '%'");
}

TEST(TextIrErrors, DeepNestingIsRejectedNotRecursedInto) {
  std::string deep = kHead + "  %1 = exp(%x) : f64[2,3]\n";
  for (int i = 0; i < 100000; ++i) deep += "region(%a: f64[2,3]) {\n %1 = exp(%a) : f64[2,3]\n";
  Failure f = parse_failure(deep);
  ASSERT_TRUE(f.threw);
  EXPECT_NE(f.what.find("nesting deeper than"), std::string::npos) << f.what.substr(0, 200);
  std::string brackets = kHead + "  %1 = reduce_sum(%x) {axes = " + std::string(200000, '[') + "\n";
  EXPECT_TRUE(parse_failure(brackets).threw);
  // Nesting within the limit parses.
  std::string ok = kHead + "  %1 = exp(%x) : f64[2,3]\n";
  std::string close;
  for (int i = 0; i < 40; ++i) {
    ok += "region(%a: f64[]) {\n %1 = neg(%a) : f64[]\n";
    close = "return %1\n}\n" + close;
  }
  // The parser takes the nesting; the verifier then rejects regions on ops that own none.
  Failure nested = parse_failure(ok + close + "return %1\n}\n");
  EXPECT_EQ(nested.what.find("nesting deeper than"), std::string::npos) << nested.what;
  EXPECT_NE(nested.what.find("owns no regions"), std::string::npos) << nested.what;
}

TEST(TextIrErrors, RegionsOnOpsThatOwnNoneAreRejected) {
  // Accepted before; emit-c then died with std::bad_function_call.
  Failure f = parse_failure(kHead + "  %1 = exp(%x) : f64[2,3]\n    region() {\n      return\n    }\n  return %1\n}\n");
  ASSERT_TRUE(f.threw);
  EXPECT_NE(f.what.find("op 'exp' owns no regions"), std::string::npos) << f.what;
}

// A printed graph with most features: inputs, constants, attributes of several kinds,
// adjoint nodes from the grad pass, locations and named outputs.
std::string sample_text() {
  Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}}, SourceLoc{"model.cpp", 3, 5});
  Value w = g.add_input("w", Type{f64, {3}});
  LocScope at(SourceLoc{"model.cpp", 9, 2}, true);
  Value h = tanh(mul(x, broadcast_to(w, {2, 3})));
  Value c = g.add_constant(Array::from<double>({2, 3}, {0.5, -1, 2, 1e-3, 7, 0.25}));
  Value s = reduce_sum(mul(h, c), {0, 1}, false);
  Value l = make_op(op("leaky_relu"), {s}, {{"alpha", 0.2}});
  std::vector<Value> wrt{w};
  std::vector<Value> gw = passes::grad(l, wrt);
  Value i = cast(gw[0], i64);
  g.outputs = {l.id, gw[0].id, i.id};
  g.output_names = {"loss", "grad_w", "as int"};
  return to_text(g);
}

TEST(TextIrErrors, EveryTruncationIsAnErrorWithAPosition) {
  std::string text = sample_text();
  ASSERT_NO_THROW(parse(text));
  std::size_t complete = text.rfind('}') + 1;
  for (std::size_t n = 0; n < complete; ++n) {
    std::string cut = text.substr(0, n);
    Failure f = parse_failure(cut);
    ASSERT_TRUE(f.threw) << "truncated at " << n << " parsed:\n" << cut;
    EXPECT_GE(f.line, 1u);
    EXPECT_GE(f.column, 1u);
    EXPECT_EQ(f.what.back(), '^');
  }
}

TEST(TextIrErrors, RandomByteEditsNeverCrashOrHang) {
  std::string text = sample_text();
  std::mt19937_64 rng(12345);
  const std::string alphabet = "%=:,()[]{}\"\\-.0123456789eanifx_ \n/\xff";
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      std::size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[pos] = static_cast<char>(rng() % 256); break;                   // any byte
        case 1: t[pos] = alphabet[rng() % alphabet.size()]; break;                // a grammar byte
        case 2: t.erase(pos, 1 + rng() % 8); break;                               // a deletion
        default: t.insert(pos, std::string(1 + rng() % 3, alphabet[rng() % alphabet.size()])); break;
      }
      if (t.empty()) t.push_back('x');
    }
    try {
      parse(t, "fuzz.mgir");
    } catch (const ParseError& e) {
      ++errors;
      ASSERT_GE(e.line(), 1u) << e.what();
      ASSERT_GE(e.column(), 1u) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "not a ParseError: " << e.what() << "\nfor:\n" << t;
    }
  }
  EXPECT_GT(errors, 2000);  // most edits break the text; all were reported cleanly
}

// ---- ir/README.md documents every op and attribute ----

std::string read_readme() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates{fs::path(__FILE__).parent_path() / "../../ir/README.md"};
  for (fs::path p = fs::current_path(); !p.empty() && p != p.parent_path(); p = p.parent_path())
    candidates.push_back(p / "ir/README.md");
  for (const fs::path& p : candidates) {
    std::ifstream in(p);
    if (!in) continue;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  return {};
}

// The op table row for `d`, as ir/README.md has it.
std::string readme_row(const OpDef& d) {
  std::string attrs;
  for (const AttrSpec& a : d.attrs) {
    attrs += (attrs.empty() ? "`" : ", `") + a.name + "`: " + std::string(name_of(a.kind));
    if (a.default_value) attrs += " = " + format_attr(*a.default_value);
  }
  std::string doc;
  for (char c : d.doc) doc += c == '|' ? std::string("\\|") : std::string(1, c);
  return "| `" + d.name + "` | " + (d.arity < 0 ? std::string("1+") : std::to_string(d.arity)) + " | " + attrs +
         " | " + doc + " |";
}

TEST(IrReadme, NamesEveryRegisteredOpAndAttribute) {
  std::string doc = read_readme();
  ASSERT_FALSE(doc.empty()) << "ir/README.md not found from " << __FILE__;
  for (const OpDef* d : all_ops()) {
    if (d->name.rfind("test_", 0) == 0) continue;
    auto at = doc.find("| `" + d->name + "` |");
    EXPECT_NE(at, std::string::npos) << "ir/README.md has no row for op " << d->name
                                     << "; add this row to its op table:\n" << readme_row(*d);
    if (at == std::string::npos) continue;
    std::string line = doc.substr(at, doc.find('\n', at) - at);
    for (const AttrSpec& a : d->attrs)
      EXPECT_NE(line.find("`" + a.name + "`"), std::string::npos)
          << "ir/README.md: the row of " << d->name << " does not name attribute " << a.name
          << "; the row should read:\n" << readme_row(*d);
  }
}

TEST(IrReadme, TheExampleParsesAndPrintsBackUnchanged) {
  std::string doc = read_readme();
  auto begin = doc.find("```mgir\n");
  ASSERT_NE(begin, std::string::npos);
  begin += 8;
  std::string example = doc.substr(begin, doc.find("```", begin) - begin);
  std::unique_ptr<Graph> g = parse(example, "README.md");
  EXPECT_EQ(to_text(*g), example);
  EXPECT_EQ(g->output_names, (std::vector<std::string>{"loss", "grad_w"}));
}

}  // namespace
}  // namespace mg::ir
