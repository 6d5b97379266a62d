// `minigrad`: dispatches to a subcommand from the table in commands.cpp and maps errors to
// exit codes (0 ok, 1 user error, 2 bad usage, 3 internal error). Nothing else lives here.
#include <iostream>
#include <new>

#include "minigrad/ir/errors.hpp"
#include "tools/cli.hpp"

int main(int argc, char** argv) {
  using namespace mg::tools;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_tool_help(std::cerr);
    return kUsage;
  }
  const std::string& name = args[0];
  if (name == "--help" || name == "-h" || name == "help") {
    if (args.size() > 1) {
      const Command* cmd = find_command(args[1]);
      if (cmd == nullptr) {
        std::cerr << "minigrad: unknown command '" << args[1] << "'; see 'minigrad --help'\n";
        return kUsage;
      }
      const std::vector<std::string> help{"--help"};
      return cmd->run(*cmd, help);
    }
    print_tool_help(std::cout);
    return kOk;
  }
  const Command* cmd = find_command(name);
  if (cmd == nullptr) {
    std::cerr << "minigrad: unknown command '" << name << "'; see 'minigrad --help'\n";
    return kUsage;
  }
  const std::string who = "minigrad " + std::string(cmd->name);
  try {
    return cmd->run(*cmd, Args(args).subspan(1));
  } catch (const UsageError& e) {
    std::cerr << who << ": " << e.what() << "\nTry '" << who << " --help'.\n";
    return kUsage;
  } catch (const po::error& e) {
    std::cerr << who << ": " << e.what() << "\nTry '" << who << " --help'.\n";
    return kUsage;
  } catch (const mg::UserError& e) {
    std::cerr << who << ": error: " << e.what() << "\n";
    return kUserError;
  } catch (const std::bad_alloc&) {
    std::cerr << who << ": error: out of memory (see --max-memory for `run`)\n";
    return kUserError;
  } catch (const std::exception& e) {
    std::cerr << who << ": internal error: " << e.what() << "\n";
    return kInternal;
  }
}
