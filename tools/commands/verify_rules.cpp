// `minigrad verify-rules`: proves the shipped rewrite rules (passes/rules/check.hpp) and
// prints one line per rule: name, declared label, proven label, seconds, and for a
// failure the counterexample. Exit 1 when any rule is not proven as declared.
#include <cstdio>
#include <algorithm>
#include <iostream>
#include <map>

#include "minigrad/passes/rules/check.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

#if MG_HAVE_Z3
namespace {

std::vector<Array> interpret(const ir::Graph& g, const std::vector<Array>& inputs) {
  rt::Bindings b;
  for (std::size_t i = 0; i < g.inputs().size(); ++i) b.emplace(g.node(g.inputs()[i]).name, inputs[i]);
  return rt::compile(g, g.outputs).run(b);
}

}  // namespace

int run_verify_rules(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()("timeout-ms", po::value<unsigned>()->default_value(passes::rules::CheckOptions{}.timeout_ms), "Z3 time limit per query (0: none)")(
      "rlimit", po::value<unsigned>()->default_value(0),
      "Z3 resource units per query (deterministic, unlike the time limit; 0: none)")(
      "rule", po::value<std::vector<std::string>>()->value_name("NAME"), "check only these rules")(
      "proof-cache", po::value<std::string>()->value_name("DIR"),
      "reuse verdicts stored in DIR for queries whose exact text was proved before (and store new ones)")(
      "quiet,q", "print only failures and the summary");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {}, 0, vm)) return kOk;
  passes::rules::CheckOptions opt;
  opt.timeout_ms = vm["timeout-ms"].as<unsigned>();
  opt.rlimit = vm["rlimit"].as<unsigned>();
  if (vm.count("proof-cache")) opt.proof_cache = vm["proof-cache"].as<std::string>();
  std::vector<std::string> only;
  if (vm.count("rule")) only = vm["rule"].as<std::vector<std::string>>();
  const auto& set = passes::rules::shipped_rules();
  for (const auto& name : only)
    if (!set.find(name)) throw UsageError("no rule named '" + name + "'");
  std::size_t checked = 0;
  std::map<std::string, int> counts;
  int failures = 0, queries = 0, cached = 0;
  double total = 0;
  std::printf("%-28s %-11s %-11s %-9s %-9s %-9s %8s %12s\n", "rule", "declared", "proven", "reals", "f32", "f64",
              "seconds", "z3 units");
  for (const auto& r : set.rules) {
    if (!only.empty() && std::find(only.begin(), only.end(), r.name) == only.end()) continue;
    auto res = passes::rules::check_rule(r, interpret, opt);
    ++checked;
    total += res.seconds;
    ++counts[std::string(passes::rules::name_of(res.proven))];
    for (const auto* t : {&res.reals, &res.f32, &res.f64}) {
      queries += t->verdict != passes::rules::Verdict::skipped;
      cached += t->cached;
    }
    bool ok = res.matches_declared();
    failures += ok ? 0 : 1;
    if (ok && vm.count("quiet")) continue;
    auto v = [&](const passes::rules::TheoryResult& t) { return std::string(passes::rules::name_of(t.verdict)); };
    std::printf("%-28s %-11s %-11s %-9s %-9s %-9s %8.3f %12llu\n", r.name.c_str(),
                std::string(passes::rules::name_of(r.declared)).c_str(),
                std::string(passes::rules::name_of(res.proven)).c_str(),
                r.scalar ? v(res.reals).c_str() : "numeric", r.scalar ? v(res.f32).c_str() : v(res.numeric).c_str(),
                r.scalar ? v(res.f64).c_str() : "-", res.seconds,
                static_cast<unsigned long long>(res.reals.work + res.f32.work + res.f64.work));
    if (!ok || (!res.note.empty() && res.proven != passes::rules::Label::exact))
      std::printf("    %s%s\n", ok ? "why not exact: " : "MISMATCH: ", res.note.c_str());
  }
  std::printf("\n%zu rules:", checked);
  for (auto& [label, n] : counts) std::printf(" %d %s,", n, label.c_str());
  std::printf(" %.2f s; %d not proven as declared\n", total, failures);
  if (!opt.proof_cache.empty()) std::printf("%d of %d Z3 queries answered by the proof cache\n", cached, queries);
  return failures ? kUserError : kOk;
}

#else
int run_verify_rules(const Command&, Args) {
  throw UsageError("verify-rules: this minigrad was built without Z3 (configure with -Dz3=enabled)");
}
#endif

}  // namespace mg::tools
