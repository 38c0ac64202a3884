// The lab manifest (manifest.hpp): read from the build's JSON, every field checked.
#include "gpulab/grader/manifest.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "source_error.hpp"

namespace gpulab {

namespace detail {

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw std::runtime_error(std::string(source) + ": " + what);
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;
using detail::fail;
using nlohmann::json;

const json& field(const json& object, const char* key, json::value_t type, std::string_view source,
                  const std::string& where) {
  if (!object.is_object() || !object.contains(key)) {
    fail(source, where + ": missing \"" + key + "\"");
  }
  const json& value = object.at(key);
  const bool ok =
      value.type() == type || (type == json::value_t::number_integer && value.is_number_unsigned());
  if (!ok) {
    fail(source, where + "." + key + ": unexpected type " + value.type_name());
  }
  return value;
}

std::string text(const json& object, const char* key, std::string_view source,
                 const std::string& where) {
  return field(object, key, json::value_t::string, source, where).get<std::string>();
}

// A field that is an array of strings.
std::vector<std::string> strings(const json& object, const char* key, std::string_view source,
                                 const std::string& where) {
  std::vector<std::string> out;
  for (const json& item : field(object, key, json::value_t::array, source, where)) {
    if (!item.is_string()) {
      fail(source, where + "." + key + ": each entry must be a string");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

LabManifest parse_lab_manifest(std::string_view text_in, std::string_view source) {
  const json doc = parse_json(text_in, source);  // JsonError: "SOURCE:LINE:COLUMN: ..."
  const auto array = json::value_t::array;
  if (field(doc, "schema_version", json::value_t::number_integer, source, "manifest") != 8) {
    fail(source, "schema_version: this gpulab reads version 8 (reconfigure the build)");
  }
  LabManifest manifest;
  manifest.source_dir = text(doc, "source_dir", source, "manifest");
  manifest.build_dir = text(doc, "build_dir", source, "manifest");
  manifest.extra_tests_dir = text(doc, "extra_tests_dir", source, "manifest");
  manifest.test_timeout_s =
      field(doc, "test_timeout_s", json::value_t::number_integer, source, "manifest").get<int>();
  manifest.grade_runner = text(doc, "grade_runner", source, "manifest");
  manifest.nm = text(doc, "nm", source, "manifest");
  manifest.objdump = text(doc, "objdump", source, "manifest");
  for (const std::string& folder : strings(doc, "system_include_dirs", source, "manifest")) {
    manifest.system_include_dirs.emplace_back(folder);
  }
  const json& sandbox = field(doc, "sandbox", json::value_t::object, source, "manifest");
  for (const auto& [key, out] : {std::pair{"visible", &manifest.sandbox.visible},
                                 std::pair{"hidden", &manifest.sandbox.hidden}}) {
    for (const std::string& folder : strings(sandbox, key, source, "manifest.sandbox")) {
      out->emplace_back(folder);
    }
  }
  for (const std::string& folder : strings(doc, "grading_slots", source, "manifest")) {
    manifest.grading_slots.emplace_back(folder);
  }
  const json& labs = field(doc, "labs", array, source, "manifest");
  for (std::size_t i = 0; i < labs.size(); ++i) {
    const std::string where = "labs[" + std::to_string(i) + "]";
    LabEntry lab{text(labs[i], "id", source, where),
                 text(labs[i], "title", source, where),
                 text(labs[i], "dir", source, where),
                 strings(labs[i], "student_files", source, where),
                 {},
                 {},
                 {}};
    lab.allowed_calls = strings(labs[i], "allowed_calls", source, where);
    lab.cuda_calls = strings(labs[i], "cuda_calls", source, where);
    const json& forbidden = field(labs[i], "forbidden_calls", array, source, where);
    for (std::size_t k = 0; k < forbidden.size(); ++k) {
      const std::string call_where = where + ".forbidden_calls[" + std::to_string(k) + "]";
      lab.forbidden_calls.push_back({text(forbidden[k], "call", source, call_where),
                                     strings(forbidden[k], "does", source, call_where)});
    }
    const json& runs = field(labs[i], "runs", array, source, where);
    for (std::size_t j = 0; j < runs.size(); ++j) {
      const std::string run_where = where + ".runs[" + std::to_string(j) + "]";
      LabRun run;
      run.variant = text(runs[j], "variant", source, run_where);
      const auto slot = field(runs[j], "slot", json::value_t::number_unsigned, source, run_where)
                            .get<std::uint64_t>();
      if (slot > 0 && slot >= manifest.grading_slots.size()) {
        fail(source, run_where + ".slot: " + std::to_string(slot) + " is not one of the " +
                         std::to_string(manifest.grading_slots.size()) + " grading slots");
      }
      run.slot = static_cast<int>(slot);
      run.backend = text(runs[j], "backend", source, run_where);
      run.files_dir = text(runs[j], "files_dir", source, run_where);
      run.report = text(runs[j], "report", source, run_where);
      run.library_target = text(runs[j], "library_target", source, run_where);
      run.library = text(runs[j], "library", source, run_where);
      run.tests_target = text(runs[j], "tests_target", source, run_where);
      run.tests_program = text(runs[j], "tests_program", source, run_where);
      run.results_dir = text(runs[j], "results_dir", source, run_where);
      for (const auto& [key, value] :
           field(runs[j], "environment", json::value_t::object, source, run_where).items()) {
        if (!value.is_string()) {
          fail(source, run_where + ".environment." + key + ": a value must be a string");
        }
        run.environment.emplace_back(key, value.get<std::string>());
      }
      const json& tests = field(runs[j], "tests", array, source, run_where);
      for (std::size_t k = 0; k < tests.size(); ++k) {
        const std::string test_where = run_where + ".tests[" + std::to_string(k) + "]";
        GradedTest test{
            text(tests[k], "name", source, test_where),
            field(tests[k], "points", json::value_t::number_integer, source, test_where).get<int>(),
            field(tests[k], "hidden", json::value_t::boolean, source, test_where).get<bool>(),
            strings(tests[k], "covers", source, test_where),
            text(tests[k], "checks", source, test_where),
            field(tests[k], "counted", json::value_t::boolean, source, test_where).get<bool>()};
        run.tests.push_back(std::move(test));
      }
      if (!run.tests.empty() && (run.tests_program.empty() || run.results_dir.empty())) {
        fail(source, run_where + ": graded tests without a tests_program and results_dir");
      }
      lab.runs.push_back(std::move(run));
    }
    manifest.labs.push_back(std::move(lab));
  }
  return manifest;
}

const LabRun* find_run(const LabEntry& lab, std::string_view variant, std::string_view backend,
                       int slot) {
  const auto it = std::ranges::find_if(lab.runs, [&](const LabRun& run) {
    return run.variant == variant && run.backend == backend && run.slot == slot;
  });
  return it == lab.runs.end() ? nullptr : &*it;
}

const LabRun* grading_run(const LabEntry& lab, const GradedTest& test, std::string_view backend,
                          int slot) {
  return find_run(lab, "submission", test.counted && backend == "cuda" ? "sim" : backend, slot);
}

LabManifest load_lab_manifest(const std::filesystem::path& path) {
  const std::optional<std::string> contents = read_file(path);
  if (!contents) {
    throw std::runtime_error(path.string() +
                             ": cannot read the lab manifest (configure the build first)");
  }
  return parse_lab_manifest(*contents, path.string());
}

std::vector<std::string> runner_command(const LabManifest& manifest, const LabRun& run,
                                        const GradedTest& test, double timeout_s,
                                        std::string_view sandbox) {
  std::ostringstream seconds;
  seconds << timeout_s;
  std::vector<std::string> command = {manifest.grade_runner.string(),
                                      "--test",
                                      test.name,
                                      "--out",
                                      run.results_dir.string(),
                                      "--timeout",
                                      seconds.str(),
                                      "--sandbox",
                                      std::string(sandbox)};
  for (const auto& [option, folders] : {std::pair{"--visible", &manifest.sandbox.visible},
                                        std::pair{"--hide", &manifest.sandbox.hidden}}) {
    for (const fs::path& folder : *folders) {
      command.insert(command.end(), {option, folder.string()});
    }
  }
  command.insert(command.end(), {"--", run.tests_program.string()});
  return command;
}

}  // namespace gpulab
