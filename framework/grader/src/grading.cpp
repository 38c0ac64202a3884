#include "gpulab/grader/grading.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "gpulab/grader/code_checks.hpp"
#include "gpulab/grader/sha256.hpp"
#include "report_text.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw std::runtime_error(std::string(source) + ": " + what);
}

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

// A compiler's line that reports an error. "error" inside "-Werror" does not count: the compile
// command a build tool echoes before a failure ("FAILED: ..." and the command line) names it.
bool says_error(std::string_view line) {
  for (std::size_t at = line.find("error"); at != std::string_view::npos;
       at = line.find("error", at + 1)) {
    if (at == 0 || line[at - 1] != 'W') {
      return true;
    }
  }
  return false;
}

// A compiler's line that reports a warning: GCC and Clang "file:line:col: warning: ...", nvcc
// "file(line): warning #...".
bool says_warning(std::string_view line) {
  return line.find(": warning:") != std::string_view::npos ||
         line.find("): warning") != std::string_view::npos;
}

// A line of the build tool, not the compiler's: ninja's last line ("ninja: build stopped:
// subcommand failed."), and the progress lines of ninja ("[6/8] Building ...") and make
// ("[ 50%] Building ...").
bool is_build_tool_line(std::string_view line) {
  if (line.starts_with("ninja: build stopped")) {
    return true;
  }
  const std::size_t close = line.find("] ");
  if (!line.starts_with('[') || close == std::string_view::npos) {
    return false;
  }
  const std::string_view inside = line.substr(1, close - 1);
  return !inside.empty() && inside.find_first_not_of("0123456789/% ") == std::string_view::npos;
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

std::optional<fs::path> find_student_file(const fs::path& root, const LabEntry& lab,
                                          const std::string& file) {
  for (const fs::path& candidate : {fs::path("labs") / lab.dir / file, fs::path(lab.dir) / file}) {
    std::error_code error;
    if (fs::exists(fs::symlink_status(root / candidate, error))) {
      return candidate;
    }
  }
  return std::nullopt;
}

std::optional<std::string> submitted_file_problem(const fs::path& root, const fs::path& relative,
                                                  std::uintmax_t max_bytes) {
  fs::path path = root;
  std::error_code error;
  const auto link = [&](const fs::path& at) -> std::optional<std::string> {
    if (!fs::is_symlink(fs::symlink_status(at, error))) {
      return std::nullopt;
    }
    const fs::path target = fs::read_symlink(at, error);
    return (at == root ? "the submission folder " : "") + at.string() + " is a symbolic link (to " +
           target.string() + "): a submission is regular folders and files, graded as they are";
  };
  if (std::optional<std::string> problem = link(path)) {
    return problem;
  }
  for (const fs::path& part : relative) {
    path /= part;
    if (std::optional<std::string> problem = link(path)) {
      return problem;
    }
  }
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) {
    return path.string() + " does not exist";
  }
  if (!fs::is_regular_file(status)) {
    return path.string() + " is not a regular file";
  }
  if (const std::uintmax_t names = fs::hard_link_count(path, error); !error && names > 1) {
    return path.string() + " is a hard link (" + std::to_string(names) +
           " names): submit a copy of the file";
  }
  if (const std::uintmax_t bytes = fs::file_size(path, error); error || bytes > max_bytes) {
    return path.string() + " is larger than " + std::to_string(max_bytes >> 10) +
           " KiB: a student file is source code";
  }
  return std::nullopt;
}

bool stage_student_file(const fs::path& from, const fs::path& to, bool keep_existing) {
  std::error_code error;
  if (keep_existing && fs::exists(to, error)) {
    return false;
  }
  std::string why_not;
  const std::optional<std::string> contents = read_file(from, &why_not);
  if (!contents) {
    throw std::runtime_error("cannot read " + from.string() + ": " + why_not);
  }
  std::string staged = "#line 1 \"";
  for (const char c : fs::absolute(from).lexically_normal().string()) {
    if (c == '"' || c == '\\') {
      staged += '\\';
    }
    staged += c;
  }
  staged += "\"\n" + *contents;
  if (read_file(to) == staged) {
    return false;
  }
  write_file_atomically(to, staged);
  return true;
}

LabCodeCheck check_lab_code(const LabManifest& manifest, const LabEntry& lab, const LabRun& run,
                            const fs::path& build_dir, const fs::path& files_dir) {
  CodeRules rules{
      "gpulab::" + lab.id, {}, run.backend == "cuda", lab.allowed_calls, lab.cuda_calls};
  for (const LabForbiddenCall& forbidden : lab.forbidden_calls) {
    rules.forbidden_calls.push_back(forbidden.call);
  }
  const std::vector<ObjectCode> objects =
      read_object_code(run.library, manifest.nm, manifest.objdump);
  LabCodeCheck check{check_object_code(objects, rules), find_forbidden_calls(objects, rules)};
  for (std::string& finding : check_lab_sources(manifest, lab, run, build_dir, files_dir)) {
    check.findings.push_back(std::move(finding));
  }
  return check;
}

std::vector<std::string> check_lab_sources(const LabManifest& manifest, const LabEntry& lab,
                                           const LabRun& run, const fs::path& build_dir,
                                           const fs::path& files_dir) {
  const IncludeRules includes{manifest.source_dir,
                              build_dir,
                              manifest.source_dir / "labs" / lab.dir,
                              files_dir,
                              manifest.extra_tests_dir,
                              {},
                              manifest.system_include_dirs};
  // First what the other checks rely on: the compiler's line markers are the student's to forge.
  std::vector<std::string> findings;
  for (const std::string& file : lab.student_files) {
    if (const std::optional<std::string> text = read_file(files_dir / file)) {
      for (std::string& finding : check_line_directives(file, *text)) {
        findings.push_back(std::move(finding));
      }
    }
  }
  return findings.empty() ? check_library_sources(run.library_target, includes) : findings;
}

std::string_view to_string(TestOutcome outcome) noexcept {
  switch (outcome) {
    case TestOutcome::passed:
      return "passed";
    case TestOutcome::failed:
      return "failed";
    case TestOutcome::skipped:
      return "skipped";
    case TestOutcome::missing:
      return "missing";
  }
  return "?";
}

TestOutcome runner_outcome(const ProcessResult& runner) {
  if (!runner.started) {
    return TestOutcome::missing;
  }
  if (runner.timed_out || !runner.exit_code) {
    return TestOutcome::failed;
  }
  return *runner.exit_code == 0    ? TestOutcome::passed
         : *runner.exit_code == 77 ? TestOutcome::skipped
                                   : TestOutcome::failed;
}

// ---- seal --------------------------------------------------------------------------------------

std::vector<std::string> instructor_files(const LabManifest& manifest) {
  const fs::path& root = manifest.source_dir;
  std::set<std::string> student;
  for (const LabEntry& lab : manifest.labs) {
    for (const std::string& file : lab.student_files) {
      student.insert((fs::path("labs") / lab.dir / file).generic_string());
    }
  }
  std::set<std::string> files;
  const auto add_tree = [&](const fs::path& dir, bool relative) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) {
      return;
    }
    for (fs::recursive_directory_iterator it(dir, error), end; it != end; it.increment(error)) {
      if (error) {
        throw std::runtime_error("cannot list " + dir.string() + ": " + error.message());
      }
      if (it->is_regular_file()) {
        const std::string path = relative ? it->path().lexically_relative(root).generic_string()
                                          : it->path().generic_string();
        // Markdown is documentation: nothing builds from it, and students keep notes in it.
        if (!student.contains(path) && it->path().extension() != ".md") {
          files.insert(path);
        }
      }
    }
  };
  for (const char* file : {"CMakeLists.txt", "CMakePresets.json"}) {
    if (fs::is_regular_file(root / file)) {
      files.insert(file);
    }
  }
  for (const char* dir : {"cmake", "framework", "kernels", "tests", "labs"}) {
    add_tree(root / dir, true);
  }
  if (!manifest.extra_tests_dir.empty()) {
    const fs::path extra = manifest.extra_tests_dir.lexically_normal();
    const fs::path relative = extra.lexically_relative(root);
    const bool inside = !relative.empty() && *relative.begin() != "..";
    // Inside the tree it may be outside the folders above (e.g. <source>/hidden): relative paths.
    add_tree(extra, inside);
  }
  std::vector<std::string> listed(files.begin(), files.end());  // the sources, sorted
  // What grading runs of the build: a test program that rewrote one of them could change how
  // the next submission is graded.
  std::set<std::string> build_files;
  std::error_code error;
  for (const fs::path& file :
       {manifest.grade_runner, manifest.build_dir / "grading" / "manifest.json"}) {
    if (fs::is_regular_file(file, error)) {
      build_files.insert(file.generic_string());
    }
  }
  if (fs::is_directory(manifest.build_dir, error)) {
    for (fs::recursive_directory_iterator it(manifest.build_dir, error), end; it != end;
         it.increment(error)) {
      if (error) {
        throw std::runtime_error("cannot list " + manifest.build_dir.string() + ": " +
                                 error.message());
      }
      const std::string name = it->path().filename().string();
      if (it->is_directory() && (name == "CMakeFiles" || name == "Testing" || name == "grading")) {
        // No ctest files there, and tests running beside a grading create and remove results
        // in them: not listed, so that listing cannot fail on a file that just went away.
        it.disable_recursion_pending();
      } else if (name == "CTestTestfile.cmake" && it->is_regular_file()) {
        build_files.insert(it->path().generic_string());
      }
    }
  }
  listed.insert(listed.end(), build_files.begin(), build_files.end());
  return listed;
}

fs::path default_seal_path(const fs::path& build_dir, std::string_view xdg_state_home,
                           std::string_view home) {
  fs::path state;
  if (!xdg_state_home.empty()) {
    state = fs::path(xdg_state_home);
  } else if (!home.empty()) {
    state = fs::path(home) / ".local" / "state";
  } else {
    throw std::runtime_error(
        "neither XDG_STATE_HOME nor HOME is set: name the seal's file with --seal");
  }
  fs::path build = fs::absolute(build_dir).lexically_normal();
  if (build.filename().empty()) {  // "/work/build/" names the same folder as "/work/build"
    build = build.parent_path();
  }
  return state / "gpulab" / "seals" /
         (build.filename().string() + "-" + sha256_hex(build.generic_string()).substr(0, 16) +
          ".sha256");
}

std::vector<SealedFile> seal_files(const LabManifest& manifest,
                                   const std::vector<std::string>& files) {
  std::vector<SealedFile> seal;
  seal.reserve(files.size());
  for (const std::string& file : files) {
    const fs::path path =
        fs::path(file).is_absolute() ? fs::path(file) : manifest.source_dir / file;
    seal.push_back({file, sha256_file(path)});
  }
  return seal;
}

std::string format_seal(const std::vector<SealedFile>& seal) {
  std::string out;
  for (const SealedFile& file : seal) {
    out += file.sha256 + "  " + file.path + "\n";
  }
  return out;
}

std::vector<SealedFile> parse_seal(std::string_view text_in, std::string_view source) {
  std::vector<SealedFile> seal;
  std::istringstream in{std::string(text_in)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      continue;
    }
    const bool hex = line.size() > 66 && line.substr(64, 2) == "  " &&
                     line.find_first_not_of("0123456789abcdef") == 64;
    if (!hex) {
      fail(source, "line " + std::to_string(number) + ": expected \"<sha256>  <path>\"");
    }
    seal.push_back({line.substr(66), line.substr(0, 64)});
  }
  return seal;
}

IntegrityCheck check_integrity(const LabManifest& manifest, const std::vector<SealedFile>& seal) {
  IntegrityCheck check;
  check.checked = true;
  std::set<std::string> sealed;
  for (const SealedFile& file : seal) {
    sealed.insert(file.path);
    const fs::path path =
        fs::path(file.path).is_absolute() ? fs::path(file.path) : manifest.source_dir / file.path;
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      check.missing.push_back(file.path);
    } else if (sha256_file(path) != file.sha256) {
      check.changed.push_back(file.path);
    }
  }
  for (const std::string& file : instructor_files(manifest)) {
    if (!sealed.contains(file)) {
      check.added.push_back(file);
    }
  }
  return check;
}

std::optional<int> definition_line(std::string_view source, std::string_view function) {
  const auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
  };
  int number = 0;
  for (std::size_t start = 0; start < source.size();) {
    const std::size_t end = std::min(source.find('\n', start), source.size());
    const std::string_view line = source.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == ' ' || line.front() == '\t' || line.front() == '#' ||
        line.starts_with("//") || line.starts_with("/*")) {
      continue;
    }
    for (std::size_t at = line.find(function); at != std::string_view::npos;
         at = line.find(function, at + 1)) {
      const std::size_t after = at + function.size();
      if (at > 0 && !part_of_name(line[at - 1]) && after < line.size() && line[after] == '(') {
        return number;
      }
    }
  }
  return std::nullopt;
}

// ---- grades ------------------------------------------------------------------------------------

std::vector<std::string> reject_forbidden_calls(LabGrade& grade, const LabEntry& lab,
                                                const std::vector<ForbiddenCall>& calls) {
  std::vector<std::string> uncovered;
  for (const ForbiddenCall& call : calls) {
    std::vector<std::string> does;  // of every rule the call matches
    for (const LabForbiddenCall& forbidden : lab.forbidden_calls) {
      if (call.call.starts_with(forbidden.call)) {
        for (const std::string& function : forbidden.does) {
          if (std::find(does.begin(), does.end(), function) == does.end()) {
            does.push_back(function);
          }
        }
      }
    }
    std::string names;
    for (const std::string& function : does) {
      names += (names.empty() ? "" : " and ") + function;
    }
    const std::string detail = call.file + " calls " + call.call +
                               (names.empty() ? "" : ", which does the work of " + names) +
                               ": the lab asks for your own implementation";
    bool covered = false;
    for (TestGrade& test : grade.tests) {
      if (std::find_first_of(test.covers.begin(), test.covers.end(), does.begin(), does.end()) ==
          test.covers.end()) {
        continue;
      }
      covered = true;
      if (test.verdict.disposition != Disposition::rejected) {
        test.earned = 0;
        test.verdict = {Disposition::rejected, detail, {}};
      }
    }
    if (!covered) {
      uncovered.push_back(detail);
    }
  }
  return uncovered;
}

TestGrade grade_test(const GradedTest& test, TestOutcome runner,
                     const std::optional<Verdict>& verdict) {
  TestGrade grade{test.name, test.points, 0, test.hidden, test.covers, test.checks, {}};
  if (!verdict) {
    grade.verdict = {
        Disposition::not_run,
        runner == TestOutcome::missing
            ? std::string("the test runner did not run it")
            : "no verdict file (the test runner: " + std::string(to_string(runner)) + ")",
        {}};
    return grade;
  }
  grade.verdict = *verdict;
  if (verdict->disposition == Disposition::passed && runner != TestOutcome::passed) {
    grade.verdict = {Disposition::failed,
                     "the verdict file says passed but the test runner's exit says " +
                         std::string(to_string(runner)) +
                         " (a verdict file written by the code under test?)",
                     {}};
  }
  grade.earned = grade.verdict.disposition == Disposition::passed ? test.points : 0;
  return grade;
}

void total_lab(LabGrade& lab) {
  lab.earned = 0;
  lab.possible = 0;
  for (const TestGrade& test : lab.tests) {
    lab.earned += test.earned;
    lab.possible += test.points;
  }
}

namespace {

// The lines of a build's output that `pick` chooses, each with the line after it (the source
// line a compiler quotes) unless that one is picked too; at most `max_lines`.
template <typename Pick>
std::vector<std::string> picked_lines(const std::vector<std::string>& all, std::size_t max_lines,
                                      Pick pick) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < all.size() && lines.size() < max_lines; ++i) {
    if (pick(all[i])) {
      lines.push_back(all[i]);
      if (i + 1 < all.size() && lines.size() < max_lines && !pick(all[i + 1]) &&
          !is_build_tool_line(all[i + 1])) {
        lines.push_back(all[++i]);
      }
    }
  }
  return lines;
}

std::vector<std::string> output_lines(std::string_view output) {
  std::vector<std::string> all;
  std::istringstream in{std::string(output)};
  std::string line;
  while (std::getline(in, line)) {
    all.push_back(detail::clean_text(line));
  }
  return all;
}

}  // namespace

std::vector<std::string> compiler_errors(std::string_view output, std::size_t max_lines) {
  const std::vector<std::string> all = output_lines(output);
  std::vector<std::string> lines = picked_lines(all, max_lines, [](std::string_view line) {
    return says_error(line) && !is_build_tool_line(line);
  });
  if (lines.empty()) {
    const std::size_t first = all.size() > max_lines ? all.size() - max_lines : 0;
    lines.assign(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
  }
  return lines;
}

std::vector<std::string> compiler_warnings(std::string_view output, std::size_t max_lines) {
  return picked_lines(output_lines(output), max_lines, says_warning);
}

int GradeReport::earned() const {
  int sum = 0;
  for (const LabGrade& lab : labs) {
    sum += lab.earned;
  }
  return sum;
}

int GradeReport::possible() const {
  int sum = 0;
  for (const LabGrade& lab : labs) {
    sum += lab.possible;
  }
  return sum;
}

}  // namespace gpulab
