// Unit tests of the viewer's GUI-free model (gpulab/viewer/model.hpp): spec selection, the device
// summary, the spec sheet and loaded results. No window is opened; device queries are built by
// hand, so these run the same on a GPU machine, a laptop and CI.
#include "gpulab/viewer/model.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "test_device.hpp"

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
  // A schema 1 sim file: its times were the host clock's, and the Results panel says so.
  const auto clock = std::find_if(loaded.context.begin(), loaded.context.end(),
                                  [](const ContextRow& r) { return r.field == "clock"; });
  ASSERT_NE(clock, loaded.context.end());
  EXPECT_EQ(clock->value, "measured (CPU simulation)");
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

TEST(ViewerModelResults, AMemoryHistoryFileGivesItsSourceATimeline) {
  // history_sim.json: `gpulab run lab04 --quick --memory-history FILE` on sim.
  Model model(cuda_without_driver(), "");
  const LoadedResults& loaded = model.load_results(kData + "/history_sim.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  ASSERT_TRUE(loaded.history.has_value());
  EXPECT_FALSE(loaded.history->events.empty());
  ASSERT_EQ(model.panel_data().sources.size(), 1u);
  const std::optional<MemoryTimelineView>& timeline = model.panel_data().sources[0].timeline;
  ASSERT_TRUE(timeline.has_value());
  EXPECT_GT(timeline->peak_bytes, 0);
  EXPECT_FALSE(timeline->bands.empty());
  EXPECT_FALSE(model.load_results(kData + "/results_valid.json").history.has_value());
}

TEST(ViewerModelResults, AnInvalidMemoryHistoryFailsTheWholeFileWithOneLine) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "gpulab-viewer-bad-history.json";
  nlohmann::json document = load_results_json(kData + "/history_sim.json");
  document["memory_history"]["events"][0]["kind"] = "steal";
  std::ofstream(path) << document.dump();
  Model model(cuda_without_driver(), "");
  const LoadedResults& loaded = model.load_results(path);
  EXPECT_FALSE(loaded.ok());
  EXPECT_FALSE(loaded.history.has_value());
  EXPECT_TRUE(contains(loaded.error, "memory_history.events[0].kind")) << loaded.error;
  EXPECT_TRUE(model.panel_data().sources.empty());
  std::filesystem::remove(path);
}

TEST(ViewerModelResults, AClassSummaryGivesItsSourceAClassView) {
  // class_sim.json: the summary.json of the 50-submission class test (gpulab grade lab03
  // --roster ..., tests/cli/roster_class_test.cpp) on sim.
  Model model(cuda_without_driver(), "");
  const LoadedResults& loaded = model.load_results(kData + "/class_sim.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  ASSERT_TRUE(loaded.class_summary.has_value());
  EXPECT_EQ(loaded.class_summary->students, 50u);
  ASSERT_EQ(model.panel_data().sources.size(), 1u);
  const std::optional<ClassView>& view = model.panel_data().sources[0].class_view;
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->heading, "50 of 50 submissions graded (sim backend)");
  ASSERT_EQ(view->labs.size(), 1u);
  EXPECT_EQ(view->labs[0].lab, "lab03");
  ASSERT_EQ(view->labs[0].students.size(), 10u);
  double students = 0;
  for (const double count : view->labs[0].students) {
    students += count;
  }
  EXPECT_EQ(students, 50);
  ASSERT_FALSE(view->failed.empty());
  EXPECT_EQ(view->failed[0].students, 43u);  // the hidden test of lab 03, as summary.txt says
  EXPECT_EQ(view->failed[0].share, "43 of 50 (86%)");
  EXPECT_FALSE(model.load_results(kData + "/results_valid.json").class_summary.has_value());
  EXPECT_FALSE(model.panel_data().sources[1].class_view.has_value());
}

TEST(ViewerModelResults, AnInvalidClassSummaryFailsTheWholeFileWithOneLine) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "gpulab-viewer-bad-class.json";
  nlohmann::json document = load_results_json(kData + "/class_sim.json");
  document["class_summary"]["labs"][0]["histogram"][0] = 1000;
  std::ofstream(path) << document.dump();
  Model model(cuda_without_driver(), "");
  const LoadedResults& loaded = model.load_results(path);
  EXPECT_FALSE(loaded.ok());
  EXPECT_FALSE(loaded.class_summary.has_value());
  EXPECT_TRUE(contains(loaded.error, "class_summary.labs[0].histogram")) << loaded.error;
  EXPECT_TRUE(model.panel_data().sources.empty());
  std::filesystem::remove(path);
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

// --- hostile results files --------------------------------------------------------------------

namespace fs = std::filesystem;

using gpulab::testing::TempDir;

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A valid file's text with `results` as its results array.
std::string with_results(const std::string& results) {
  return R"({"context": {"schema_version": 1, "gpulab_version": "0.1.0", "backend": "sim",
             "date": "2026-11-22T10:15:00Z"}, "results": )" +
         results + "}";
}

// A valid file's text with one result whose metrics array is `metrics`.
std::string with_metrics(const std::string& metrics) {
  return with_results(R"([{"name": "vector_add", "params": {"n": "1024"}, "metrics": )" + metrics +
                      "}]");
}

// Fifty ways a results file can be wrong, each written into `dir`: syntax, encoding, structure,
// content, size, and things that are not regular files at all. Returns the paths.
std::vector<fs::path> make_hostile_files(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> texts = {
      {"empty.json", ""},
      {"whitespace.json", " \n\t\n "},
      {"truncated.json", with_results("[").substr(0, 60)},
      {"truncated_string.json", R"({"context": {"gpulab_version": "0.1)"},
      {"not_json.json", "hello, viewer"},
      {"html.json", "<html><body>404 Not Found</body></html>"},
      {"binary.json", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)},
      {"nul_in_string.json",
       with_results(std::string("[{\"name\": \"a\0b\", \"metrics\": []}]", 30))},
      {"invalid_utf8.json", with_results("[{\"name\": \"\xff\xfe\", \"metrics\": []}]")},
      {"overlong_utf8.json", with_results("[{\"name\": \"\xc0\xaf\", \"metrics\": []}]")},
      {"lone_surrogate.json", with_results(R"([{"name": "\ud800", "metrics": []}])")},
      {"bom_then_garbage.json", "\xef\xbb\xbf garbage"},
      {"trailing_data.json", with_results("[]") + " {}"},
      {"array_root.json", "[1, 2, 3]"},
      {"string_root.json", "\"results\""},
      {"null_root.json", "null"},
      {"no_context.json", R"({"results": []})"},
      {"no_results.json", R"({"context": {"schema_version": 1, "gpulab_version": "0.1.0",
                             "backend": "sim", "date": "2026-11-22T10:15:00Z"}})"},
      {"context_is_array.json", R"({"context": [], "results": []})"},
      {"schema_2.json", R"({"context": {"schema_version": 2, "gpulab_version": "0.1.0",
                          "backend": "sim", "date": "d"}, "results": []})"},
      {"schema_negative.json", R"({"context": {"schema_version": -1}, "results": []})"},
      {"schema_string.json", R"({"context": {"schema_version": "1"}, "results": []})"},
      {"empty_backend.json", R"({"context": {"schema_version": 1, "gpulab_version": "0.1.0",
                               "backend": "", "date": "d"}, "results": []})"},
      {"results_is_object.json", with_results("{}")},
      {"result_is_number.json", with_results("[42]")},
      {"result_without_name.json", with_results(R"([{"metrics": []}])")},
      {"empty_result_name.json", with_results(R"([{"name": "", "metrics": []}])")},
      {"params_not_strings.json",
       with_results(R"([{"name": "a", "params": {"n": 1024}, "metrics": []}])")},
      {"metrics_is_string.json", with_metrics(R"("fast")")},
      {"metric_without_unit.json",
       with_metrics(R"([{"name": "time", "provenance": "measured", "value": 1}])")},
      {"metric_value_string.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "measured", "value": "1"}])")},
      {"metric_value_missing.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "measured"}])")},
      {"metric_bad_provenance.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "guessed", "value": 1}])")},
      {"modeled_without_spec.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "modeled", "value": 1}])")},
      {"unavailable_with_value.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "unavailable", "value": 1,
                         "reason": "r"}])")},
      {"unavailable_without_reason.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "unavailable"}])")},
      {"nan.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "measured", "value": NaN}])")},
      {"infinity.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "measured", "value": Infinity}])")},
      {"overflow.json",
       with_metrics(R"([{"name": "time_ms", "provenance": "measured", "value": 1e400}])")},
      {"duplicate_keys.json",
       with_metrics(
           R"([{"name": "time_ms", "name": "x_ms", "provenance": "measured", "value": 1}])")},
      {"negative_sample.json",
       with_results(R"([{"name": "a", "metrics": [], "samples_ms": [1, -2]}])")},
      {"samples_not_array.json",
       with_results(R"([{"name": "a", "metrics": [], "samples_ms": 3}])")},
      {"deep_nesting.json", std::string(100000, '[') + std::string(100000, ']')},
      {"deep_objects.json", with_results("[" + std::string(50, '[') + std::string(50, ']') + "]")},
  };
  std::vector<fs::path> paths;
  for (const auto& [name, text] : texts) {
    paths.push_back(dir / name);
    write(paths.back(), text);
  }
  // Larger than the loader's 64 MB limit: a sparse file, so the test writes almost nothing.
  paths.push_back(dir / "huge.json");
  write(paths.back(), "{");
  fs::resize_file(paths.back(), 65ULL * 1000 * 1000);
  // Not regular files, or no file at all.
  paths.push_back(dir / "missing.json");
  paths.push_back(dir / "a_directory.json");
  fs::create_directory(paths.back());
  paths.push_back(dir / "fifo.json");  // opening it for reading would block forever
  EXPECT_EQ(mkfifo(paths.back().c_str(), 0600), 0);
  paths.push_back(dir / "loop.json");  // a symlink to itself
  fs::create_symlink("loop.json", paths.back());
  paths.push_back(dir / "socket.json");
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, paths.back().c_str(), sizeof(address.sun_path) - 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  close(fd);
  return paths;
}

TEST(ViewerModelHostile, FiftyHostileFilesGiveFiftyClearErrorsAndNoCrash) {
  const TempDir dir;
  const std::vector<fs::path> files = make_hostile_files(dir.path());
  ASSERT_EQ(files.size(), 50U);
  Model model(cuda_without_driver(), "");
  for (const fs::path& file : files) {
    const LoadedResults* loaded = nullptr;
    ASSERT_NO_THROW(loaded = &model.load_results(file)) << file;
    EXPECT_FALSE(loaded->ok()) << file;
    // Clear: one line, naming the file, short enough for a panel.
    EXPECT_FALSE(loaded->error.empty()) << file;
    EXPECT_EQ(loaded->error.find('\n'), std::string::npos) << loaded->error;
    EXPECT_TRUE(contains(loaded->error, file.filename().string())) << loaded->error;
    EXPECT_LE(loaded->error.size(), 410U) << loaded->error;
  }
  ASSERT_EQ(model.results().size(), 50U);
  // None of them becomes something a panel draws, and the model still loads a good file after.
  EXPECT_TRUE(model.panel_data().sources.empty());
  EXPECT_TRUE(model.load_results(kData + "/results_valid.json").ok());
  EXPECT_EQ(model.panel_data().sources.size(), 1U);
}

TEST(ViewerModelResults, EveryPanelSaysWhatClockTheTimesCameFrom) {
  // Schema 1 sim file: CPU time of the simulation. Schema 2 with the modeled clock: modeled.
  const TempDir dir;
  const fs::path modeled = dir.path() / "modeled.json";
  write(modeled, R"({"context": {"schema_version": 2, "gpulab_version": "0.1.0", "backend": "sim",
        "spec": "H100 SXM", "clock": "modeled", "date": "2026-11-22T10:15:00Z"}, "results": []})");
  Model model(cuda_without_driver(), "");
  ASSERT_TRUE(model.load_results(kData + "/lab02_sim.json").ok());
  ASSERT_TRUE(model.load_results(modeled).ok());
  const auto& sources = model.panel_data().sources;
  ASSERT_EQ(sources.size(), 2U);
  EXPECT_TRUE(sources[0].source.cpu_times);
  EXPECT_EQ(sources[0].benchmark.measured_label, "measured (CPU simulation)");
  ASSERT_FALSE(sources[0].components.empty());
  EXPECT_EQ(sources[0].components[0].measured_label, "measured (CPU simulation)");
  EXPECT_FALSE(sources[1].source.cpu_times);
  EXPECT_EQ(sources[1].benchmark.measured_label, "modeled clock (H100 SXM)");
}

// --- live runs through the model -------------------------------------------------------------

TEST(ViewerModelLive, ARunStreamsIntoTheLiveSourceAndReplacesItsEarlierResults) {
  GPULAB_REQUIRE_DEVICE();
  Model model(cuda_without_driver(), "");
  EXPECT_TRUE(model.panel_data().sources.empty());
  model.selections().experiment = Experiment::bandwidth;
  model.selections().options.quick = true;
  std::string error;
  ASSERT_TRUE(model.start_run(error)) << error;
  EXPECT_FALSE(model.start_run(error));  // one run at a time
  EXPECT_TRUE(contains(error, "in progress")) << error;
  model.wait_for_run();
  ASSERT_EQ(model.run_status().state, RunState::finished) << model.run_status().error;
  const std::size_t sizes = model.live().results.size();
  ASSERT_GE(sizes, 3U);
  EXPECT_EQ(model.live().context.backend, backend_name());
  EXPECT_EQ(model.live().context.spec, model.selected_spec().name);
  ASSERT_EQ(model.panel_data().sources.size(), 1U);
  EXPECT_EQ(model.panel_data().sources[0].source.file, &model.live());
  ASSERT_TRUE(model.live_entry().ok());  // the Results panel lists it like a file
  EXPECT_EQ(model.live_entry().path, "live run (" + std::string(backend_name()) + ")");
  EXPECT_EQ(model.live_entry().metrics.size(), metric_rows(model.live()).size());
  EXPECT_EQ(model.panel_data().sources[0].benchmark.points.size(), sizes);

  // Running it again replaces the sizes rather than adding a second copy of each.
  ASSERT_TRUE(model.start_run(error)) << error;
  model.wait_for_run();
  EXPECT_EQ(model.live().results.size(), sizes);
}

TEST(ViewerModelLive, QueuedRunsStartOneAfterAnother) {
  GPULAB_REQUIRE_DEVICE();
  Model model(cuda_without_driver(), "");
  model.selections().options.quick = true;
  EXPECT_FALSE(model.runs_pending());
  model.queue_runs({Experiment::bandwidth, Experiment::sweep});
  EXPECT_TRUE(model.runs_pending());
  model.wait_for_run();
  EXPECT_FALSE(model.runs_pending());
  EXPECT_TRUE(model.run_errors().empty());
  const auto count = [&](const std::string& name) {
    return std::count_if(model.live().results.begin(), model.live().results.end(),
                         [&](const Result& r) { return r.name == name; });
  };
  EXPECT_GE(count("vector_add"), 3);
  EXPECT_GE(count("block_size_sweep"), 6);
  ASSERT_EQ(model.panel_data().sources.size(), 1U);
  EXPECT_EQ(model.panel_data().sources[0].sweeps.size(), 1U);
}

TEST(ViewerModelLive, CancelEmptiesTheQueue) {
  GPULAB_REQUIRE_DEVICE();
  Model model(cuda_without_driver(), "");
  model.selections().options.quick = true;
  model.queue_runs({Experiment::sweep, Experiment::bandwidth});
  model.cancel_run();
  model.wait_for_run();
  EXPECT_FALSE(model.runs_pending());
  EXPECT_EQ(model.run_status().state, RunState::cancelled);
  EXPECT_TRUE(std::none_of(model.live().results.begin(), model.live().results.end(),
                           [](const Result& r) { return r.name == "vector_add"; }));
}

TEST(ViewerModelLive, NoLiveEntryBeforeTheFirstResult) {
  const Model model(cuda_without_driver(), "");
  EXPECT_FALSE(model.live_entry().ok());
  EXPECT_TRUE(model.live().results.empty());
}

TEST(ViewerModelLive, InvalidOptionsAreAnErrorNotARun) {
  Model model(cuda_without_driver(), "");
  model.selections().experiment = Experiment::sweep;
  model.selections().options.sweep_kernel = "no_such_kernel";
  std::string error;
  EXPECT_FALSE(model.start_run(error));
  EXPECT_TRUE(contains(error, "no_such_kernel")) << error;
  EXPECT_EQ(model.run_status().state, RunState::idle);
}

TEST(ViewerModelLive, SavedLiveResultsLoadBackAsAFile) {
  GPULAB_REQUIRE_DEVICE();
  const TempDir dir;
  Model model(cuda_without_driver(), "");
  std::string error;
  EXPECT_FALSE(model.save_live(dir.path() / "empty.json", error));
  EXPECT_TRUE(contains(error, "nothing to save")) << error;
  model.selections().options.quick = true;
  ASSERT_TRUE(model.start_run(error)) << error;
  model.wait_for_run();
  ASSERT_TRUE(model.save_live(dir.path() / "live.json", error)) << error;
  const LoadedResults& loaded = model.load_results(dir.path() / "live.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  EXPECT_EQ(*loaded.file, model.live());
  EXPECT_FALSE(model.save_live(dir.path() / "no" / "such" / "dir.json", error));
  EXPECT_FALSE(error.empty());
}

TEST(ViewerModelLive, SwitchingSpecOrPrecisionRebuildsTheViews) {
  Model model(cuda_without_driver(), "");
  model.load_results(kData + "/results_valid.json");
  ASSERT_TRUE(model.select_spec("a100"));
  EXPECT_EQ(model.explorer().spec().key, model.selected_spec().key);
  model.set_roofline_precision(Precision::fp16);
  EXPECT_EQ(model.roofline_precision(), Precision::fp16);
  ASSERT_TRUE(model.panel_data().roofline.roofline.has_value());
  EXPECT_EQ(model.panel_data().roofline.roofline->precision, Precision::fp16);
  EXPECT_EQ(model.panel_data().roofline.roofline->spec_name, model.selected_spec().name);
}

}  // namespace
}  // namespace gpulab::viewer
