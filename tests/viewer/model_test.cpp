// Unit tests of the viewer's GUI-free model (gpulab/viewer/model.hpp): spec selection, the device
// summary, the spec sheet and loaded results. No window is opened; device queries are built by
// hand, so these run the same on a GPU machine, a laptop and CI.
#include "gpulab/viewer/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpulab::viewer {
namespace {

const std::string kData = GPULAB_VIEWER_TEST_DATA_DIR;

DeviceInfo h100_device() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";  // the driver's name for H100 SXM
  d.cc_major = 9;
  d.sm_count = 132;
  d.global_memory_bytes = 85'000'000'000;
  return d;
}

// A GPU the database does not know, with enough properties for an estimate.
DeviceInfo unknown_device() {
  DeviceInfo d;
  d.name = "Imaginary Accelerator X1";
  d.cc_major = 9;
  d.sm_count = 100;
  d.sm_clock_khz = 1'500'000;
  d.memory_clock_khz = 2'000'000;
  d.memory_bus_width_bits = 4096;
  d.global_memory_bytes = 64'000'000'000;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.warp_size = 32;
  return d;
}

DeviceQuery cuda_with(DeviceInfo device) {
  DeviceQuery q;
  q.backend = "cuda";
  q.devices.push_back(std::move(device));
  return q;
}

DeviceQuery cuda_without_driver() {
  DeviceQuery q;
  q.backend = "cuda";
  q.unavailable =
      DeviceUnavailable{35, "cudaErrorInsufficientDriver", "no NVIDIA driver is loaded"};
  return q;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const SpecRow* find_row(const std::vector<SpecRow>& rows, const std::string& property) {
  const auto it = std::find_if(rows.begin(), rows.end(),
                               [&](const SpecRow& r) { return r.property == property; });
  return it == rows.end() ? nullptr : &*it;
}

// --- choosing the first spec ------------------------------------------------------------------

TEST(ViewerModelSpec, DetectedDeviceInTheDatabaseSelectsItsDatasheetSpec) {
  const Model model(cuda_with(h100_device()), "a100");  // a real device beats GPULAB_SIM_SPEC
  EXPECT_EQ(model.selected_spec().key, "h100-sxm");
  EXPECT_EQ(model.selected_spec().origin, SpecOrigin::datasheet);
  EXPECT_EQ(model.choice(), SpecChoice::detected_device);
  EXPECT_EQ(model.specs().size(), all_specs().size());
}

TEST(ViewerModelSpec, UnknownDeviceIsOfferedAsAnEstimateAndSelected) {
  const Model model(cuda_with(unknown_device()), "");
  ASSERT_EQ(model.specs().size(), all_specs().size() + 1);
  EXPECT_EQ(model.selected_index(), 0u);
  EXPECT_EQ(model.selected_spec().origin, SpecOrigin::estimated);
  EXPECT_EQ(model.selected_spec().name, "Imaginary Accelerator X1");
  EXPECT_EQ(spec_label(model.selected_spec()), "Imaginary Accelerator X1 (estimated)");
}

TEST(ViewerModelSpec, WithoutADeviceGpulabSimSpecChoosesTheSpec) {
  const Model model(cuda_without_driver(), "a100");
  EXPECT_EQ(model.selected_spec().key, "a100-sxm-80gb");
  EXPECT_EQ(model.simulated_spec().key, "a100-sxm-80gb");
  EXPECT_EQ(model.choice(), SpecChoice::sim_spec_env);
  EXPECT_TRUE(model.notes().empty());
}

TEST(ViewerModelSpec, WithoutADeviceOrGpulabSimSpecTheDefaultSpecIsSelected) {
  const Model model(cuda_without_driver(), "");
  EXPECT_EQ(model.selected_spec().key, default_spec().key);
  EXPECT_EQ(model.choice(), SpecChoice::fallback);
  EXPECT_EQ(model.simulated_spec_origin(), "default");
}

TEST(ViewerModelSpec, UnknownGpulabSimSpecFallsBackToTheDefaultWithANote) {
  const Model model(cuda_without_driver(), "no-such-gpu");
  EXPECT_EQ(model.selected_spec().key, default_spec().key);
  EXPECT_EQ(model.choice(), SpecChoice::fallback);
  ASSERT_EQ(model.notes().size(), 1u);
  EXPECT_TRUE(contains(model.notes()[0], "no-such-gpu")) << model.notes()[0];
}

TEST(ViewerModelSpec, SimBackendDeviceMapsToTheSimulatedSpecNotAnEstimate) {
  DeviceInfo simulated = h100_device();
  simulated.name = "gpulab sim (A100 80GB SXM)";
  DeviceQuery q = cuda_with(simulated);
  q.backend = "sim";
  const Model model(q, "a100");
  EXPECT_EQ(model.selected_spec().key, "a100-sxm-80gb");
  EXPECT_EQ(model.specs().size(), all_specs().size());  // no "estimated" entry for sim
}

// --- changing the spec --------------------------------------------------------------------------

TEST(ViewerModelSpec, SelectByNameAcceptsKeysAndShortNames) {
  Model model(cuda_without_driver(), "");
  EXPECT_TRUE(model.select_spec("h200"));
  EXPECT_EQ(model.selected_spec().key, "h200-sxm");
  EXPECT_EQ(model.choice(), SpecChoice::user);
  EXPECT_TRUE(model.select_spec("A100 80GB SXM"));
  EXPECT_EQ(model.selected_spec().key, "a100-sxm-80gb");
}

TEST(ViewerModelSpec, UnknownNameOrIndexLeavesTheSelectionAlone) {
  Model model(cuda_without_driver(), "");
  const std::size_t before = model.selected_index();
  EXPECT_FALSE(model.select_spec("no-such-gpu"));
  EXPECT_FALSE(model.select_spec(model.specs().size()));
  EXPECT_EQ(model.selected_index(), before);
  EXPECT_EQ(model.choice(), SpecChoice::fallback);
}

TEST(ViewerModelSpec, TheEstimatedEntryCanBeSelectedBackByName) {
  Model model(cuda_with(unknown_device()), "");
  ASSERT_TRUE(model.select_spec("h100"));
  EXPECT_TRUE(model.select_spec("Imaginary Accelerator X1"));
  EXPECT_EQ(model.selected_index(), 0u);
}

// --- device summary ---------------------------------------------------------------------------

TEST(ViewerModelDevices, NoDeviceSaysWhyAndWhatTheSimBackendSimulates) {
  const DeviceSummary s = summarize_devices(Model(cuda_without_driver(), ""));
  EXPECT_EQ(s.backend, "cuda");
  EXPECT_TRUE(s.devices.empty());
  EXPECT_TRUE(contains(s.unavailable, "cudaErrorInsufficientDriver (35)")) << s.unavailable;
  EXPECT_TRUE(contains(s.unavailable, "no NVIDIA driver is loaded")) << s.unavailable;
  EXPECT_TRUE(contains(s.simulation, "sim backend simulates " + default_spec().name))
      << s.simulation;
}

TEST(ViewerModelDevices, DetectedDeviceIsOneLineWithItsShape) {
  const DeviceSummary s = summarize_devices(Model(cuda_with(h100_device()), ""));
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_TRUE(contains(s.devices[0], "device 0: NVIDIA H100 80GB HBM3")) << s.devices[0];
  EXPECT_TRUE(contains(s.devices[0], "132 SMs")) << s.devices[0];
  EXPECT_TRUE(s.unavailable.empty());
}

TEST(ViewerModelDevices, QueryWithoutDevicesOrReasonStillExplainsItself) {
  DeviceQuery q;
  q.backend = "cuda";
  const DeviceSummary s = summarize_devices(Model(q, ""));
  EXPECT_FALSE(s.unavailable.empty());
}

// --- spec sheet -------------------------------------------------------------------------------

TEST(ViewerModelSpecSheet, PeaksAndLimitsCarryTheirUnits) {
  const SpecSheet sheet = spec_sheet(*find_spec("h100-sxm"));
  EXPECT_FALSE(sheet.estimated);
  EXPECT_EQ(sheet.origin, "datasheet");
  const SpecRow* bandwidth = find_row(sheet.peaks, "DRAM bandwidth");
  ASSERT_NE(bandwidth, nullptr);
  EXPECT_EQ(bandwidth->unit, "GB/s");
  EXPECT_EQ(bandwidth->origin, "datasheet");
  const SpecRow* fp32 = find_row(sheet.peaks, "FP32 (CUDA cores)");
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(fp32->unit, "TFLOP/s");
  const SpecRow* smem = find_row(sheet.limits, "shared memory per SM");
  ASSERT_NE(smem, nullptr);
  EXPECT_EQ(smem->unit, "bytes");
  EXPECT_EQ(smem->value, std::to_string(find_spec("h100-sxm")->shared_memory_per_sm_bytes));
  for (const SpecRow& row : sheet.limits) {
    EXPECT_FALSE(row.unit.empty()) << row.property;
  }
}

TEST(ViewerModelSpecSheet, RidgePointIsDerivedFromFp32AndBandwidth) {
  const GpuSpec spec = *find_spec("h100-sxm");
  const SpecRow* ridge = find_row(spec_sheet(spec).peaks, "FP32 ridge point");
  ASSERT_NE(ridge, nullptr);
  EXPECT_EQ(ridge->origin, "derived");
  EXPECT_EQ(ridge->unit, "FLOP/byte");
  const double expected = spec.fp32_tflop_s * 1e3 / spec.dram_bandwidth_gb_s;
  EXPECT_NEAR(std::stod(ridge->value), expected, 0.05);
}

TEST(ViewerModelSpecSheet, PrecisionWithoutTensorCoresShowsADashNotZero) {
  const SpecRow* tf32 = find_row(spec_sheet(*find_spec("v100")).peaks, "TF32 tensor, dense");
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(tf32->value, "-");
  EXPECT_EQ(tf32->unit, "not supported");
}

TEST(ViewerModelSpecSheet, EstimateMarksComputedPeaksEstimatedAndReportedCountsDeviceQuery) {
  const SpecSheet sheet = spec_sheet(spec_for_device(unknown_device()));
  EXPECT_TRUE(sheet.estimated);
  EXPECT_EQ(find_row(sheet.peaks, "DRAM bandwidth")->origin, "estimated");
  EXPECT_EQ(find_row(sheet.peaks, "SMs")->origin, "device query");
  EXPECT_EQ(find_row(sheet.limits, "threads per SM")->origin, "device query");
}

// --- results ------------------------------------------------------------------------------------

TEST(ViewerModelResults, NothingIsLoadedAtStart) {
  EXPECT_TRUE(Model(cuda_without_driver(), "").results().empty());
}

TEST(ViewerModelResults, ValidFileGivesContextAndOneRowPerMetric) {
  Model model(cuda_without_driver(), "");
  const LoadedResults& loaded = model.load_results(kData + "/results_valid.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  EXPECT_TRUE(loaded.error.empty());
  ASSERT_EQ(loaded.metrics.size(), 6u);

  const MetricRow& measured = loaded.metrics[1];
  EXPECT_EQ(measured.result, "vector_add");
  EXPECT_EQ(measured.params, "level=1, n=1048576");
  EXPECT_EQ(measured.metric, "bandwidth");
  EXPECT_EQ(measured.value, "15.50");
  EXPECT_EQ(measured.unit, "GB/s");
  EXPECT_EQ(measured.provenance, "measured");

  EXPECT_EQ(loaded.metrics[2].provenance, "modeled (H100 SXM)");
  EXPECT_EQ(loaded.metrics[3].provenance, "unavailable");
  EXPECT_EQ(loaded.metrics[3].value, "n/a");
  EXPECT_EQ(loaded.metrics[3].reason, "needs CUPTI (cuda backend only)");
  EXPECT_EQ(loaded.metrics[5].metric, "bytes");  // a bare unit is its own name
  EXPECT_EQ(loaded.metrics[5].value, "33554432");

  const auto backend = std::find_if(loaded.context.begin(), loaded.context.end(),
                                    [](const ContextRow& r) { return r.field == "backend"; });
  ASSERT_NE(backend, loaded.context.end());
  EXPECT_EQ(backend->value, "sim");
}

TEST(ViewerModelResults, MalformedFileBecomesAOneLineErrorNotAnException) {
  Model model(cuda_without_driver(), "");
  const std::string path = kData + "/results_malformed.json";
  EXPECT_NO_THROW(model.load_results(path));
  ASSERT_EQ(model.results().size(), 1u);
  const LoadedResults& loaded = model.results()[0];
  EXPECT_FALSE(loaded.ok());
  EXPECT_TRUE(contains(loaded.error, "results_malformed.json")) << loaded.error;
  EXPECT_EQ(loaded.error.find('\n'), std::string::npos) << loaded.error;
  EXPECT_TRUE(loaded.metrics.empty());
}

TEST(ViewerModelResults, InvalidContentAndMissingFilesAreKeptAsErrors) {
  Model model(cuda_without_driver(), "");
  EXPECT_FALSE(model.load_results(kData + "/results_no_unit.json").ok());
  EXPECT_FALSE(model.load_results(kData + "/does_not_exist.json").ok());
  EXPECT_TRUE(contains(model.results()[1].error, "does_not_exist.json"));
}

TEST(ViewerModelResults, FilesStayInOrderAndAFailureDoesNotStopTheNext) {
  Model model(cuda_without_driver(), "");
  model.load_results(kData + "/results_malformed.json");
  model.load_results(kData + "/results_valid.json");
  ASSERT_EQ(model.results().size(), 2u);
  EXPECT_FALSE(model.results()[0].ok());
  EXPECT_TRUE(model.results()[1].ok());
}

TEST(ViewerModelResults, ControlCharactersFromAFileAreNotDrawn) {
  ResultsFile file;
  file.context = make_context("sim", "", "");
  file.results.push_back(
      Result{"two\nlines", {}, {Metric{"time_ms", 1.0, Provenance::measured, "", ""}}});
  const std::vector<MetricRow> rows = metric_rows(file);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].result, "two?lines");
}

TEST(ViewerModelFormat, ValuesKeepAboutFourSignificantDigits) {
  EXPECT_EQ(format_value(0.00376), "0.003760");
  EXPECT_EQ(format_value(15.5), "15.50");
  EXPECT_EQ(format_value(0.812), "0.8120");
  EXPECT_EQ(format_value(1234.5678), "1235");
  EXPECT_EQ(format_value(33554432), "33554432");
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(-2.5), "-2.500");
}

}  // namespace
}  // namespace gpulab::viewer
