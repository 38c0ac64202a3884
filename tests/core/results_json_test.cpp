// Tests of the results' JSON form (results_json.cpp): validation on save, round trips, the
// forward-compatible reader, atomic saving, error messages, and a corpus of hostile documents that
// must each end as one clear ResultsError line (never a crash, never another exception type).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <typeinfo>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/core/results.hpp"
#include "results_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::LoadLimits;
using gpulab::Metric;
using gpulab::Provenance;
using gpulab::Result;
using gpulab::ResultsContext;
using gpulab::ResultsError;
using gpulab::ResultsFile;
using gpulab::testing::measured;
using gpulab::testing::modeled;
using gpulab::testing::sample_file;
using gpulab::testing::unavailable;
using nlohmann::json;

fs::path data_path(const std::string& name) {
  return fs::path(GPULAB_TEST_DATA_DIR) / name;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::string text(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

using gpulab::testing::TempDir;

// The message of the ResultsError `action` throws; fails the test on no throw or another type.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ResultsError& error) {
    return error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "expected ResultsError, got " << typeid(error).name() << ": " << error.what();
    return {};
  } catch (...) {
    ADD_FAILURE() << "expected ResultsError, got a non-standard exception";
    return {};
  }
  ADD_FAILURE() << "expected ResultsError, nothing was thrown";
  return {};
}

std::string parse_error_of(const std::string& text, const LoadLimits& limits = {}) {
  return error_of([&] { (void)gpulab::parse_results(text, "doc.json", limits); });
}

std::string semantic_error_of(const json& document) {
  return parse_error_of(document.dump(2));
}

json valid_document() {
  return json::parse(read_text(data_path("results_valid.json")));
}

bool single_line(const std::string& text) {
  return text.find('\n') == std::string::npos && text.find('\r') == std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Writing and reading back
// ---------------------------------------------------------------------------------------------

TEST(ResultsJson, WritesTheDocumentedLayout) {
  const json document = gpulab::to_json(sample_file());
  EXPECT_EQ(document["context"]["schema_version"], 3);
  EXPECT_EQ(document["context"]["backend"], "sim");
  EXPECT_EQ(document["context"]["clock"], "modeled");
  EXPECT_EQ(document["context"]["git_revision"], "abc123def456");
  EXPECT_EQ(document["context"]["date"], "2026-11-22T10:15:00Z");
  const json& first = document["results"][0];
  EXPECT_EQ(first["name"], "vector_add");
  EXPECT_EQ(first["params"]["n"], "1048576");
  EXPECT_EQ(first["metrics"][0],
            (json{{"name", "time_ms"}, {"provenance", "measured"}, {"value", 0.812}}));
  EXPECT_EQ(first["metrics"][2], (json{{"name", "time_ms"},
                                       {"provenance", "modeled"},
                                       {"spec", "H100 SXM"},
                                       {"value", 0.00376}}));
  EXPECT_EQ(first["metrics"][3], (json{{"name", "sm_efficiency_percent"},
                                       {"provenance", "unavailable"},
                                       {"reason", "needs CUPTI"}}));
}

TEST(ResultsJson, ASchemaOneFileReadsItsClockFromTheBackend) {
  // results_valid.json is schema 1 (no clock): on sim its times were CPU time of the simulation.
  json document = valid_document();
  ASSERT_EQ(document["context"]["schema_version"], 1);
  ResultsFile file = gpulab::results_from_json(document, "doc.json");
  EXPECT_EQ(file.context.clock, gpulab::TimingClock::host);
  EXPECT_EQ(file.context.schema_version, gpulab::kResultsSchemaVersion);  // read into schema 3
  document["context"]["backend"] = "cuda";
  file = gpulab::results_from_json(document, "doc.json");
  EXPECT_EQ(file.context.clock, gpulab::TimingClock::gpu);
}

TEST(ResultsJson, ASchemaTwoFileNeedsAKnownClock) {
  json document = valid_document();
  document["context"]["schema_version"] = 2;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.clock: expected a string, found nothing");
  document["context"]["clock"] = "wall";
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.clock: expected \"gpu\", \"modeled\" or \"host\", found "
            "\"wall\"");
  document["context"]["clock"] = "modeled";
  EXPECT_EQ(gpulab::results_from_json(document, "doc.json").context.clock,
            gpulab::TimingClock::modeled);
}

TEST(ResultsJson, CountedMetricsRoundTripAndNeedAValue) {
  ResultsFile file = sample_file();
  file.results[0].metrics.push_back(
      {"dram__bytes_read.sum_bytes", 4096.0, Provenance::counted, "", ""});
  const json document = gpulab::to_json(file);
  EXPECT_EQ(document["results"][0]["metrics"].back()["provenance"], "counted");
  EXPECT_EQ(gpulab::parse_results(document.dump(), "counted"), file);
  EXPECT_NE(gpulab::render_report(file).find("dram__bytes_read.sum (bytes) counted (sim)"),
            std::string::npos);
  file.results[0].metrics.back().value.reset();
  EXPECT_EQ(error_of([&] { (void)gpulab::to_json(file); }),
            "results to write: results[0].metrics[4].value: expected a finite number for a "
            "counted metric, found nothing");
}

TEST(ResultsJson, ATimeSaysTheClockItWasReadFrom) {
  // The modeled clock's figures carry their spec; the GPU's and the host's are measured.
  const Metric modeled = Metric::timed("time_ms", 0.02, gpulab::TimingClock::modeled, "H100 SXM");
  EXPECT_EQ(modeled, (Metric{"time_ms", 0.02, Provenance::modeled_clock, "H100 SXM", ""}));
  EXPECT_EQ(Metric::timed("time_ms", 0.02, gpulab::TimingClock::gpu, "H100 SXM"),
            Metric::measured("time_ms", 0.02));
  EXPECT_EQ(Metric::timed("time_ms", 0.02, gpulab::TimingClock::host, "H100 SXM"),
            Metric::measured("time_ms", 0.02));

  ResultsFile file = sample_file();
  file.results[0].metrics.push_back(modeled);
  const json document = gpulab::to_json(file);
  EXPECT_EQ(document["results"][0]["metrics"].back(), (json{{"name", "time_ms"},
                                                            {"provenance", "modeled_clock"},
                                                            {"spec", "H100 SXM"},
                                                            {"value", 0.02}}));
  EXPECT_EQ(gpulab::parse_results(document.dump(), "clock"), file);
  // Its own column, apart from the roofline's time modeled for the same spec.
  const std::string report = gpulab::render_report(file);
  EXPECT_NE(report.find("time (ms) modeled clock (H100 SXM)"), std::string::npos) << report;
  EXPECT_NE(report.find("time (ms) modeled (H100 SXM)"), std::string::npos) << report;

  file.results[0].metrics.back().spec.clear();
  EXPECT_EQ(error_of([&] { (void)gpulab::to_json(file); }),
            "results to write: results[0].metrics[4].spec: expected the spec a modeled metric was "
            "modeled for (\"H100 SXM\"), found an empty string");
  json unknown = document;
  unknown["results"][0]["metrics"][4]["provenance"] = "simulated";
  EXPECT_NE(semantic_error_of(unknown).find("\"counted\" or \"modeled_clock\", found "
                                            "\"simulated\""),
            std::string::npos);
}

TEST(ResultsJson, TimingLabelsSayWhatTheClockWas) {
  EXPECT_EQ(gpulab::timing_label(gpulab::TimingClock::gpu, "H100 SXM"), "measured");
  EXPECT_EQ(gpulab::timing_label(gpulab::TimingClock::modeled, "H100 SXM"),
            "modeled clock (H100 SXM)");
  EXPECT_EQ(gpulab::timing_label(gpulab::TimingClock::host, "H100 SXM"),
            "measured (CPU simulation)");
  EXPECT_EQ(gpulab::to_string(gpulab::TimingClock::modeled), "modeled");
}

TEST(ResultsJson, LeavesOutAnUnknownRevision) {
  ResultsFile file = sample_file();
  file.context.git_revision.clear();
  EXPECT_FALSE(gpulab::to_json(file)["context"].contains("git_revision"));
}

TEST(ResultsJson, TextRoundTripKeepsEveryValue) {
  ResultsFile file = sample_file();
  // Values at the edges of double: each must come back bit for bit.
  file.results[2].metrics.push_back(measured("tiny_ratio", 5e-324));
  file.results[2].metrics.push_back(measured("huge_bytes", std::numeric_limits<double>::max()));
  file.results[2].metrics.push_back(measured("zero_ms", -0.0));
  file.results[2].metrics.push_back(measured("third_ratio", 1.0 / 3.0));
  file.results[2].params["note"] = "\xc2\xb5s, \"quoted\", tab\t, nul \\0, \xe2\x9c\x93";
  const std::string text = gpulab::to_json(file).dump(2);
  const ResultsFile back = gpulab::parse_results(text, "round-trip");
  EXPECT_EQ(back, file);
  EXPECT_TRUE(std::signbit(*back.results[2].metrics[4].value));
}

TEST(ResultsJson, SamplesRoundTripAndAreLeftOutWhenEmpty) {
  ResultsFile file = sample_file();
  file.results[0].samples_ms = {0.81, 0.8125, 0.0, 1e-9};
  const json document = gpulab::to_json(file);
  EXPECT_FALSE(document["results"][1].contains("samples_ms"));
  ASSERT_TRUE(document["results"][0]["samples_ms"].is_array());
  EXPECT_EQ(gpulab::parse_results(document.dump(), "samples"), file);
}

TEST(ResultsValidation, SamplesMustBeFiniteNonNegativeTimes) {
  json document = valid_document();
  document["results"][0]["samples_ms"] = json::array({0.5, -1.0});
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[0].samples_ms[1]: expected a finite time >= 0, found -1");

  document = valid_document();
  document["results"][0]["samples_ms"] = json::array({0.5, "slow"});
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[0].samples_ms[1]: expected a time in milliseconds, found string "
            "\"slow\"");

  document = valid_document();
  document["results"][0]["samples_ms"] = 0.5;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[0].samples_ms: expected an array of times, found number 0.5");

  ResultsFile file = sample_file();
  file.results[1].samples_ms.assign(gpulab::kMaxSamples + 1, 1.0);
  EXPECT_EQ(error_of([&] { (void)gpulab::to_json(file); }),
            "results to write: results[1].samples_ms: expected at most 1000000 samples, found "
            "1000001");
  file.results[1].samples_ms = {std::numeric_limits<double>::infinity()};
  EXPECT_EQ(error_of([&] { (void)gpulab::to_json(file); }),
            "results to write: results[1].samples_ms[0]: expected a finite time >= 0, found inf");
}

TEST(ResultsJson, DomRoundTripKeepsEveryValue) {
  // to_json() builds signed integers, parsed text has unsigned ones: both must read back.
  EXPECT_EQ(gpulab::results_from_json(gpulab::to_json(sample_file()), "dom"), sample_file());
}

TEST(ResultsJson, SaveThenLoadGivesEqualData) {
  const TempDir dir;
  const fs::path path = dir.path() / "run.json";
  const ResultsFile file = sample_file();
  gpulab::save_results(path, file);
  EXPECT_EQ(gpulab::load_results(path), file);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.json"});  // no temporary left behind
  EXPECT_EQ(read_text(path).back(), '\n');
  const auto permissions = fs::status(path).permissions();
  EXPECT_NE(permissions & fs::perms::others_read, fs::perms::none);
}

TEST(ResultsJson, SaveReplacesAnExistingFile) {
  const TempDir dir;
  const fs::path path = dir.path() / "run.json";
  write_text(path, "old contents");
  gpulab::save_results(path, sample_file());
  EXPECT_EQ(gpulab::load_results(path), sample_file());
}

TEST(ResultsJson, LoadsTheExampleFile) {
  const ResultsFile file = gpulab::load_results(data_path("results_valid.json"));
  EXPECT_EQ(file.context.gpulab_version, "0.1.0");
  EXPECT_EQ(file.context.git_revision, "4c0f79a");
  EXPECT_EQ(file.context.backend, "sim");
  EXPECT_EQ(file.context.spec, "H100 SXM");
  ASSERT_EQ(file.results.size(), 3u);
  EXPECT_EQ(file.results[1].params.at("n"), "16777216");
  ASSERT_EQ(file.results[0].metrics.size(), 4u);
  EXPECT_EQ(file.results[0].metrics[2], modeled("time_ms", 0.00376, "H100 SXM"));
  EXPECT_EQ(file.results[0].metrics[3],
            unavailable("sm_efficiency_percent", "needs CUPTI (cuda backend only)"));
  EXPECT_EQ(file.results[2].metrics[1], measured("bytes", 33554432.0));
}

TEST(ResultsJson, ReaderIgnoresUnknownFieldsAtEveryLevel) {
  const ResultsFile file = gpulab::load_results(data_path("results_unknown_fields.json"));
  EXPECT_EQ(file.context.gpulab_version, "0.9.0");
  EXPECT_EQ(file.context.backend, "cuda");
  EXPECT_TRUE(file.context.git_revision.empty());
  ASSERT_EQ(file.results.size(), 1u);
  EXPECT_EQ(file.results[0].params.size(), 4u);
  ASSERT_EQ(file.results[0].metrics.size(), 3u);
  // spec and reason only belong to modeled and unavailable metrics; elsewhere they are ignored.
  EXPECT_EQ(file.results[0].metrics[0], measured("time_ms", 0.25));
  EXPECT_EQ(file.results[0].metrics[1], measured("throughput_tflop_s", 549.8));
  EXPECT_EQ(file.results[0].metrics[2], unavailable("l2_hit_rate_percent", "CUPTI not enabled"));
}

TEST(ResultsJson, AcceptsAByteOrderMarkAndIntegerValues) {
  std::string text = "\xEF\xBB\xBF" + read_text(data_path("results_valid.json"));
  const ResultsFile file = gpulab::parse_results(text, "bom.json");
  EXPECT_EQ(file.results[2].metrics[1].value, 33554432.0);  // written as an integer
  // An integer too large for int64 (nlohmann reads it as a double) is still a finite value.
  json document = valid_document();
  document["results"][0]["metrics"][0]["value"] = json::parse("100000000000000000000000");
  EXPECT_EQ(gpulab::results_from_json(document, "big").results[0].metrics[0].value, 1e23);
}

// ---------------------------------------------------------------------------------------------
// Validation on save
// ---------------------------------------------------------------------------------------------

struct InvalidCase {
  const char* what;
  std::function<void(ResultsFile&)> spoil;
  const char* expected;  // in the message
};

TEST(ResultsValidation, RejectsInvalidDataOnSaveAndKeepsTheOldFile) {
  const std::vector<InvalidCase> cases = {
      {"metric without unit", [](ResultsFile& f) { f.results[0].metrics[1].name = "bandwidth"; },
       "results[0].metrics[1].name: expected a name ending in a unit suffix"},
      {"NaN value",
       [](ResultsFile& f) {
         f.results[1].metrics[0].value = std::numeric_limits<double>::quiet_NaN();
       },
       "results[1].metrics[0].value: expected a finite number, found nan"},
      {"infinite value",
       [](ResultsFile& f) {
         f.results[1].metrics[2].value = -std::numeric_limits<double>::infinity();
       },
       "results[1].metrics[2].value: expected a finite number, found -inf"},
      {"measured without value", [](ResultsFile& f) { f.results[2].metrics[0].value.reset(); },
       "results[2].metrics[0].value: expected a finite number for a measured metric"},
      {"unavailable without reason", [](ResultsFile& f) { f.results[0].metrics[3].reason = ""; },
       "results[0].metrics[3].reason: expected the reason"},
      {"unavailable with a value", [](ResultsFile& f) { f.results[0].metrics[3].value = 1.0; },
       "results[0].metrics[3].value: expected no value for an unavailable metric, found 1"},
      {"modeled without spec", [](ResultsFile& f) { f.results[0].metrics[2].spec.clear(); },
       "results[0].metrics[2].spec: expected the spec"},
      {"bad provenance",
       [](ResultsFile& f) { f.results[0].metrics[0].provenance = static_cast<Provenance>(7); },
       "results[0].metrics[0].provenance"},
      {"empty result name", [](ResultsFile& f) { f.results[2].name.clear(); },
       "results[2].name: expected a result name, found an empty string"},
      {"no backend", [](ResultsFile& f) { f.context.backend.clear(); }, "context.backend"},
      {"no version", [](ResultsFile& f) { f.context.gpulab_version.clear(); },
       "context.gpulab_version"},
      {"no date", [](ResultsFile& f) { f.context.date.clear(); }, "context.date"},
      {"other schema", [](ResultsFile& f) { f.context.schema_version = 4; },
       "written with results schema 4; this gpulab reads schemas 1 to 3"},
      {"gpu clock on sim",
       [](ResultsFile& f) {
         f.context.backend = "sim";
         f.context.clock = gpulab::TimingClock::gpu;
       },
       "context.clock: \"gpu\" on the sim backend, which has no GPU clock"},
      {"modeled clock on cuda",
       [](ResultsFile& f) {
         f.context.backend = "cuda";
         f.context.clock = gpulab::TimingClock::modeled;
       },
       "context.clock: \"modeled\" on the cuda backend: only sim has it"},
      {"modeled clock without spec",
       [](ResultsFile& f) {
         f.context.backend = "sim";
         f.context.clock = gpulab::TimingClock::modeled;
         f.context.spec.clear();
       },
       "context.clock: \"modeled\" without a spec"},
      {"invalid UTF-8", [](ResultsFile& f) { f.results[0].params["n"] = "10\xff"; },
       "results[0].params.n: expected valid UTF-8 text, found \"10\\xff\""},
  };
  const TempDir dir;
  const fs::path path = dir.path() / "kept.json";
  gpulab::save_results(path, sample_file());
  const std::string before = read_text(path);
  for (const InvalidCase& c : cases) {
    SCOPED_TRACE(c.what);
    ResultsFile file = sample_file();
    c.spoil(file);
    const std::string via_json = error_of([&] { (void)gpulab::to_json(file); });
    EXPECT_NE(via_json.find(c.expected), std::string::npos) << via_json;
    const std::string via_save = error_of([&] { gpulab::save_results(path, file); });
    EXPECT_NE(via_save.find(c.expected), std::string::npos) << via_save;
    EXPECT_EQ(via_save.rfind(path.string() + ": ", 0), 0u) << via_save;
    EXPECT_EQ(read_text(path), before);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"kept.json"});
  }
}

TEST(ResultsValidation, ReaderRejectsNonFiniteValuesInADom) {
  json document = valid_document();
  document["results"][2]["metrics"][0]["value"] = std::numeric_limits<double>::quiet_NaN();
  const std::string message = error_of([&] { (void)gpulab::results_from_json(document, "dom"); });
  EXPECT_EQ(message, "dom: results[2].metrics[0].value: expected a finite number, found nan");
}

TEST(ResultsSave, FailureThrowsAndLeavesNoFile) {
  const TempDir dir;
  const fs::path missing_dir = dir.path() / "no" / "such" / "dir" / "run.json";
  const std::string message = error_of([&] { gpulab::save_results(missing_dir, sample_file()); });
  EXPECT_NE(message.find("cannot create a temporary file"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(missing_dir));

  // The target is a directory: rename fails; the temporary file must be gone.
  const fs::path directory = dir.path() / "taken";
  fs::create_directory(directory);
  const std::string taken = error_of([&] { gpulab::save_results(directory, sample_file()); });
  EXPECT_NE(taken.find("cannot replace the file"), std::string::npos) << taken;
  EXPECT_TRUE(fs::is_directory(directory));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

// ---------------------------------------------------------------------------------------------
// Error messages: location and expected versus found
// ---------------------------------------------------------------------------------------------

TEST(ResultsErrors, SyntaxErrorsNameLineAndColumn) {
  const std::string text = "{\n  \"context\": {\n    \"schema_version\": NaN\n  }\n}\n";
  EXPECT_EQ(parse_error_of(text),
            "doc.json:3:23: syntax error while parsing value - invalid literal; found 'NaN'");
  EXPECT_EQ(parse_error_of("{\"a\": [1, 2,]}"),
            "doc.json:1:13: syntax error while parsing value - unexpected ']'; expected '[', "
            "'{', or a literal");
  const std::string trailing = parse_error_of(read_text(data_path("results_valid.json")) + "{}");
  EXPECT_NE(trailing.find("doc.json:44:1: "), std::string::npos) << trailing;
  EXPECT_NE(trailing.find("expected end of input"), std::string::npos) << trailing;
}

TEST(ResultsErrors, SyntaxErrorsShowTheOffendingWord) {
  const std::string valid = read_text(data_path("results_valid.json"));
  EXPECT_EQ(parse_error_of(valid + "garbage"),
            "doc.json:44:1: syntax error while parsing value - invalid literal; found 'garbage'; "
            "expected end of input");
  EXPECT_EQ(parse_error_of(R"({"x": [1, -Infinity]})"),
            "doc.json:1:12: syntax error while parsing value - invalid number; expected digit "
            "after '-'; found '-Infinity'");
  EXPECT_EQ(parse_error_of(std::string("{\"context\": \"a") + '\0' + "b\"}"),
            "doc.json:1:15: syntax error while parsing value - invalid string: control character "
            "U+0000 (NUL) must be escaped to \\u0000; found '\"a<U+0000>'");
  EXPECT_EQ(parse_error_of("{\"context\": \"caf\xc3\x28\"}"),
            "doc.json:1:18: syntax error while parsing value - invalid string: ill-formed UTF-8 "
            "byte; found '\"caf\\xc3('");
  // A NUL in value position is where nlohmann would see the end of the input.
  EXPECT_EQ(parse_error_of(std::string("[1, ") + '\0' + "]"),
            "doc.json:1:5: expected JSON text, found a NUL byte");
}

TEST(ResultsErrors, ContentErrorsNameTheJsonPath) {
  json document = valid_document();
  document["results"][2]["metrics"][0]["value"] = "fast";
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[2].metrics[0].value: expected a number, found string \"fast\"");

  document = valid_document();
  document["results"][1]["params"]["block size"] = 256;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[1].params[\"block size\"]: expected a string, found integer 256");

  document = valid_document();
  document["results"][0]["metrics"][1].erase("provenance");
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: results[0].metrics[1].provenance: expected a string, found nothing");

  document = valid_document();
  document["results"] = json::object();
  EXPECT_EQ(semantic_error_of(document), "doc.json: results: expected an array, found an object");

  EXPECT_EQ(parse_error_of("[1, 2]"),
            "doc.json: expected a JSON object with \"context\" and \"results\", found an array of "
            "2 element(s)");
}

TEST(ResultsErrors, SchemaVersionMismatchIsExplained) {
  json document = valid_document();
  document["context"]["schema_version"] = 4;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.schema_version: written with results schema 4; this gpulab reads "
            "schemas 1 to 3");
  // The schema version is checked before anything else in a file: a schema 4 file may use other
  // field names entirely.
  EXPECT_EQ(parse_error_of(R"({"context": {"schema_version": 7, "writer": {}}, "runs": []})"),
            "doc.json: context.schema_version: written with results schema 7; this gpulab reads "
            "schemas 1 to 3");
  document["context"]["schema_version"] = 1.0;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.schema_version: expected the results schema version (an "
            "integer), found number 1.0");
  document["context"]["schema_version"] = -1;
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.schema_version: expected a positive schema version, found "
            "integer -1");
  document["context"].erase("schema_version");
  EXPECT_EQ(semantic_error_of(document),
            "doc.json: context.schema_version: expected the results schema version (an "
            "integer), found nothing");
}

TEST(ResultsErrors, NumbersThatDoNotFitADoubleAreRejected) {
  const auto with_value = [](const std::string& value) {
    return R"({"context": {"schema_version": 1}, "x": [)" + value + "]}";
  };
  EXPECT_EQ(parse_error_of(with_value("1e400")),
            "doc.json:1:42: number too large for a double, found '1e400'");
  EXPECT_EQ(parse_error_of(with_value("-1e400")),
            "doc.json:1:42: number too large for a double, found '-1e400'");
  EXPECT_EQ(parse_error_of(with_value("1e-400")),
            "doc.json:1:42: number too small for a double (it would become 0), found '1e-400'");
  EXPECT_EQ(parse_error_of(with_value("0.000e-400")).find("too small"), std::string::npos)
      << "a zero written with an exponent is still zero";
}

TEST(ResultsErrors, NulBytesDuplicateKeysAndDepthHaveLocations) {
  std::string with_nul = read_text(data_path("results_valid.json"));
  with_nul.insert(with_nul.size() - 1, std::string("\0 trailing", 10));
  EXPECT_EQ(parse_error_of(with_nul), "doc.json:43:2: expected JSON text, found a NUL byte");

  EXPECT_EQ(parse_error_of("{\n\"context\": 1,\n  \"context\": 2}"),
            "doc.json:3:11: duplicate key \"context\" (each key may appear once)");

  EXPECT_EQ(parse_error_of("[[[[[[1]]]]]]", LoadLimits{1000, 5}),
            "doc.json:1:6: nesting deeper than the limit of 5 levels of arrays and objects");
  EXPECT_NO_THROW((void)gpulab::parse_results(read_text(data_path("results_valid.json")), "d",
                                              LoadLimits{1000000, 5}));
}

TEST(ResultsErrors, MessagesEscapeControlCharactersAndStayShort) {
  json document = valid_document();
  document["results"][0]["metrics"][0]["name"] = "time\n\x1b[31m" + std::string(100000, 'x');
  const std::string message = semantic_error_of(document);
  EXPECT_TRUE(single_line(message)) << message;
  EXPECT_NE(message.find("found \"time\\n\\x1b[31mxxx"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u);

  // Invisible and reordering characters (byte order mark, right-to-left override) are escaped.
  document = valid_document();
  document["results"][0]["metrics"][0]["name"] = "time\xef\xbb\xbf\xe2\x80\xae_sm";
  EXPECT_NE(semantic_error_of(document).find("found \"time\\xef\\xbb\\xbf\\xe2\\x80\\xae_sm\""),
            std::string::npos)
      << semantic_error_of(document);
}

TEST(ResultsLoad, FileErrorsNameThePath) {
  const TempDir dir;
  const fs::path missing = dir.path() / "missing.json";
  EXPECT_EQ(error_of([&] { (void)gpulab::load_results(missing); }),
            missing.string() + ": cannot read the file: it does not exist");
  EXPECT_EQ(error_of([&] { (void)gpulab::load_results(dir.path()); }),
            dir.path().string() + ": expected a results JSON file, found a directory");
  EXPECT_EQ(error_of([&] { (void)gpulab::load_results("/dev/null"); }),
            "/dev/null: expected a results JSON file, found a special file");

  const fs::path big = dir.path() / "big.json";
  write_text(big, read_text(data_path("results_valid.json")));
  const std::string message = error_of([&] {
    (void)gpulab::load_results(big, LoadLimits{100, 32});
  });
  EXPECT_EQ(message.rfind(big.string() + ": expected at most 100 bytes, found ", 0), 0u) << message;
}

TEST(ResultsLoad, AsJsonKeepsWhatTheResultsReaderIgnoresAndChecksTheFileTheSameWay) {
  const nlohmann::json document =
      gpulab::load_results_json(data_path("results_unknown_fields.json"));
  ASSERT_TRUE(document.is_object());
  EXPECT_TRUE(document.contains("context"));
  EXPECT_EQ(gpulab::results_from_json(document, "x"),
            gpulab::load_results(data_path("results_unknown_fields.json")));
  const TempDir dir;
  EXPECT_EQ(error_of([&] { (void)gpulab::load_results_json(dir.path()); }),
            dir.path().string() + ": expected a results JSON file, found a directory");
  const fs::path empty = dir.path() / "empty.json";
  write_text(empty, " \n");
  EXPECT_NE(error_of([&] { (void)gpulab::load_results_json(empty); }).find("empty document"),
            std::string::npos);
  const fs::path broken = dir.path() / "broken.json";
  write_text(broken, "{\"context\": [1,");
  EXPECT_EQ(error_of([&] { (void)gpulab::load_results_json(broken); }).rfind(broken.string(), 0),
            0U);
}

// ---------------------------------------------------------------------------------------------
// No stack overflow on deep documents, even when the depth limit is lifted
// ---------------------------------------------------------------------------------------------

TEST(ResultsHostile, DeepNestingNeverRecurses) {
  constexpr std::size_t kDepth = 200000;
  const std::string arrays = std::string(kDepth, '[') + std::string(kDepth, ']');
  std::string objects;
  for (std::size_t i = 0; i < kDepth; ++i) {
    objects += "{\"a\":";
  }
  objects += "1" + std::string(kDepth, '}');
  // With the default limit the parse stops at the first bracket too deep...
  EXPECT_EQ(parse_error_of(arrays),
            "doc.json:1:33: nesting deeper than the limit of 32 levels of arrays and objects");
  // ...and with no practical limit the document is built, read and destroyed without recursion.
  const LoadLimits unlimited{std::uintmax_t{1} << 30, 1 << 30};
  EXPECT_EQ(parse_error_of(arrays, unlimited),
            "doc.json: expected a JSON object with \"context\" and \"results\", found an array of "
            "1 element(s)");
  EXPECT_EQ(parse_error_of(objects, unlimited),
            "doc.json: context: expected an object, found nothing");
}

// ---------------------------------------------------------------------------------------------
// The hostile corpus
// ---------------------------------------------------------------------------------------------

struct Hostile {
  std::string name;
  std::string text;
  LoadLimits limits{};
};

std::vector<Hostile> hostile_corpus() {
  std::vector<Hostile> corpus;
  const std::string valid = read_text(data_path("results_valid.json"));
  const auto add = [&](std::string name, std::string text, LoadLimits limits = {}) {
    corpus.push_back(Hostile{std::move(name), std::move(text), limits});
  };

  // Truncated at many positions (the last '}' and what follows it would make it whole again).
  const std::size_t end = valid.rfind('}');
  for (std::size_t cut = 0; cut < end; cut += 37) {
    add("truncated at " + std::to_string(cut), valid.substr(0, cut));
  }
  add("truncated before the last brace", valid.substr(0, end));

  // Wrong types and values in every field.
  struct Replacement {
    const char* pointer;
    std::vector<json> values;
  };
  const std::vector<Replacement> replacements = {
      {"/context", {json::array(), "sim", 1, nullptr, true}},
      {"/context/schema_version",
       {"1", 1.0, 1.5, -1, 0, 2, nullptr, true, json::array({1}), json::object(),
        json::parse("99999999999999999999999"), json::parse("-9223372036854775808")}},
      {"/context/gpulab_version", {1, nullptr, json::array(), "", json::object()}},
      {"/context/backend", {false, "", 0}},
      {"/context/date", {20261122, nullptr, ""}},
      {"/context/device", {json::object(), 1}},
      {"/context/spec", {json::array({"H100 SXM"})}},
      {"/context/git_revision", {0x4c0f79a}},
      {"/results", {json::object(), "[]", nullptr, 1}},
      {"/results/1", {json::array(), 1, "vector_add", nullptr}},
      {"/results/1/name", {1, "", nullptr, json::array({"vector_add"})}},
      {"/results/1/params", {json::array(), "n=1", 1}},
      {"/results/1/params/n", {1048576, nullptr, json::object(), json::array(), true}},
      {"/results/1/metrics", {json::object(), nullptr, "time_ms"}},
      {"/results/1/metrics/0", {1, json::array(), "time_ms", nullptr}},
      {"/results/1/metrics/0/name", {1, "time", "", nullptr, "_ms", "time_msec"}},
      {"/results/1/metrics/0/value", {"1", true, json::array({1.0}), json::object(), nullptr}},
      {"/results/1/metrics/0/provenance", {"guessed", 1, nullptr, "Measured", ""}},
      {"/results/1/metrics/2/spec", {1, "", nullptr}},
      {"/results/1/metrics/3/reason", {1, "", nullptr}},
      {"/results/1/metrics/3/value", {1.0, 0}},
  };
  const json document = json::parse(valid);
  for (const Replacement& replacement : replacements) {
    for (const json& value : replacement.values) {
      json spoiled = document;
      spoiled[json::json_pointer(replacement.pointer)] = value;
      add(std::string(replacement.pointer) + " = " + value.dump(), spoiled.dump(2));
    }
  }
  for (const char* pointer :
       {"/context", "/results", "/context/schema_version", "/context/backend", "/results/2/name",
        "/results/2/metrics", "/results/2/metrics/0/value", "/results/1/metrics/2/spec",
        "/results/1/metrics/3/reason", "/results/0/metrics/1/name"}) {
    json spoiled = document;
    const json::json_pointer path(pointer);
    spoiled[path.parent_pointer()].erase(path.back());
    add(std::string("without ") + pointer, spoiled.dump(2));
  }

  // Literals JSON does not have, and numbers a double cannot hold.
  const std::string value = R"("value": 12.25)";
  const std::size_t at = valid.find(value);
  for (const char* literal :
       {"NaN", "nan", "Infinity", "-Infinity", "inf", "1e400", "-1e400", "1e-400", "0x10", "+1",
        "01", "1.", ".5", "1e", "--1", "1_000", "undefined"}) {
    std::string text = valid;
    text.replace(at, value.size(), std::string("\"value\": ") + literal);
    add(std::string("value ") + literal, text);
  }
  {
    std::string text = valid;
    text.replace(at, value.size(), "\"value\": 1" + std::string(400, '0'));
    add("value: an integer of 401 digits", text);
  }

  // Deep nesting beyond the limit, at the top and inside an unknown field.
  add("100000 [", std::string(100000, '['));
  add("100000 [ ]", std::string(100000, '[') + std::string(100000, ']'));
  {
    std::string objects;
    for (int i = 0; i < 100000; ++i) {
      objects += "{\"a\":";
    }
    add("100000 objects", objects);
  }
  {
    std::string text = valid;
    text.insert(valid.find("\"context\""),
                "\"extra\": " + std::string(40, '[') + std::string(40, ']') + ", ");
    add("unknown field nested 40 deep", text);
  }

  // Very long strings.
  add("unterminated 1 MB string", "{\"context\": \"" + std::string(1000000, 'x'));
  {
    json spoiled = document;
    spoiled["results"][0]["metrics"][0]["name"] = std::string(1000000, 't');
    add("1 MB metric name", spoiled.dump());
  }
  add("1 MB key, twice",
      "{\"" + std::string(1000000, 'k') + "\": 1, \"" + std::string(1000000, 'k') + "\": 2}");

  // Not JSON at all, or not the right JSON.
  add("empty", "");
  add("whitespace", " \n\t\r\n  ");
  add("null", "null");
  add("array", "[]");
  add("empty object", "{}");
  add("string", "\"results\"");
  add("number", "1");
  add("true", "true");
  add("trailing garbage", valid + "garbage");
  add("two documents", valid + valid);
  add("trailing comma", R"({"context": {"schema_version": 1,}, "results": []})");
  add("comment", "// results\n" + valid);
  add("single quotes", "{'context': {}}");
  add("unquoted key", "{context: {}}");
  add("raw newline in string", "{\"context\": \"a\nb\"}");
  add("bad escape", R"({"context": "\x41"})");
  add("bad unicode escape", R"({"context": "\uZZZZ"})");
  add("lone surrogate escape", R"({"context": "\ud800"})");
  add("two byte order marks", "\xEF\xBB\xBF\xEF\xBB\xBF" + valid);
  add("partial byte order mark", "\xEF\xBB" + valid);
  add("NUL inside a string", "{\"context\": \"a" + std::string(1, '\0') + "b\"}");
  add("NUL after the document", valid.substr(0, end + 1) + std::string(1, '\0') + "junk");
  add("duplicate key in context", R"({"context": {"schema_version": 1, "schema_version": 1}})");
  add("duplicate results", valid.substr(0, end) + ", \"results\": []}");

  // Invalid UTF-8 inside strings and outside them.
  for (const char* bytes :
       {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\x80"}) {
    std::string text = valid;
    const std::size_t device = text.find("sim (16");
    text.insert(device, bytes);
    add("invalid UTF-8 in a string", text);
    add("invalid UTF-8 outside strings", std::string(bytes) + valid);
  }

  // Random bytes from a fixed-seed generator, raw and spliced into the valid file.
  std::mt19937 random(20261122);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 8; ++i) {
    std::string junk(static_cast<std::size_t>(1 + i * 97), '\0');
    for (char& c : junk) {
      c = static_cast<char>(byte(random));
    }
    add("random bytes " + std::to_string(i), junk);
    std::string spliced = valid;
    const std::size_t where = static_cast<std::size_t>(random() % valid.size());
    spliced.replace(where, std::min<std::size_t>(8, valid.size() - where), junk.substr(0, 8));
    add("random bytes spliced at " + std::to_string(where), spliced);
  }

  // Larger than a lowered size limit.
  add("larger than max_bytes", valid, LoadLimits{512, 32});
  return corpus;
}

TEST(ResultsHostile, EveryHostileDocumentIsOneClearResultsError) {
  const std::vector<Hostile> corpus = hostile_corpus();
  ASSERT_GE(corpus.size(), 50u);
  const TempDir dir;
  std::size_t through_files = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const Hostile& hostile = corpus[i];
    SCOPED_TRACE(hostile.name.substr(0, 120));
    const std::string message = parse_error_of(hostile.text, hostile.limits);
    EXPECT_FALSE(message.empty());
    EXPECT_TRUE(single_line(message)) << message;
    EXPECT_EQ(message.rfind("doc.json", 0), 0u) << message;
    EXPECT_LT(message.size(), 600u) << message;
    // Something after the source and location says what is wrong.
    EXPECT_GT(message.size(), std::string("doc.json: ").size() + 10) << message;

    if (i % 4 == 0) {  // also through a file on disk
      const fs::path path = dir.path() / ("hostile-" + std::to_string(i) + ".json");
      write_text(path, hostile.text);
      const std::string from_file =
          error_of([&] { (void)gpulab::load_results(path, hostile.limits); });
      EXPECT_EQ(from_file.rfind(path.string(), 0), 0u) << from_file;
      EXPECT_TRUE(single_line(from_file)) << from_file;
      ++through_files;
    }
  }
  EXPECT_GE(through_files, 10u);
  std::cout << "[          ] " << corpus.size() << " hostile documents, " << through_files
            << " also through files\n";
}

}  // namespace
