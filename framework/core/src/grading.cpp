#include "gpulab/core/grading.hpp"

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpulab {

namespace {

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

}  // namespace

LabManifest parse_lab_manifest(std::string_view text_in, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text_in);
  } catch (const json::parse_error& e) {
    fail(source, std::string("not valid JSON: ") + e.what());
  }
  const auto array = json::value_t::array;
  if (field(doc, "schema_version", json::value_t::number_integer, source, "manifest") != 1) {
    fail(source, "schema_version: this gpulab reads version 1");
  }
  LabManifest manifest;
  manifest.source_dir = text(doc, "source_dir", source, "manifest");
  const json& labs = field(doc, "labs", array, source, "manifest");
  for (std::size_t i = 0; i < labs.size(); ++i) {
    const std::string where = "labs[" + std::to_string(i) + "]";
    LabEntry lab{text(labs[i], "id", source, where),
                 text(labs[i], "title", source, where),
                 text(labs[i], "dir", source, where),
                 {}};
    const json& runs = field(labs[i], "runs", array, source, where);
    for (std::size_t j = 0; j < runs.size(); ++j) {
      const std::string run_where = where + ".runs[" + std::to_string(j) + "]";
      LabRun run{text(runs[j], "variant", source, run_where),
                 text(runs[j], "backend", source, run_where),
                 text(runs[j], "runner", source, run_where),
                 {}};
      const json& tests = field(runs[j], "tests", array, source, run_where);
      for (std::size_t k = 0; k < tests.size(); ++k) {
        const std::string test_where = run_where + ".tests[" + std::to_string(k) + "]";
        run.tests.push_back(
            {text(tests[k], "name", source, test_where),
             field(tests[k], "points", json::value_t::number_integer, source, test_where)
                 .get<int>()});
      }
      lab.runs.push_back(std::move(run));
    }
    manifest.labs.push_back(std::move(lab));
  }
  return manifest;
}

LabManifest load_lab_manifest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(path.string() +
                             ": cannot read the lab manifest (configure the build first)");
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return parse_lab_manifest(contents.str(), path.string());
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

namespace {

std::string decode_entities(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '&') {
      out += in[i];
      continue;
    }
    const std::size_t semi = in.find(';', i);
    if (semi == std::string_view::npos) {
      out += in[i];
      continue;
    }
    const std::string_view entity = in.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out += '&';
    } else if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      unsigned long code = 0;
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
      if (error != std::errc{} || end != digits.data() + digits.size()) {
        throw std::runtime_error("ctest JUnit report: bad character reference &" +
                                 std::string(entity) + ";");
      }
      out += code < 0x80 ? static_cast<char>(code) : '?';
    } else {
      out += in.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

// The value of attribute `name` in a start tag's text, or nullopt.
std::optional<std::string> attribute(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  std::size_t at = tag.find(key);
  if (at == std::string_view::npos) {
    // Attributes may follow a newline and tab instead of a space.
    for (const char* sep : {"\n", "\t"}) {
      at = tag.find(std::string(sep) + std::string(name) + "=\"");
      if (at != std::string_view::npos) {
        break;
      }
    }
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
  }
  const std::size_t begin = at + key.size();
  const std::size_t end = tag.find('"', begin);
  if (end == std::string_view::npos) {
    return std::nullopt;
  }
  return decode_entities(tag.substr(begin, end - begin));
}

}  // namespace

std::map<std::string, JunitCase> parse_ctest_junit(std::string_view xml) {
  if (xml.find("<testsuite") == std::string_view::npos) {
    throw std::runtime_error("not a ctest JUnit report (no <testsuite> element)");
  }
  std::map<std::string, JunitCase> cases;
  std::size_t pos = 0;
  while ((pos = xml.find("<testcase", pos)) != std::string_view::npos) {
    const std::size_t tag_end = xml.find('>', pos);
    if (tag_end == std::string_view::npos) {
      throw std::runtime_error("truncated ctest JUnit report");
    }
    const std::string_view tag = xml.substr(pos, tag_end - pos);
    const std::optional<std::string> name = attribute(tag, "name");
    const std::optional<std::string> status = attribute(tag, "status");
    if (!name || !status) {
      throw std::runtime_error("ctest JUnit report: a <testcase> without name or status");
    }
    JunitCase entry;
    entry.outcome = *status == "run"    ? TestOutcome::passed
                    : *status == "fail" ? TestOutcome::failed
                                        : TestOutcome::skipped;
    std::size_t next = xml.find("<testcase", tag_end);
    const std::string_view body = xml.substr(
        tag_end, next == std::string_view::npos ? std::string_view::npos : next - tag_end);
    const std::size_t out_begin = body.find("<system-out>");
    if (out_begin != std::string_view::npos) {
      const std::size_t content = out_begin + std::string_view("<system-out>").size();
      const std::size_t out_end = body.find("</system-out>", content);
      entry.output = decode_entities(body.substr(
          content, out_end == std::string_view::npos ? std::string_view::npos : out_end - content));
    }
    cases[*name] = std::move(entry);
    pos = tag_end;
  }
  return cases;
}

std::vector<std::string> failure_excerpt(std::string_view output, std::size_t max_lines) {
  // gtest prints "file:line: Failure" (or "unknown file: Failure" for an exception) and then the
  // assertion's lines: expected, got, the message. Banner lines ("[ RUN      ]", "[----------]",
  // "Note: Google Test filter = ...") are never part of it and end a block.
  auto banner = [](const std::string& line) {
    return line.starts_with("[") || line.starts_with("Note: Google Test filter");
  };
  std::vector<std::string> lines;
  std::istringstream in{std::string(output)};
  std::string line;
  bool inside = false;
  while (std::getline(in, line) && lines.size() < max_lines) {
    if (banner(line)) {
      inside = false;
      continue;
    }
    const bool starts = line.ends_with(": Failure") ||
                        line.find("not implemented") != std::string::npos ||
                        line.find("exception") != std::string::npos;
    if (starts) {
      inside = true;
    } else if (line.empty()) {
      inside = false;
    }
    if (inside && !line.empty()) {
      lines.push_back(line);
    }
  }
  return lines;
}

RunGrade grade_run(const LabEntry& lab, const LabRun& run,
                   const std::map<std::string, JunitCase>& results) {
  RunGrade grade{lab.id, lab.title, run.variant, run.backend, 0, 0, {}};
  for (const GradedTest& test : run.tests) {
    TestGrade t{test.name, test.points, 0, TestOutcome::missing, {}};
    if (const auto found = results.find(test.name); found != results.end()) {
      t.outcome = found->second.outcome;
      if (t.outcome == TestOutcome::failed) {
        t.excerpt = failure_excerpt(found->second.output);
      }
    }
    t.earned = t.outcome == TestOutcome::passed ? test.points : 0;
    grade.earned += t.earned;
    grade.possible += test.points;
    grade.tests.push_back(std::move(t));
  }
  return grade;
}

}  // namespace gpulab
