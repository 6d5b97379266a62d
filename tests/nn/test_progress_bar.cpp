// The examples' progress bar: a run with a time budget passes the step count it first
// estimated (06's default run did, and the bar threw std::length_error at the end).
#include <gtest/gtest.h>

#include "../../examples/progress.hpp"

namespace {

TEST(ProgressBar, TicksPastItsTotalWithoutThrowing) {
  mg::examples::Progress bar("train", 10, 1);
  testing::internal::CaptureStdout();
  for (int i = 0; i < 25; ++i) EXPECT_NO_THROW(bar.tick(1.0));
  bar.done();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("25/10"), std::string::npos) << out;
}

TEST(ProgressBar, ARevisedTotalIsWhatItDraws) {
  mg::examples::Progress bar("train", 10, 1);
  testing::internal::CaptureStdout();
  for (int i = 0; i < 10; ++i) bar.tick(1.0);
  bar.set_total(40);
  for (int i = 0; i < 30; ++i) bar.tick(1.0);
  bar.done();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("40/40"), std::string::npos) << out;
}

}  // namespace
