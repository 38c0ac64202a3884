// Tests of the Class panel's view (class_view.cpp): a class summary's score bands and the tests
// failed most.
#include "gpulab/viewer/class_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "test_specs.hpp"
#include "views_support.hpp"

namespace gpulab::viewer {
namespace {

using namespace views_test;  // the views tests' helpers (views_support.hpp)

gpulab::ClassSummary two_labs() {
  gpulab::ClassSummary s;
  s.context.backend = "cuda";
  s.students = 5;
  s.graded = 4;
  s.labs = {{"lab01", {1, 0, 0, 0, 0, 0, 0, 0, 1, 2}}, {"lab04", {0, 0, 0, 0, 0, 0, 0, 0, 4, 0}}};
  s.failed_most = {{"lab04 Lab04Traffic.FlashReadsQkvAndWritesOOnce", 3}};
  return s;
}

TEST(ClassViews, BandsLabsAndTheTestsFailedMostAsTheSummaryHasThem) {
  const ClassView view = class_view(two_labs());
  EXPECT_EQ(view.heading,
            "4 of 5 submissions graded (cuda backend); 1 not graded (gpulab grade --roster lists "
            "them and grades them when run again)");
  ASSERT_EQ(view.bands.size(), 10u);
  EXPECT_EQ(view.bands.front(), "0-9%");
  EXPECT_EQ(view.bands[4], "40-49%");
  EXPECT_EQ(view.bands.back(), "90-100%");
  EXPECT_TRUE(view.empty_reason.empty());
  ASSERT_EQ(view.labs.size(), 2u);
  EXPECT_EQ(view.labs[0].students, (std::vector<double>{1, 0, 0, 0, 0, 0, 0, 0, 1, 2}));
  EXPECT_EQ(view.labs[0].summary, "lab01: 2 of 4 at 90% or more, 1 below 10%");
  EXPECT_EQ(view.labs[1].tooltips[8], "lab04, 80-89% of the points: 4 students");
  EXPECT_EQ(view.labs[0].tooltips[0], "lab01, 0-9% of the points: 1 student");
  ASSERT_EQ(view.failed.size(), 1u);
  EXPECT_EQ(view.failed[0].students, 3u);
  EXPECT_DOUBLE_EQ(view.failed[0].fraction, 0.75);
  EXPECT_EQ(view.failed[0].share, "3 of 4 (75%)");
}

TEST(ClassViews, AClassWithNothingGradedSaysSo) {
  gpulab::ClassSummary s = two_labs();
  s.graded = 0;
  s.labs = {{"lab01", {}}};
  s.failed_most.clear();
  const ClassView view = class_view(s);
  EXPECT_EQ(view.empty_reason, "no submission graded yet");
  EXPECT_NE(view.heading.find("0 of 5 submissions graded"), std::string::npos) << view.heading;
  EXPECT_NE(view.heading.find("5 not graded"), std::string::npos) << view.heading;
  EXPECT_TRUE(view.failed.empty());
}

}  // namespace
}  // namespace gpulab::viewer
