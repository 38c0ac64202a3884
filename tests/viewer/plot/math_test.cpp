// Unit tests of the charts' arithmetic (gpulab/viewer/plot/math.hpp): axis fractions, fitted
// axes, ticks and their labels, on ordinary data and on what a results file can hold at the edges
// (NaN, infinities, one value, non-positive values on log axes, 27 decades).
#include "gpulab/viewer/plot/math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gpulab::viewer {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values_of(const std::vector<Tick>& ticks, bool major) {
  std::vector<double> values;
  for (const Tick& t : ticks) {
    if (t.major == major) {
      values.push_back(t.value);
    }
  }
  return values;
}

std::vector<std::string> labels_of(const std::vector<Tick>& ticks) {
  std::vector<std::string> labels;
  for (const Tick& t : ticks) {
    if (!t.label.empty()) {
      labels.push_back(t.label);
    }
  }
  return labels;
}

void expect_covers(const Axis& axis, const std::vector<double>& values) {
  EXPECT_TRUE(std::isfinite(axis.min) && std::isfinite(axis.max));
  EXPECT_GT(axis.max, axis.min);
  for (const double v : values) {
    if (std::isfinite(v) && (!axis.log || v > 0)) {
      EXPECT_LE(axis.min, v);
      EXPECT_GE(axis.max, v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// axis_fraction
// ---------------------------------------------------------------------------------------------

TEST(AxisFraction, LinearAxisMapsMinToZeroMaxToOneAndExtrapolates) {
  const Axis axis{10, 20, false};
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 10), 0);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 20), 1);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 12.5), 0.25);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 30), 2);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 0), -1);
}

TEST(AxisFraction, LogAxisMapsDecadesEvenly) {
  const Axis axis{1, 1000, true};
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 1), 0);
  EXPECT_NEAR(axis_fraction(axis, 10), 1.0 / 3, 1e-15);
  EXPECT_NEAR(axis_fraction(axis, 100), 2.0 / 3, 1e-15);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 1000), 1);
  EXPECT_NEAR(axis_fraction(axis, 10000), 4.0 / 3, 1e-15);
}

TEST(AxisFraction, NonPositiveValuesOnALogAxisAreFarBelowTheChart) {
  const Axis axis{1, 1000, true};
  for (const double v : {0.0, -5.0, -kInf}) {
    const double f = axis_fraction(axis, v);
    EXPECT_TRUE(std::isfinite(f)) << v;
    EXPECT_LT(f, -1000) << v;
  }
}

TEST(AxisFraction, NanAndInfinitiesGiveFiniteFractionsOutsideTheChart) {
  for (const bool log : {false, true}) {
    const Axis axis{1, 100, log};
    const double nan_fraction = axis_fraction(axis, kNan);
    EXPECT_TRUE(std::isfinite(nan_fraction));
    EXPECT_LT(nan_fraction, -1000);
    const double inf_fraction = axis_fraction(axis, kInf);
    EXPECT_TRUE(std::isfinite(inf_fraction));
    EXPECT_GT(inf_fraction, 1000);
  }
  const double below = axis_fraction(Axis{1, 100, false}, -kInf);
  EXPECT_TRUE(std::isfinite(below));
  EXPECT_LT(below, -1000);
}

TEST(AxisFraction, ABrokenAxisGivesTheMiddleRatherThanNan) {
  for (const Axis axis : {Axis{5, 5, false}, Axis{5, 1, false}, Axis{0, 10, true},
                          Axis{-1, 10, true}, Axis{kNan, 1, false}, Axis{0, kInf, false}}) {
    EXPECT_DOUBLE_EQ(axis_fraction(axis, 3), 0.5);
  }
}

TEST(AxisFraction, AnAxisAcrossTheWholeDoubleRangeDoesNotOverflow) {
  const Axis axis{-1.7e308, 1.7e308, false};
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 0), 0.5);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, 1.7e308), 1);
  EXPECT_DOUBLE_EQ(axis_fraction(axis, -1.7e308), 0);
}

// ---------------------------------------------------------------------------------------------
// fit_axis
// ---------------------------------------------------------------------------------------------

TEST(FitAxis, LogAxisExtendsToWholeDecades) {
  const std::vector<double> values{3, 40, 700};
  const Axis axis = fit_axis(values, /*log=*/true);
  EXPECT_TRUE(axis.log);
  EXPECT_DOUBLE_EQ(axis.min, 1);
  EXPECT_DOUBLE_EQ(axis.max, 1000);
}

TEST(FitAxis, LogAxisLeavesAMarginAroundValuesOnADecade) {
  const std::vector<double> values{100};
  const Axis axis = fit_axis(values, true);
  EXPECT_DOUBLE_EQ(axis.min, 10);
  EXPECT_DOUBLE_EQ(axis.max, 1000);
}

TEST(FitAxis, LogAxisIgnoresNonPositiveAndNonFiniteValues) {
  const std::vector<double> values{-5, 0, kNan, kInf, 20, 50};
  const Axis axis = fit_axis(values, true);
  EXPECT_DOUBLE_EQ(axis.min, 10);
  EXPECT_DOUBLE_EQ(axis.max, 100);
}

TEST(FitAxis, LogAxisSpansTwentySevenDecades) {
  const std::vector<double> values{1e-9, 1e18};
  const Axis axis = fit_axis(values, true);
  EXPECT_DOUBLE_EQ(axis.min, 1e-10);
  EXPECT_DOUBLE_EQ(axis.max, 1e19);
}

TEST(FitAxis, NoUsableValuesGiveTheDefaultAxes) {
  const std::vector<double> none;
  const std::vector<double> unusable{kNan, kInf, -kInf};
  const std::vector<double> non_positive{0, -1};
  for (const auto* values : {&none, &unusable}) {
    const Axis linear = fit_axis(*values, false);
    EXPECT_EQ(linear.min, 0);
    EXPECT_EQ(linear.max, 1);
    EXPECT_FALSE(linear.log);
  }
  for (const auto* values : {&none, &unusable, &non_positive}) {
    const Axis log = fit_axis(*values, true);
    EXPECT_EQ(log.min, 1);
    EXPECT_EQ(log.max, 10);
    EXPECT_TRUE(log.log);
  }
}

TEST(FitAxis, LinearAxisRoundsOutToNiceSteps) {
  const std::vector<double> values{3, 50, 97};
  const Axis axis = fit_axis(values, false);
  EXPECT_DOUBLE_EQ(axis.min, 0);
  EXPECT_DOUBLE_EQ(axis.max, 100);
  EXPECT_FALSE(axis.log);
}

TEST(FitAxis, IncludeZeroStartsALinearAxisAtZero) {
  const std::vector<double> values{40, 45};
  const Axis without = fit_axis(values, false);
  EXPECT_GT(without.min, 30);
  const Axis with = fit_axis(values, false, /*include_zero=*/true);
  EXPECT_DOUBLE_EQ(with.min, 0);
  EXPECT_GE(with.max, 45);
}

TEST(FitAxis, NegativeValuesAreCoveredOnALinearAxis) {
  const std::vector<double> values{-50, -10};
  expect_covers(fit_axis(values, false), values);
  const Axis with_zero = fit_axis(values, false, true);
  expect_covers(with_zero, values);
  EXPECT_GE(with_zero.max, 0);
}

TEST(FitAxis, ASingleValueGetsARangeAroundIt) {
  for (const double v : {5.0, -5.0, 0.0, 1e-12, 1e300}) {
    const std::vector<double> values{v, v};
    const Axis axis = fit_axis(values, false);
    expect_covers(axis, values);
    EXPECT_LT(axis.min, v);
    EXPECT_GT(axis.max, v);
  }
}

TEST(FitAxis, HugeAndExtremeRangesStayFiniteAndCoverTheValues) {
  const std::vector<std::vector<double>> cases{
      {1e-9, 1e18}, {-1.7e308, 1.7e308}, {1.7e308}, {-1.7e308}, {1e18, 1e18 + 1e4}};
  for (const auto& values : cases) {
    expect_covers(fit_axis(values, false), values);
    expect_covers(fit_axis(values, false, true), values);
  }
}

// ---------------------------------------------------------------------------------------------
// axis_ticks
// ---------------------------------------------------------------------------------------------

TEST(AxisTicks, LinearTicksUseOneTwoFiveSteps) {
  const std::vector<Tick> ticks = axis_ticks(Axis{0, 100, false}, 8);
  EXPECT_EQ(values_of(ticks, true), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(labels_of(ticks), (std::vector<std::string>{"0", "20", "40", "60", "80", "100"}));
}

TEST(AxisTicks, LinearTicksRespectMaxLabels) {
  for (const int max_labels : {2, 3, 5, 8, 12}) {
    const std::vector<Tick> ticks = axis_ticks(Axis{-3.7, 123.4, false}, max_labels);
    EXPECT_GE(ticks.size(), 2u) << max_labels;
    EXPECT_LE(ticks.size(), static_cast<std::size_t>(max_labels)) << max_labels;
    for (const Tick& t : ticks) {
      EXPECT_GE(t.value, -3.7);
      EXPECT_LE(t.value, 123.4);
    }
  }
}

TEST(AxisTicks, FractionalStepsGetEnoughDecimals) {
  const std::vector<Tick> ticks = axis_ticks(Axis{0, 1, false}, 6);
  EXPECT_EQ(labels_of(ticks), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
}

TEST(AxisTicks, NarrowRangesFarFromZeroGetDistinctLabels) {
  const std::vector<Tick> ticks = axis_ticks(Axis{1000, 1002, false}, 5);
  EXPECT_EQ(labels_of(ticks),
            (std::vector<std::string>{"1000", "1000.5", "1001", "1001.5", "1002"}));
  const std::vector<Tick> big = axis_ticks(Axis{1e9, 1e9 + 4e6, false}, 4);
  std::vector<std::string> big_labels = labels_of(big);
  EXPECT_EQ(big_labels.front(), "1e+09");
  EXPECT_EQ(std::unique(big_labels.begin(), big_labels.end()), big_labels.end());
}

TEST(AxisTicks, LogAxisGetsLabelledDecadesAndUnlabelledMinors) {
  const std::vector<Tick> ticks = axis_ticks(Axis{1, 1000, true}, 8);
  EXPECT_EQ(values_of(ticks, true), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(labels_of(ticks), (std::vector<std::string>{"1", "10", "100", "1000"}));
  const std::vector<double> minors = values_of(ticks, false);
  EXPECT_EQ(minors.size(), 24u);  // 2..9 in each of three decades
  EXPECT_DOUBLE_EQ(minors.front(), 2);
  EXPECT_DOUBLE_EQ(minors.back(), 900);
  EXPECT_TRUE(std::is_sorted(ticks.begin(), ticks.end(),
                             [](const Tick& a, const Tick& b) { return a.value < b.value; }));
}

TEST(AxisTicks, LogAxisLabelsEveryOtherDecadeWhenThereAreTooMany) {
  const std::vector<Tick> ticks = axis_ticks(Axis{1, 1e9, true}, 8);  // 10 decades
  EXPECT_EQ(labels_of(ticks), (std::vector<std::string>{"1", "100", "10000", "1e+06", "1e+08"}));
  EXPECT_EQ(values_of(ticks, true), (std::vector<double>{1, 100, 1e4, 1e6, 1e8}));
  // The other decades stay as unlabelled ticks; 9 decades is too many for minors.
  EXPECT_EQ(values_of(ticks, false), (std::vector<double>{10, 1000, 1e5, 1e7, 1e9}));
}

TEST(AxisTicks, TwentySevenDecadesStayWithinTheLabelLimit) {
  const std::vector<Tick> ticks = axis_ticks(Axis{1e-9, 1e18, true}, 8);
  const std::vector<std::string> labels = labels_of(ticks);
  EXPECT_LE(labels.size(), 8u);
  EXPECT_GE(labels.size(), 4u);
  EXPECT_EQ(ticks.size(), 28u);  // one tick per decade, no minors
  EXPECT_NE(std::find(labels.begin(), labels.end(), "1"), labels.end());
}

TEST(AxisTicks, ALogAxisInsideOneDecadeLabelsItsMinors) {
  const std::vector<Tick> ticks = axis_ticks(Axis{2, 8, true}, 8);
  EXPECT_EQ(labels_of(ticks), (std::vector<std::string>{"2", "3", "4", "5", "6", "7", "8"}));
}

TEST(AxisTicks, BrokenAxesGiveNoTicks) {
  for (const Axis axis : {Axis{5, 5, false}, Axis{5, 1, false}, Axis{0, 10, true},
                          Axis{kNan, 1, false}, Axis{0, kInf, false}}) {
    EXPECT_TRUE(axis_ticks(axis).empty());
  }
}

TEST(AxisTicks, AnAxisAcrossTheWholeDoubleRangeGetsFiniteTicks) {
  const std::vector<Tick> ticks = axis_ticks(Axis{-1.7e308, 1.7e308, false});
  ASSERT_FALSE(ticks.empty());
  for (const Tick& t : ticks) {
    EXPECT_TRUE(std::isfinite(t.value));
  }
}

// ---------------------------------------------------------------------------------------------
// short_number
// ---------------------------------------------------------------------------------------------

TEST(ShortNumber, ThreeSignificantDigitsPlainBetweenAThousandthAndAMillion) {
  EXPECT_EQ(short_number(0.00125), "0.00125");
  EXPECT_EQ(short_number(1500), "1500");
  EXPECT_EQ(short_number(1234), "1230");
  EXPECT_EQ(short_number(15.5), "15.5");
  EXPECT_EQ(short_number(3.14159), "3.14");
  EXPECT_EQ(short_number(0.001), "0.001");
  EXPECT_EQ(short_number(999999), "1e+06");  // rounds to a million: exponent style
  EXPECT_EQ(short_number(-42), "-42");
  EXPECT_EQ(short_number(0), "0");
}

TEST(ShortNumber, ExponentStyleBeyondAMillionAndBelowAThousandth) {
  EXPECT_EQ(short_number(2.5e9), "2.5e+09");
  EXPECT_EQ(short_number(1e6), "1e+06");
  EXPECT_EQ(short_number(0.0001), "1e-04");
  EXPECT_EQ(short_number(-3.456e-7), "-3.46e-07");
}

TEST(ShortNumber, NonFiniteValuesAreNamed) {
  EXPECT_EQ(short_number(kNan), "nan");
  EXPECT_EQ(short_number(kInf), "inf");
  EXPECT_EQ(short_number(-kInf), "-inf");
}

}  // namespace
}  // namespace gpulab::viewer
