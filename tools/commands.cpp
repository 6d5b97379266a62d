// The subcommand table and the help texts. Adding a subcommand: one file in
// tools/commands/ with its run function (declared in cli.hpp) and one row here.
#include <iomanip>
#include <iostream>

#include "tools/cli.hpp"

namespace mg::tools {

namespace {

constexpr Command kCommands[] = {
    {"check", "parse and verify an .mgir file; print each value's type", "check FILE.mgir",
     "Parses FILE.mgir and runs the IR verifier. Prints one line per value (name, type, what\n"
     "defines it), regions indented, then the outputs. Errors give file:line:column and the\n"
     "offending line with a caret.",
     run_check},
    {"run", "run a graph in the interpreter on .npy inputs; write .npy outputs",
     "run FILE.mgir --input NAME=PATH.npy ... --out DIR [--grad] [--cotangent PATH.npy]",
     "Runs the graph in the reference interpreter. Every graph input is bound with\n"
     "--input NAME=PATH.npy (f32 '<f4', f64 '<f8', i64 '<i8' or bool '|b1'; dtype and shape must\n"
     "match the graph exactly). Each output is written as DIR/<output-name>.npy.\n"
     "--grad (for a graph with one scalar float output) also writes DIR/grad_<input>.npy for\n"
     "every float input; --cotangent PATH.npy gives the output's cotangent for a non-scalar\n"
     "output (and implies --grad).",
     run_run},
    {"grad", "print the graph with input gradients appended (text IR)", "grad FILE.mgir [-o OUT.mgir]",
     "Runs the grad pass on a graph with one scalar float output and prints the result as\n"
     "text IR: the adjoint nodes are marked `grad` and d(output)/d(input) for every float\n"
     "input is an extra output named grad_<input>. The output parses back with the same\n"
     "parser.",
     run_grad},
    {"dot", "draw a graph as Graphviz DOT, SVG or PNG", "dot FILE.mgir [-o OUT.dot|OUT.svg|OUT.png] [--grad] [--all] [--locations]",
     "Writes the graph as Graphviz DOT (to stdout without -o), or renders it with Graphviz\n"
     "when OUT ends in .svg or .png. Inputs are blue ellipses, constants grey notes,\n"
     "outputs double-bordered green; with --grad the gradient nodes are added and drawn in\n"
     "an orange `backward` cluster. Regions are nested clusters.",
     run_dot},
    {"ops", "list the registered ops with arity, attributes and doc", "ops [NAME...]",
     "Prints every registered op (or the NAMEd ones): arity, attributes with their kinds and\n"
     "defaults, whether it has a VJP rule, and its one-line doc.",
     run_ops},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

void print_tool_help(std::ostream& os) {
  os << "usage: minigrad <command> [options] [operands]\n"
        "       minigrad <command> --help\n\n"
        "miniGrad's command-line tool: check, run, differentiate and draw graphs written in\n"
        "the text IR (.mgir files).\n\nCommands:\n";
  for (const Command& c : kCommands) os << "  " << std::left << std::setw(8) << c.name << c.summary << "\n";
  os << "\nOptions:\n  -h [ --help ]   show this help and exit\n\n"
        "Exit status: 0 success, 1 user error (bad file or input), 2 bad usage, 3 internal error.\n";
}

void print_command_help(std::ostream& os, const Command& cmd, const po::options_description* options) {
  os << "usage: minigrad " << cmd.synopsis << "\n\n" << cmd.description << "\n";
  if (options != nullptr) os << "\n" << *options;
}

}  // namespace mg::tools
