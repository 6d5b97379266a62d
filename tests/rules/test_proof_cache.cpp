// The proof cache answers only the exact query it stored: a second check of the same rule
// is a hit with the same verdict; a changed rule, condition or limit is proved again; and
// an altered, forged or truncated entry is never trusted (the proof runs and gives the
// true verdict).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "minigrad/passes/rules/check.hpp"
#include "minigrad/passes/rules/proof_cache.hpp"
#include "minigrad/passes/rules/rule.hpp"
#include "tests/scratch_dir.hpp"

namespace mg {
namespace {

namespace fs = std::filesystem;
using passes::rules::CheckResult;
using passes::rules::Verdict;

struct Checked {
  CheckResult res;
  int cached = 0;  // theories answered by the cache
};

Checked check(const std::string& text, const passes::rules::CheckOptions& opt) {
  static std::vector<passes::rules::RuleSet> keep;  // results point at their rule
  keep.push_back(passes::rules::parse_rules(text));
  Checked c{passes::rules::check_scalar(keep.back().rules.at(0), opt)};
  for (const auto* t : {&c.res.reals, &c.res.f32, &c.res.f64}) c.cached += t->cached;
  return c;
}

passes::rules::CheckOptions options(const mg::testing::ScratchDir& dir) {
  passes::rules::CheckOptions opt;
  opt.timeout_ms = 0;
  opt.rlimit = 200'000'000;
  opt.proof_cache = (dir / "proofs").string();
  return opt;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::vector<fs::path> entries(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// add-zero: proved over the reals, refuted in f32 (x = -0), so both verdicts get stored.
constexpr const char* kAddZero = R"(rule "add-zero" [real]: (add ?x 0) => ?x;)";

TEST(ProofCache, ASecondCheckIsAnsweredWithTheSameVerdicts) {
  mg::testing::ScratchDir dir("mg-proof-cache-hit-");
  auto opt = options(dir);
  Checked first = check(kAddZero, opt);
  EXPECT_EQ(first.cached, 0);
  EXPECT_EQ(entries(opt.proof_cache).size(), 2u);  // reals, f32 (no f64: not exact anyway)
  Checked again = check(kAddZero, opt);
  EXPECT_EQ(again.cached, 2);
  EXPECT_EQ(again.res.proven, first.res.proven);
  EXPECT_EQ(again.res.reals.verdict, Verdict::proved);
  EXPECT_EQ(again.res.f32.verdict, Verdict::refuted);
  EXPECT_EQ(again.res.f32.counterexample, first.res.f32.counterexample);
  EXPECT_EQ(again.res.f32.work, first.res.f32.work);
}

// Rules whose proofs are cheap (sign flips, refutations over the reals): a float multiply
// proved in f32 and f64 took two seconds of this suite on every run.
TEST(ProofCache, ChangingTheRuleOrTheLimitsProvesAgain) {
  mg::testing::ScratchDir dir("mg-proof-cache-change-");
  auto opt = options(dir);
  constexpr const char* kNegNeg = R"(rule "r" [exact]: (neg (neg ?x)) => ?x;)";
  EXPECT_EQ(check(kNegNeg, opt).cached, 0);
  EXPECT_EQ(check(kNegNeg, opt).cached, 3);
  // Another pattern, another condition, another constant: each a new query.
  EXPECT_EQ(check(R"(rule "r" [exact]: (neg (neg (neg ?x))) => (neg ?x);)", opt).cached, 0);
  EXPECT_EQ(check(R"(rule "r" [exact]: (neg (neg ?x)) => ?x if finite(?x);)", opt).cached, 0);
  const std::size_t before = entries(opt.proof_cache).size();
  Checked two = check(R"(rule "r" [exact]: (mul ?x 2) => ?x;)", opt);
  EXPECT_EQ(two.cached, 0);
  EXPECT_EQ(two.res.reals.verdict, Verdict::refuted);
  const auto stored = static_cast<int>(entries(opt.proof_cache).size() - before);
  EXPECT_GT(stored, 0);
  EXPECT_EQ(check(R"(rule "r" [exact]: (mul ?x 3) => ?x;)", opt).cached, 0);
  EXPECT_EQ(check(R"(rule "r" [exact]: (mul ?x 2) => ?x;)", opt).cached, stored);  // the same query: hits
  // Other limits: the verdict was reached under different ones, so it is not reused.
  opt.rlimit = 300'000'000;
  EXPECT_EQ(check(kNegNeg, opt).cached, 0);
}

TEST(ProofCache, AnAlteredEntryIsNeverTrusted) {
  mg::testing::ScratchDir dir("mg-proof-cache-bad-");
  auto opt = options(dir);
  check(kAddZero, opt);
  auto files = entries(opt.proof_cache);
  ASSERT_EQ(files.size(), 2u);
  // Flip a refuted verdict to proved without fixing the checksum.
  for (const fs::path& f : files) {
    std::string text = read(f);
    auto at = text.find("verdict refuted");
    if (at != std::string::npos) write(f, text.replace(at, 15, "verdict proved"));
  }
  Checked flipped = check(kAddZero, opt);
  EXPECT_EQ(flipped.cached, 1);  // the reals' entry is intact
  EXPECT_EQ(flipped.res.f32.verdict, Verdict::refuted);
  EXPECT_EQ(flipped.res.proven, passes::rules::Label::real);
  // The proof ran again and rewrote the entry: now a hit.
  EXPECT_EQ(check(kAddZero, opt).cached, 2);
}

TEST(ProofCache, AnotherQuerysValidEntryIsNeverTrusted) {
  mg::testing::ScratchDir dir("mg-proof-cache-forged-");
  auto opt = options(dir);
  check(kAddZero, opt);
  auto files = entries(opt.proof_cache);
  ASSERT_EQ(files.size(), 2u);
  // Copy the (proved, well-formed, checksummed) reals entry over the f32 one: its stored
  // key is the reals query, so the f32 query must not take its verdict.
  std::string proved, refuted_file;
  for (const fs::path& f : files) {
    std::string text = read(f);
    if (text.find("verdict proved") != std::string::npos) proved = text;
    else refuted_file = f.string();
  }
  ASSERT_FALSE(proved.empty());
  ASSERT_FALSE(refuted_file.empty());
  write(refuted_file, proved);
  Checked forged = check(kAddZero, opt);
  EXPECT_EQ(forged.res.f32.verdict, Verdict::refuted);
  EXPECT_FALSE(forged.res.f32.cached);
}

TEST(ProofCache, TruncatedOrEmptyEntriesAreMisses) {
  mg::testing::ScratchDir dir("mg-proof-cache-cut-");
  auto opt = options(dir);
  const std::string key = "some query";
  passes::rules::store_verdict(opt.proof_cache, key, {true, "", 42});
  auto hit = passes::rules::load_verdict(opt.proof_cache, key);
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->proved);
  EXPECT_EQ(hit->work, 42u);
  EXPECT_FALSE(passes::rules::load_verdict(opt.proof_cache, "some query "));  // not a prefix match
  fs::path f = fs::path(opt.proof_cache) / passes::rules::verdict_file_name(key);
  std::string text = read(f);
  for (std::size_t n : {std::size_t{0}, text.size() / 2, text.size() - 1}) {
    write(f, text.substr(0, n));
    EXPECT_FALSE(passes::rules::load_verdict(opt.proof_cache, key)) << "cut at " << n;
  }
  // A line slipped in before the checksum, checksum recomputed by nobody: a miss.
  write(f, text);
  ASSERT_TRUE(passes::rules::load_verdict(opt.proof_cache, key));
  std::string extra = text;
  extra.insert(extra.rfind("checksum "), "x\n");
  write(f, extra);
  EXPECT_FALSE(passes::rules::load_verdict(opt.proof_cache, key));
}

}  // namespace
}  // namespace mg
