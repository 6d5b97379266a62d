// The `minigrad` tool's skeleton: the subcommand table and what subcommands share (option
// parsing with Boost.Program_options, loading and verifying a graph, naming outputs).
// A subcommand is one file in tools/commands/ exporting one `run_<name>` function plus one
// row in the table (commands.cpp). Exit codes: 0 success, 1 user error (mg::UserError:
// bad file, bad input), 2 bad usage (UsageError or a Program_options error), 3 internal error.
#pragma once
#include <boost/program_options.hpp>
#include <iosfwd>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::tools {

namespace po = boost::program_options;

enum ExitCode : int { kOk = 0, kUserError = 1, kUsage = 2, kInternal = 3 };

// Bad command-line usage: exit code 2 with a hint to --help.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Command;
using Args = std::span<const std::string>;
using RunFn = int (*)(const Command& self, Args args);

struct Command {
  std::string_view name;
  std::string_view summary;      // one line, for `minigrad --help`
  std::string_view synopsis;     // after "usage: minigrad "
  std::string_view description;  // paragraphs for `minigrad NAME --help`
  RunFn run;
};

std::span<const Command> commands();  // the table, in the order --help lists it
const Command* find_command(std::string_view name);
void print_tool_help(std::ostream& os);
void print_command_help(std::ostream& os, const Command& cmd, const po::options_description* options);

// An empty "Options" section, laid out 100 columns wide.
inline po::options_description options_section() { return po::options_description("Options", 100, 50); }

// Parses `args` against `options` (--help/-h is added) with `positional` names for the
// operands. Returns false after printing the help when --help was given. Throws
// UsageError for unknown options, bad values, or fewer/more operands than named
// (`optional_from` is the index of the first operand that may be left out).
bool parse_command_line(const Command& cmd, Args args, po::options_description options,
                        const std::vector<std::string>& positional, std::size_t optional_from,
                        po::variables_map& vm);

// Parses and verifies an .mgir file (UserError on failure).
std::unique_ptr<ir::Graph> load_graph(const std::string& path);

// The name of output i: g.output_names[i] when given, else "out<i>".
std::string output_name(const ir::Graph& g, std::size_t i);
// Throws UserError unless `name` is safe as a file name ([A-Za-z0-9_.-]+, not . or ..).
void check_file_name(const std::string& name, const std::string& what);

// Appends d(output)/d(input) for every float graph input to `g` (passes::grad for a
// scalar output, passes::vjp with `cotangent` otherwise) as extra outputs named
// grad_<input>. `g` must have exactly one float output; `cotangent` (nullptr: none) must
// match its type. `source` names the graph in messages. Returns how many were added.
std::size_t append_input_gradients(ir::Graph& g, const Array* cotangent, const std::string& source);

// Writes `text` to `path`, or to stdout when `path` is empty or "-".
void write_text(const std::string& path, const std::string& text);
// A byte count with an optional K/M/G/T suffix (powers of 1024): "512M", "4G", "1000".
// UsageError naming `option` when malformed.
std::uint64_t parse_size(const std::string& text, const std::string& option);
// Memory this machine can give a new allocation now (MemAvailable), or 0 when unknown.
std::uint64_t available_memory();
std::string format_bytes(std::uint64_t n);  // "1.5 GiB (1610612736 bytes)"

// The run functions, one per file in tools/commands/.
int run_check(const Command&, Args);
int run_run(const Command&, Args);
int run_grad(const Command&, Args);
int run_dot(const Command&, Args);
int run_ops(const Command&, Args);
int run_emit_c(const Command&, Args);
int run_verify_rules(const Command&, Args);
int run_opt(const Command&, Args);
int run_dp_epsilon(const Command&, Args);
int run_dp_sigma(const Command&, Args);

}  // namespace mg::tools
