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
     "run FILE.mgir --input NAME=PATH.npy ... --out DIR [--grad] [--cotangent PATH.npy] [--check-numerics]",
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
    {"opt", "optimize a graph with a pass pipeline; print the text IR",
     "opt FILE.mgir [--passes=SPEC] [--stats] [--dump-after=NAME [--dump-dot]] [--verify] [-o OUT.mgir]",
     "Runs a pass pipeline on the graph and prints the result as text IR (it parses back).\n"
     "SPEC is a comma-separated list of passes, run in order (default fold,cse,fuse,dce):\n"
     "grad (append input gradients of a scalar output), rewrite (proven rewrite rules),\n"
     "fold (constant folding), cse, fuse (elementwise fusion into `fused` nodes), dce.\n"
     "--stats prints nodes before/after and time per pass to stderr; --dump-after=NAME\n"
     "prints the graph after pass NAME to stderr.",
     run_opt},
    {"dot", "draw a graph as Graphviz DOT, SVG or PNG", "dot FILE.mgir [-o OUT.dot|OUT.svg|OUT.png] [--grad] [--all] [--locations]",
     "Writes the graph as Graphviz DOT (to stdout without -o), or renders it with Graphviz\n"
     "when OUT ends in .svg or .png. Inputs are blue ellipses, constants grey notes,\n"
     "outputs double-bordered green; with --grad the gradient nodes are added and drawn in\n"
     "an orange `backward` cluster. Regions are nested clusters.",
     run_dot},
    {"view", "print the graph in the terminal: top-down ASCII, by role, fused regions collapsed",
     "view FILE.mgir [--grad] [--expand] [--max-lines N] [--no-locations]",
     "Prints one line per value the outputs need: its name (as in the text IR), op and\n"
     "operands, type and source file:line, grouped into blocks by role (forward, backward,\n"
     "second-order backward, optimizer update), outputs marked `=> name`. A fused node shows\n"
     "the ops of its region in brackets (--expand prints the region under it). Past\n"
     "--max-lines values (default 60) the middle is elided with a count of its ops.",
     run_view},
    {"ops", "list the registered ops with arity, attributes and doc", "ops [NAME...]",
     "Prints every registered op (or the NAMEd ones): arity, attributes with their kinds and\n"
     "defaults, whether it has a VJP rule, and its one-line doc.",
     run_ops},
    {"emit-c", "export a graph as standalone C99 (.c/.h, no malloc, static arena)",
     "emit-c FILE.mgir -o DIR [--name NAME] [--weights W.safetensors]",
     "Writes DIR/NAME.c and DIR/NAME.h: one entry function NAME_run taking a typed pointer per\n"
     "graph input and output (in the header's order), returning 0 (or k + 1 when node %k met an\n"
     "index out of range). No malloc: one static arena sized by the memory plan; no BLAS: our own\n"
     "GEMM loop nest; only <math.h> and <stdint.h>. --weights embeds the SafeTensors tensors named\n"
     "like graph inputs as static const arrays (they leave the signature). Prints the arena and\n"
     "weight sizes. Compiles with gcc/clang -std=c99 -Wall -Wextra -pedantic -Werror.",
     run_emit_c},
    {"verify-rules", "prove every rewrite rule with Z3 (reals and IEEE f32/f64); print the table",
     "verify-rules [--timeout-ms=N] [--rule=NAME]... [--proof-cache=DIR] [--quiet]",
     "Proves each rule of the shipped rewrite table the way its label claims. Elementwise\n"
     "rules are encoded from the table with each op's Z3 semantics and proved over the reals\n"
     "and over IEEE-754 f32 and f64: exact (bit-exact in IEEE, NaN/+-0/inf included), real\n"
     "(reals only: fast-math), or refuted with a counterexample. Rules over tensor-level ops\n"
     "run their examples in the interpreter (structural: bit-identical). Prints rule, declared\n"
     "label, proven label, time and, for a failure, the counterexample. Exit status 1 when a\n"
     "rule is refuted, unproven, or proven weaker/other than declared.",
     run_verify_rules},
    {"dp-epsilon", "privacy spent by DP-SGD: epsilon for (q, sigma, steps, delta) by the RDP accountant",
     "dp-epsilon --q Q --sigma S (--steps N | --epochs E) --delta D [--conversion balle|classic] [--orders A,B,...]",
     "Epsilon of N steps of the sampled Gaussian mechanism (DP-SGD with Poisson sampling at rate Q\n"
     "and noise multiplier S) for the given delta, by the Renyi-DP accountant (Mironov, Talwar, Zhang\n"
     "2019), minimised over the RDP orders. Prints `epsilon: E` with 17 significant digits (it reads\n"
     "back as the same double) and `order: A`, the best order. --conversion balle (default, as current Opacus): Balle et al. 2020;\n"
     "classic: eps = rdp - log(delta)/(alpha - 1), as TF Privacy's tutorials. A best order at the\n"
     "edge of the grid gets a warning on stderr.",
     run_dp_epsilon},
    {"dp-sigma", "the noise multiplier DP-SGD needs for a target epsilon (the inverse of dp-epsilon)",
     "dp-sigma --q Q --epsilon E (--steps N | --epochs E) --delta D [--conversion balle|classic] [--tolerance T]",
     "The smallest noise multiplier sigma, to the tolerance, with eps(sigma) <= E after N steps at rate Q\n"
     "(as Opacus's get_noise_multiplier: sigma doubled from 20 until eps <= E, then bisection until\n"
     "E - eps(sigma) <= T; the answer never exceeds the budget). Prints `sigma:`, `epsilon:` (what\n"
     "sigma gives), 17 significant digits, and `order:`. Exit 1 when no sigma up to 1e6 reaches E.",
     run_dp_sigma},
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
  for (const Command& c : kCommands) os << "  " << std::left << std::setw(14) << c.name << c.summary << "\n";
  os << "\nOptions:\n  -h [ --help ]   show this help and exit\n\n"
        "Exit status: 0 success, 1 user error (bad file or input), 2 bad usage, 3 internal error.\n";
}

void print_command_help(std::ostream& os, const Command& cmd, const po::options_description* options) {
  os << "usage: minigrad " << cmd.synopsis << "\n\n" << cmd.description << "\n";
  if (options != nullptr) os << "\n" << *options;
}

}  // namespace mg::tools
