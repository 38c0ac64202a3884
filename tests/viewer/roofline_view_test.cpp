// Tests of the Roofline panel's view (roofline_view.cpp): points against the roof of their own GPU
// and precision, hand-computed, and lab 02 and lab 03 output on sim.
#include "gpulab/viewer/views.hpp"

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

// ---------------------------------------------------------------------------------------------
// roofline_view
// ---------------------------------------------------------------------------------------------

// An op of 1 GFLOP moving 100 MB (intensity 10 FLOP/byte), measured at 0.1 ms.
Result ten_flop_per_byte_op() {
  return result("attention_component", {{"component", "Score Computation"}, {"seq_len", "64"}},
                {measured("flop", 1e9), measured("bytes", 1e8), measured("time_ms", 0.1),
                 modeled("time_ms", 1e8 / 3350e9 * 1e3)});
}

TEST(RooflineView, MeasuredPointOnH100Fp32MatchesHandComputedPercentOfRoof) {
  const ResultsFile f = file_of("cuda", {ten_flop_per_byte_op()});
  const std::vector<Source> sources{{"h100.json", &f, false}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_TRUE(v.roofline);
  EXPECT_TRUE(v.unavailable.empty());
  EXPECT_DOUBLE_EQ(v.roofline->peak_flop_s, 66.9e12);
  ASSERT_EQ(v.points.size(), 2u);
  EXPECT_TRUE(v.empty_reason.empty());

  const RooflinePoint& m = v.points[0];
  EXPECT_EQ(m.kind, Provenance::measured);
  EXPECT_EQ(m.label, "Score Computation (seq_len=64)");
  EXPECT_EQ(m.source, "h100.json");
  expect_close(m.intensity_flop_per_byte, 10, "intensity");
  expect_close(m.achieved_flop_s, 1e13, "achieved");  // 1e9 FLOP / 1e-4 s
  // Ridge of H100 SXM FP32: 66.9e12 / 3350e9 = 19.97 FLOP/byte; 10 is left of it, so the roof is
  // 10 x 3350 GB/s = 33.5 TFLOP/s and the op is memory-bound.
  expect_close(m.roof_flop_s, 33.5e12, "roof");
  expect_close(m.percent_of_roof, 100 * 1e13 / 33.5e12, "percent");  // 29.85%
  EXPECT_EQ(m.bound, Bound::memory);

  const RooflinePoint& modeled_point = v.points[1];
  EXPECT_EQ(modeled_point.kind, Provenance::modeled);
  EXPECT_NEAR(modeled_point.percent_of_roof, 100, 1e-9);  // modeled at the roof
}

TEST(RooflineView, MeasuredPointsOfSimSourcesAreLeftOutAndModeledOnesStay) {
  const ResultsFile f = file_of("sim", {ten_flop_per_byte_op()});
  const std::vector<Source> sources{{"live (sim)", &f, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_EQ(v.points.size(), 1u);
  EXPECT_EQ(v.points[0].kind, Provenance::modeled);
  EXPECT_EQ(v.points[0].source, "live (sim)");
}

TEST(RooflineView, OnlySimMeasuredTimesGiveAnEmptyViewThatSaysWhy) {
  Result r = result("op_cost", {{"op", "GEMM"}},
                    {measured("flop", 1e9), measured("bytes", 1e6), measured("time_ms", 5)});
  const ResultsFile f = file_of("sim", {r});
  const std::vector<Source> sources{{"live (sim)", &f, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("1 measured time(s) of sim runs left out"), std::string::npos)
      << v.empty_reason;
}

TEST(RooflineView, Lab02AndLab03OnSimPlaceModeledOpsAtFp32) {
  const ResultsFile lab02 = load("lab02_sim.json");
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab02", &lab02, true}, {"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  // lab02: five components with FLOPs and bytes (their measured CPU times left out); lab03: five
  // FP32 op_cost results. lab03's components have no FLOPs or bytes and are not placed.
  ASSERT_EQ(v.points.size(), 10u);
  std::size_t from_lab02 = 0;
  for (const RooflinePoint& p : v.points) {
    EXPECT_EQ(p.kind, Provenance::modeled) << p.label;
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;  // the labs model at the roof
    from_lab02 += p.source == "lab02" ? 1 : 0;
  }
  EXPECT_EQ(from_lab02, 5u);
  const auto has = [&](const std::string& label) {
    return std::any_of(v.points.begin(), v.points.end(),
                       [&](const RooflinePoint& p) { return p.label == label; });
  };
  EXPECT_TRUE(has("Softmax (seq_len=64)"));
  EXPECT_TRUE(has("GEMM 4096x4096x4096"));
  const auto gemm = std::find_if(v.points.begin(), v.points.end(), [](const RooflinePoint& p) {
    return p.label == "GEMM 4096x4096x4096";
  });
  EXPECT_EQ(gemm->bound, Bound::compute);
  expect_close(gemm->intensity_flop_per_byte, 137.438953472e9 / 201326592.0, "GEMM intensity");
}

TEST(RooflineView, Lab03AtFp16TensorPlacesItsFiveFp16Ops) {
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp16);
  ASSERT_TRUE(v.roofline);
  EXPECT_DOUBLE_EQ(v.roofline->peak_flop_s, 989.4e12);
  ASSERT_EQ(v.points.size(), 5u);
  for (const RooflinePoint& p : v.points) {
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;
  }
}

TEST(RooflineView, ModeledTimesOfAnotherSpecAreModeledAgainForTheShownSpec) {
  const ResultsFile lab03 = load("lab03_sim.json");  // modeled for H100 SXM
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("a100-sxm-80gb"), Precision::fp32);
  ASSERT_EQ(v.points.size(), 5u);
  for (const RooflinePoint& p : v.points) {
    EXPECT_NEAR(p.percent_of_roof, 100, 1e-6) << p.label;  // not 3350/2039 = 164% of the roof
  }
}

TEST(RooflineView, ComponentsWithoutFlopsAndBytesAreNotPlacedAndTheReasonSaysSo) {
  ResultsFile lab03 = load("lab03_sim.json");
  std::erase_if(lab03.results, [](const Result& r) { return r.name != "attention_component"; });
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("25 op(s) not placed: the file gives no FLOPs and bytes"),
            std::string::npos)
      << v.empty_reason;
}

TEST(RooflineView, ASpecWithoutThePrecisionHasNoRoofAndSaysWhy) {
  const ResultsFile lab03 = load("lab03_sim.json");
  const std::vector<Source> sources{{"lab03", &lab03, true}};
  const RooflineView v = roofline_view(sources, spec("t4"), Precision::bf16);
  EXPECT_FALSE(v.roofline);
  EXPECT_FALSE(v.unavailable.empty());
  EXPECT_TRUE(v.points.empty());
  EXPECT_FALSE(v.empty_reason.empty());
}

TEST(RooflineView, NoSourcesGiveAnEmptyViewWithAReason) {
  const RooflineView v = roofline_view({}, spec("h100-sxm"), Precision::fp32);
  ASSERT_TRUE(v.roofline);  // the roofs are drawn without points
  EXPECT_TRUE(v.points.empty());
  EXPECT_FALSE(v.empty_reason.empty());
}

TEST(RooflineView, OddOpsAreSkippedWithoutACrash) {
  // An unknown precision, zero bytes, and a zero time: nothing can be placed.
  const ResultsFile f = load("views_odd.json");
  const std::vector<Source> sources{{"odd", &f, false}};
  const RooflineView v = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  EXPECT_TRUE(v.points.empty());
  EXPECT_NE(v.empty_reason.find("no op at FP32"), std::string::npos) << v.empty_reason;
}

TEST(RooflineView, PrecisionParamIsReadInEitherSpelling) {
  const auto op = [](const char* precision) {
    return result("op_cost", {{"op", precision}, {"precision", precision}},
                  {modeled("work_gflop", 1), modeled("bytes", 1e6), modeled("time_ms", 1)});
  };
  const ResultsFile f = file_of("cuda", {op("fp16"), op("FP16 tensor"), op("FP32"), op("int8")});
  const std::vector<Source> sources{{"f", &f, false}};
  EXPECT_EQ(roofline_view(sources, spec("h100-sxm"), Precision::fp16).points.size(), 2u);
  EXPECT_EQ(roofline_view(sources, spec("h100-sxm"), Precision::fp32).points.size(), 1u);
}

TEST(RooflineViewReview, AMeasuredPointIsJudgedAgainstItsOwnGpusRoof) {
  // 1e9 FLOP and 1e8 bytes (10 FLOP/byte) in 1 ms: 1 TFLOP/s achieved. On an A100 file the roof
  // at 10 FLOP/byte is min(FP32 peak, 10 x DRAM bandwidth) of the A100, whatever spec is drawn.
  Result r = result("op_cost", {{"op", "probe"}},
                    {measured("flop", 1e9), measured("bytes", 1e8), measured("time_ms", 1.0)});
  const ResultsFile a100 = file_of("cuda", {r}, "A100 80GB SXM");
  const GpuSpec own = spec("a100-sxm-80gb");
  const std::vector<Source> sources{{"a100.json", &a100, false}};
  const RooflineView view = roofline_view(sources, spec("h100-sxm"), Precision::fp32);
  ASSERT_EQ(view.points.size(), 1U);
  const double roof = std::min(own.fp32_tflop_s * 1e12, 10 * own.dram_bandwidth_gb_s * 1e9);
  expect_close(view.points[0].roof_flop_s, roof, "roof");
  expect_close(view.points[0].percent_of_roof, 100 * 1e12 / roof, "percent of roof");
  EXPECT_EQ(view.roofline->spec_name, "H100 SXM");
}

}  // namespace
}  // namespace gpulab::viewer
