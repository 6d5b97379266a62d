// The pipeline spec parser (Boost.Spirit X3, kept in its own translation unit):
//   spec = [ name { "," name } ] ;   name = (letter | "_") { letter | digit | "_" | "-" } ;
// blanks allowed between tokens. Unknown names are reported with the known ones.
#include <boost/spirit/home/x3.hpp>

#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/pass_manager.hpp"

namespace mg::passes {

namespace {
namespace x3 = boost::spirit::x3;

// Character classes as explicit ASCII sets: x3::alpha/alnum/space call std::isalpha & co.
// with a plain char, undefined for bytes >= 0x80 (a user's spec may hold any bytes).
const auto letter = x3::char_("a-zA-Z");
const auto letter_or_digit = x3::char_("a-zA-Z0-9");
const auto blank = x3::char_(" \t\r\n\f\v");

const auto name_rule = x3::rule<struct name_tag, std::string>{"pass name"} =
    x3::lexeme[(letter | x3::char_('_')) >> *(letter_or_digit | x3::char_('_') | x3::char_('-'))];
const auto spec_rule = -(name_rule % ',');

std::string known_passes() {
  std::string s;
  for (const PassEntry& e : registered_passes()) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

[[noreturn]] void fail(std::string_view spec, std::size_t column, const std::string& what) {
  throw UserError("pass pipeline '" + std::string(spec) + "', column " + std::to_string(column + 1) + ": " + what);
}

}  // namespace

std::vector<std::string> parse_pipeline(std::string_view spec) {
  std::vector<std::string> names;
  auto first = spec.begin();
  const auto last = spec.end();
  const bool ok = x3::phrase_parse(first, last, spec_rule, blank, names);
  if (!ok || first != last) {
    auto shown = [&](std::string_view::iterator at) {
      return at == last ? std::string("the end") : std::string(1, '\'').append(1, *at).append(1, '\'');
    };
    if (first != last && *first == ',') {  // a list that stopped after a comma: the name is what is missing
      ++first;
      while (first != last && (*first == ' ' || *first == '\t' || *first == '\n')) ++first;
      fail(spec, static_cast<std::size_t>(first - spec.begin()), "expected a pass name after ',', got " + shown(first));
    }
    fail(spec, static_cast<std::size_t>(first - spec.begin()),
         std::string(names.empty() ? "expected a pass name" : "expected ',' or the end") + ", got " + shown(first));
  }
  // Columns of each name, for unknown-name errors.
  std::size_t pos = 0;
  for (const std::string& n : names) {
    pos = spec.find(n, pos);
    bool known = false;
    for (const PassEntry& e : registered_passes()) known |= e.name == n;
    if (!known) fail(spec, pos, "unknown pass '" + n + "' (known: " + known_passes() + ")");
    pos += n.size();
  }
  return names;
}

}  // namespace mg::passes
