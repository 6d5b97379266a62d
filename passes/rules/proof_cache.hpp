// An on-disk cache of Z3 verdicts, so that running the test suite again does not re-prove
// rules nothing has changed for. The key is the whole text the verdict depends on: the
// query as SMT-LIB (the rule, every op's semantics and every condition it uses, encoded),
// the theory, the solver's limits, the portfolio's version and Z3's version. An entry
// stores that key in full and a checksum; a lookup hits only when the stored key equals
// the query byte for byte and the checksum verifies, so an edited rule or op, another Z3,
// or a stale, truncated or altered file means "miss: prove again" — never a wrong verdict.
// Only definite verdicts (proved, refuted) are stored. Z3-free: plain text and files.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace mg::passes::rules {

struct CachedVerdict {
  bool proved = false;         // else refuted
  std::string counterexample;  // when refuted
  std::uint64_t work = 0;      // Z3 resource units the proof took
};

// The verdict stored for `key` under `dir`, if an entry exists and verifies.
std::optional<CachedVerdict> load_verdict(const std::string& dir, const std::string& key);
// Stores it (creating `dir`); written to a temp file then renamed, so concurrent test
// processes see whole entries or none. I/O failures are ignored: the cache is an optimisation.
void store_verdict(const std::string& dir, const std::string& key, const CachedVerdict& v);
// The entry's file name for a key (hex of a 64-bit hash; the key itself is inside).
std::string verdict_file_name(const std::string& key);

}  // namespace mg::passes::rules
