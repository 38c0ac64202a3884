// Unit tests of the grade reports (report.hpp; framework/grader/src/report_*.cpp): JSON,
// Gradescope's results.json (checked against Gradescope's documented format) and JUnit XML (read
// back with a strict XML reader), on a sample grading with every kind of test.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/report.hpp"

#include "text_match.hpp"

namespace gpulab {
namespace {

using nlohmann::json;
using Lines = std::vector<std::string>;

using gpulab::testing::contains;
using gpulab::testing::joined;

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

// Two labs: lab01 with a pass, a failure, a hidden pass and a hidden time-out; lab02 that did not
// compile.
GradeReport sample_report() {
  GradeReport report;
  report.submission = "/submissions/alice";
  report.backend = "sim";
  report.date = "2026-11-22T04:30:00Z";
  report.gpulab_version = "0.1.0";
  report.sandbox = "bubblewrap";
  report.integrity.checked = true;
  report.ignored = {"tests/labs/lab01_benchmarking/lab01_test.cpp"};
  report.problems = {"lab03: no runner"};

  LabGrade lab01;
  lab01.lab = "lab01";
  lab01.title = "Benchmarking a kernel correctly";
  lab01.program = "/b/bin/gpulab.test.lab01.submission1.sim";
  lab01.build_warnings = {"benchmark.cu:31:10: warning: use of old-style cast to 'double'",
                          "   31 |   return (double)n;"};
  lab01.defined_at = {{"summarize_samples", "labs/lab01_benchmarking/benchmark.cu:27"}};
  lab01.tests.push_back(grade_test({"Lab01Summary.Count", 5, false, {"f"}, "what it checks"},
                                   TestOutcome::passed, Verdict{Disposition::passed, "", {}}));
  lab01.tests.push_back(grade_test(
      {"Lab01Summary.Median", 10, false, {"summarize_samples"}, "the median"}, TestOutcome::failed,
      Verdict{Disposition::failed,
              "Expected equality of these values:",
              {"lab01_test.cpp:73", "Expected equality of these values:", "  median(x)"}}));
  lab01.tests.push_back(grade_test({"Lab01Hidden.Big", 20, true, {"f"}, "what it checks"},
                                   TestOutcome::passed, Verdict{Disposition::passed, "", {}}));
  lab01.tests.push_back(
      grade_test({"Lab01Hidden.Slow", 15, true, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::timed_out, "killed after 120 s", {"still running"}}));
  total_lab(lab01);

  LabGrade lab02;
  lab02.lab = "lab02";
  lab02.title = "Profiling";
  lab02.build_errors = {"kernels.cu(27): error: identifier \"blockIdxx\" is undefined"};
  lab02.tests.push_back(
      grade_test({"Lab02.Copy", 50, false, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::build_failed, "the lab's code did not compile", {}}));
  total_lab(lab02);

  report.labs = {lab01, lab02};
  return report;
}

TEST(GradeReport, EarnedAndPossibleSumTheLabs) {
  const GradeReport report = sample_report();
  EXPECT_EQ(report.labs[0].earned, 25);
  EXPECT_EQ(report.labs[0].possible, 50);
  EXPECT_EQ(report.earned(), 25);
  EXPECT_EQ(report.possible(), 100);
  EXPECT_EQ(GradeReport{}.earned(), 0);
  EXPECT_EQ(GradeReport{}.possible(), 0);
}

TEST(ReportJson, HasEveryField) {
  const json doc = json::parse(report_json(sample_report()));
  EXPECT_EQ(doc.at("schema_version"), 2);
  EXPECT_EQ(doc.at("gpulab_version"), "0.1.0");
  EXPECT_EQ(doc.at("date"), "2026-11-22T04:30:00Z");
  EXPECT_EQ(doc.at("submission"), "/submissions/alice");
  EXPECT_EQ(doc.at("backend"), "sim");
  EXPECT_EQ(doc.at("sandbox"), "bubblewrap");
  EXPECT_EQ(doc.at("earned"), 25);
  EXPECT_EQ(doc.at("possible"), 100);
  const json& integrity = doc.at("integrity");
  EXPECT_EQ(integrity.at("checked"), true);
  EXPECT_EQ(integrity.at("ok"), true);
  EXPECT_EQ(integrity.at("changed"), json::array());
  EXPECT_EQ(integrity.at("missing"), json::array());
  EXPECT_EQ(integrity.at("added"), json::array());
  EXPECT_EQ(doc.at("ignored"), json({"tests/labs/lab01_benchmarking/lab01_test.cpp"}));
  EXPECT_EQ(doc.at("problems"), json({"lab03: no runner"}));

  const json& labs = doc.at("labs");
  ASSERT_EQ(labs.size(), 2u);
  EXPECT_EQ(labs[0].at("lab"), "lab01");
  EXPECT_EQ(labs[0].at("title"), "Benchmarking a kernel correctly");
  EXPECT_EQ(labs[0].at("earned"), 25);
  EXPECT_EQ(labs[0].at("possible"), 50);
  EXPECT_EQ(labs[0].at("program"), "/b/bin/gpulab.test.lab01.submission1.sim");
  EXPECT_EQ(labs[0].at("build_errors"), json::array());
  EXPECT_EQ(labs[0].at("build_warnings"),
            json({"benchmark.cu:31:10: warning: use of old-style cast to 'double'",
                  "   31 |   return (double)n;"}));
  EXPECT_EQ(labs[1].at("build_warnings"), json::array());
  ASSERT_EQ(labs[0].at("tests").size(), 4u);
  const json& median = labs[0].at("tests")[1];
  EXPECT_EQ(median.at("name"), "Lab01Summary.Median");
  EXPECT_EQ(median.at("points"), 10);
  EXPECT_EQ(median.at("earned"), 0);
  EXPECT_EQ(median.at("hidden"), false);
  EXPECT_EQ(median.at("covers"), json({"summarize_samples"}));
  EXPECT_EQ(median.at("checks"), "the median");
  EXPECT_EQ(labs[0].at("defined_at"),
            json({{"summarize_samples", "labs/lab01_benchmarking/benchmark.cu:27"}}));
  EXPECT_EQ(median.at("disposition"), "failed");
  EXPECT_EQ(median.at("detail"), "Expected equality of these values:");
  EXPECT_EQ(median.at("excerpt"),
            json({"lab01_test.cpp:73", "Expected equality of these values:", "  median(x)"}));
  EXPECT_EQ(labs[0].at("tests")[2].at("hidden"), true);
  EXPECT_EQ(labs[0].at("tests")[3].at("disposition"), "timed_out");
  EXPECT_EQ(labs[1].at("build_errors"),
            json({"kernels.cu(27): error: identifier \"blockIdxx\" is undefined"}));
  EXPECT_EQ(labs[1].at("tests")[0].at("disposition"), "build_failed");
}

TEST(ReportJson, AFailedIntegrityCheckIsReported) {
  GradeReport report = sample_report();
  report.integrity.changed = {"framework/core/x.cpp"};
  report.integrity.added = {"tests/new.cpp"};
  const json integrity = json::parse(report_json(report)).at("integrity");
  EXPECT_EQ(integrity.at("ok"), false);
  EXPECT_EQ(integrity.at("changed"), json({"framework/core/x.cpp"}));
  EXPECT_EQ(integrity.at("added"), json({"tests/new.cpp"}));
}

TEST(ReportJson, InvalidUtf8IsReplacedNotThrown) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict.detail = "bad \xff\xc3 bytes";
  std::string text;
  ASSERT_NO_THROW(text = report_json(report));
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(text)) << text;
}

// Checks `doc` against Gradescope's documented results.json format (autograder specifications:
// "Output Format"); returns what is wrong, one line each.
Lines gradescope_problems(const json& doc) {
  Lines problems;
  const std::set<std::string> visibilities = {"hidden", "after_due_date", "after_published",
                                              "visible"};
  const auto check_visibility = [&](const json& object, const char* key, const std::string& where) {
    if (object.contains(key) && (!object.at(key).is_string() ||
                                 !visibilities.contains(object.at(key).get<std::string>()))) {
      problems.push_back(where + "." + key + " is not one of Gradescope's visibilities");
    }
  };
  if (!doc.is_object()) {
    return {"not an object"};
  }
  if (!doc.contains("score") || !doc.at("score").is_number()) {
    problems.push_back("no numeric \"score\"");
  }
  if (doc.contains("output") && !doc.at("output").is_string()) {
    problems.push_back("\"output\" is not a string");
  }
  check_visibility(doc, "visibility", "top");
  check_visibility(doc, "stdout_visibility", "top");
  if (!doc.contains("tests") || !doc.at("tests").is_array()) {
    problems.push_back("no \"tests\" array");
    return problems;
  }
  double sum = 0;
  for (std::size_t i = 0; i < doc.at("tests").size(); ++i) {
    const json& test = doc.at("tests")[i];
    const std::string where = "tests[" + std::to_string(i) + "]";
    if (!test.is_object()) {
      problems.push_back(where + " is not an object");
      continue;
    }
    for (const char* key : {"score", "max_score"}) {
      if (!test.contains(key) || !test.at(key).is_number()) {
        problems.push_back(where + " has no numeric \"" + key + "\"");
      }
    }
    for (const char* key : {"name", "output"}) {
      if (!test.contains(key) || !test.at(key).is_string()) {
        problems.push_back(where + " has no string \"" + key + "\"");
      }
    }
    if (!test.contains("visibility")) {
      problems.push_back(where + " has no \"visibility\"");
    }
    check_visibility(test, "visibility", where);
    if (test.contains("status") && test.at("status") != "passed" && test.at("status") != "failed") {
      problems.push_back(where + ".status is neither \"passed\" nor \"failed\"");
    }
    if (test.contains("score") && test.at("score").is_number()) {
      sum += test.at("score").get<double>();
    }
  }
  if (doc.contains("score") && doc.at("score").is_number() &&
      doc.at("score").get<double>() != sum) {
    problems.push_back("score " + doc.at("score").dump() + " is not the sum of the tests' scores " +
                       std::to_string(sum));
  }
  return problems;
}

TEST(GradescopeJson, FollowsGradescopesFormat) {
  const json doc = json::parse(gradescope_json(sample_report()));
  const Lines problems = gradescope_problems(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems) << "\n" << doc.dump(2);
  EXPECT_EQ(doc.at("score"), 25);
  ASSERT_EQ(doc.at("tests").size(), 5u);
}

TEST(GradescopeJson, TheFormatCheckCatchesWhatItShould) {
  // The check above is only as good as this: each broken document is caught.
  const json good = json::parse(gradescope_json(sample_report()));
  ASSERT_TRUE(gradescope_problems(good).empty());
  std::vector<json> broken(7, good);
  broken[0].erase("score");
  broken[1]["score"] = 26;
  broken[2]["tests"][0]["visibility"] = "students";
  broken[3]["tests"][1].erase("max_score");
  broken[4]["tests"][2]["name"] = 3;
  broken[5]["tests"][3]["score"] = "15";
  broken[6]["tests"][0]["status"] = "ok";
  for (std::size_t i = 0; i < broken.size(); ++i) {
    EXPECT_FALSE(gradescope_problems(broken[i]).empty()) << "broken document " << i;
  }
}

TEST(GradescopeJson, EachTestHasItsScoreVisibilityAndOutput) {
  const json doc = json::parse(gradescope_json(sample_report()));
  const json& tests = doc.at("tests");
  const struct {
    const char* name;
    int score;
    int max_score;
    const char* visibility;
    const char* status;
  } expected[] = {
      {"lab01 Lab01Summary.Count", 5, 5, "visible", "passed"},
      {"lab01 Lab01Summary.Median", 0, 10, "visible", "failed"},
      {"lab01 Lab01Hidden.Big", 20, 20, "after_published", "passed"},
      {"lab01 Lab01Hidden.Slow", 0, 15, "after_published", "failed"},
      {"lab02 Lab02.Copy", 0, 50, "visible", "failed"},
  };
  ASSERT_EQ(tests.size(), std::size(expected));
  for (std::size_t i = 0; i < tests.size(); ++i) {
    EXPECT_EQ(tests[i].at("name"), expected[i].name);
    EXPECT_EQ(tests[i].at("score"), expected[i].score) << expected[i].name;
    EXPECT_EQ(tests[i].at("max_score"), expected[i].max_score) << expected[i].name;
    EXPECT_EQ(tests[i].at("visibility"), expected[i].visibility) << expected[i].name;
    EXPECT_EQ(tests[i].at("status"), expected[i].status) << expected[i].name;
  }
  const std::string median = tests[1].at("output").get<std::string>();
  EXPECT_TRUE(contains(median, "failed: Expected equality of these values:")) << median;
  EXPECT_TRUE(contains(median, "lab01_test.cpp:73\n")) << median;
  const std::string slow = tests[3].at("output").get<std::string>();
  EXPECT_TRUE(contains(slow, "timed out: killed after 120 s")) << slow;
}

TEST(GradescopeJson, AFailedTestWorthNothingIsStillFailed) {
  GradeReport report = sample_report();
  report.labs[0].tests[1] =
      grade_test({"S.Zero", 0, false, {"f"}, "what it checks"}, TestOutcome::failed,
                 Verdict{Disposition::crashed, "killed by SIGSEGV", {}});
  const json doc = json::parse(gradescope_json(report));
  EXPECT_EQ(doc.at("tests")[1].at("status"), "failed");
}

TEST(GradescopeJson, TheOutputSummarizesTheGrade) {
  GradeReport report = sample_report();
  report.integrity.changed = {"framework/core/x.cpp"};
  const std::string output = json::parse(gradescope_json(report)).at("output").get<std::string>();
  EXPECT_TRUE(contains(output, "25/100")) << output;
  EXPECT_TRUE(contains(output, "lab01 Benchmarking a kernel correctly: 25/50")) << output;
  EXPECT_TRUE(contains(output, "did not compile")) << output;
  EXPECT_TRUE(contains(output, "blockIdxx")) << output;
  EXPECT_TRUE(contains(output, "compiler warnings (no points lost):\n    benchmark.cu:31:10"))
      << output;
  EXPECT_TRUE(contains(output, "integrity failure")) << output;
  EXPECT_TRUE(contains(output, "problem: lab03: no runner")) << output;
  EXPECT_TRUE(contains(output, "ignored: tests/labs/lab01_benchmarking/lab01_test.cpp")) << output;
}

TEST(GradescopeJson, InvalidUtf8AndControlCharactersGiveValidJson) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict.detail = "bad \xff\xc3 bytes \x01\x1b[0m";
  report.labs[0].tests[1].verdict.excerpt = {"\xc0\xaf overlong \xed\xa0\x80 surrogate"};
  report.problems = {"\xfe problem"};
  json doc;
  ASSERT_NO_THROW(doc = json::parse(gradescope_json(report)));
  EXPECT_TRUE(gradescope_problems(doc).empty()) << joined(gradescope_problems(doc));
  const std::string output = doc.at("tests")[1].at("output").get<std::string>();
  EXPECT_TRUE(contains(output, "bad ?? bytes ??[0m")) << output;
  EXPECT_FALSE(contains(output, "\x1b")) << output;
}

// ---- JUnit XML, read back with a strict reader -----------------------------------------------

// An element of an XML document: attributes decoded, character data (text and CDATA) joined.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;

  [[nodiscard]] const std::string& attribute(const std::string& key) const {
    const auto found = attributes.find(key);
    if (found == attributes.end()) {
      throw std::runtime_error("<" + name + "> has no attribute " + key);
    }
    return found->second;
  }
};

// The code point of the UTF-8 sequence at in[i], advancing i; throws on malformed UTF-8
// (overlong forms, surrogates and values past U+10FFFF included).
char32_t next_code_point(std::string_view in, std::size_t& i) {
  const auto byte = [&](std::size_t k) -> unsigned {
    if (k >= in.size()) {
      throw std::runtime_error("XML: truncated UTF-8 at byte " + std::to_string(i));
    }
    return static_cast<unsigned char>(in[k]);
  };
  const unsigned lead = byte(i);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead < 0x80) {
    length = 1;
    code = lead;
  } else if ((lead & 0xe0) == 0xc0) {
    length = 2;
    code = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
    code = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
    code = lead & 0x07;
  } else {
    throw std::runtime_error("XML: invalid UTF-8 lead byte at byte " + std::to_string(i));
  }
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned next = byte(i + k);
    if ((next & 0xc0) != 0x80) {
      throw std::runtime_error("XML: invalid UTF-8 at byte " + std::to_string(i));
    }
    code = (code << 6) | (next & 0x3f);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
    throw std::runtime_error("XML: invalid UTF-8 sequence at byte " + std::to_string(i));
  }
  i += length;
  return code;
}

// XML 1.0 "Char".
bool is_xml_char(char32_t c) {
  return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
         (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// A reader of well-formed XML 1.0 documents without a DTD: an optional XML declaration,
// elements, attributes, character and entity references, CDATA and comments. Anything else,
// or a document that is not well-formed, throws std::runtime_error.
class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : in_(text) {}

  XmlElement document() {
    for (std::size_t i = 0; i < in_.size();) {
      const std::size_t at = i;
      if (!is_xml_char(next_code_point(in_, i))) {
        pos_ = at;
        fail("a character XML does not allow");
      }
    }
    if (at("<?xml")) {
      const std::size_t end = in_.find("?>");
      if (end == std::string_view::npos) {
        fail("unterminated XML declaration");
      }
      pos_ = end + 2;
    }
    skip_space();
    XmlElement root = element();
    skip_space();
    if (pos_ != in_.size()) {
      fail("content after the root element");
    }
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML, byte " + std::to_string(pos_) + ": " + what);
  }
  [[nodiscard]] bool at(std::string_view s) const { return in_.substr(pos_).starts_with(s); }
  void expect(std::string_view s) {
    if (!at(s)) {
      fail("expected \"" + std::string(s) + "\"");
    }
    pos_ += s.size();
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_space() {
    while (pos_ < in_.size() && is_space(in_[pos_])) {
      ++pos_;
    }
  }
  std::string name() {
    const std::size_t begin = pos_;
    while (pos_ < in_.size() &&
           (std::isalnum(static_cast<unsigned char>(in_[pos_])) != 0 ||
            std::string_view("_-.:").find(in_[pos_]) != std::string_view::npos)) {
      ++pos_;
    }
    if (pos_ == begin || std::isdigit(static_cast<unsigned char>(in_[begin])) != 0) {
      fail("expected a name");
    }
    return std::string(in_.substr(begin, pos_ - begin));
  }
  void reference(std::string& out) {
    expect("&");
    const std::size_t semi = in_.find(';', pos_);
    if (semi == std::string_view::npos) {
      fail("unterminated reference");
    }
    const std::string_view ref = in_.substr(pos_, semi - pos_);
    if (ref == "amp") {
      out += '&';
    } else if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (ref.starts_with('#')) {
      const bool hex = ref.starts_with("#x");
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      const std::string_view allowed = hex ? "0123456789abcdefABCDEF" : "0123456789";
      if (digits.empty() || digits.size() > 8 ||
          digits.find_first_not_of(allowed) != std::string_view::npos) {
        fail("bad character reference");
      }
      const auto code =
          static_cast<char32_t>(std::stoul(std::string(digits), nullptr, hex ? 16 : 10));
      if (!is_xml_char(code)) {
        fail("a character reference to a character XML does not allow");
      }
      append_utf8(out, code);
    } else {
      fail("unknown entity &" + std::string(ref) + ";");
    }
    pos_ = semi + 1;
  }
  std::string attribute_value() {
    expect("\"");
    std::string value;
    while (true) {
      if (pos_ >= in_.size()) {
        fail("unterminated attribute value");
      }
      const char c = in_[pos_];
      if (c == '"') {
        ++pos_;
        return value;
      }
      if (c == '<') {
        fail("'<' in an attribute value");
      }
      if (c == '&') {
        reference(value);
        continue;
      }
      value += is_space(c) ? ' ' : c;  // attribute-value normalization
      ++pos_;
    }
  }
  XmlElement element() {
    expect("<");
    XmlElement e;
    e.name = name();
    while (true) {
      const std::size_t before = pos_;
      skip_space();
      if (at("/>")) {
        pos_ += 2;
        return e;
      }
      if (at(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) {
        fail("expected white space before an attribute");
      }
      std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      if (!e.attributes.emplace(key, attribute_value()).second) {
        fail("attribute " + key + " given twice");
      }
    }
    while (true) {
      if (pos_ >= in_.size()) {
        fail("unterminated element <" + e.name + ">");
      }
      if (at("</")) {
        pos_ += 2;
        if (name() != e.name) {
          fail("end tag does not match <" + e.name + ">");
        }
        skip_space();
        expect(">");
        return e;
      }
      if (at("<![CDATA[")) {
        const std::size_t end = in_.find("]]>", pos_);
        if (end == std::string_view::npos) {
          fail("unterminated CDATA section");
        }
        e.text += in_.substr(pos_ + 9, end - pos_ - 9);
        pos_ = end + 3;
      } else if (at("<!--")) {
        const std::size_t end = in_.find("-->", pos_);
        if (end == std::string_view::npos) {
          fail("unterminated comment");
        }
        pos_ = end + 3;
      } else if (at("<")) {
        e.children.push_back(element());
      } else if (at("&")) {
        reference(e.text);
      } else if (at("]]>")) {
        fail("\"]]>\" in text");
      } else {
        e.text += in_[pos_++];
      }
    }
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

XmlElement read_xml(std::string_view text) {
  return XmlReader(text).document();
}

TEST(XmlReader, RejectsDocumentsThatAreNotWellFormed) {
  // The reader below is only as good as this: each broken document is refused.
  for (const char* text : {
           "",
           "<a>",
           "<a></b>",
           "<a><b></a></b>",
           "<a x=\"1\" x=\"2\"/>",
           "<a x=\"<\"/>",
           "<a x=\"&unknown;\"/>",
           "<a x=\"&#0;\"/>",
           "<a>&</a>",
           "<a>\x01</a>",
           "<a>\xff</a>",
           "<a>\xc0\xaf</a>",
           "<a>\xed\xa0\x80</a>",
           "<a>\xef\xbf\xbf</a>",
           "<a/><b/>",
           "<a x=1/>",
       }) {
    EXPECT_THROW((void)read_xml(text), std::runtime_error) << text;
  }
  const XmlElement a = read_xml(
      "<?xml version=\"1.0\"?>\n<a x=\"&lt;&#10;&#x41;\">t<b/>"
      "<![CDATA[<raw>]]>\xc3\xa9</a>\n");
  EXPECT_EQ(a.attribute("x"), "<\nA");
  EXPECT_EQ(a.text, "t<raw>\xc3\xa9");
  ASSERT_EQ(a.children.size(), 1u);
  EXPECT_EQ(a.children[0].name, "b");
}

int int_attribute(const XmlElement& e, const std::string& key) {
  return std::stoi(e.attribute(key));
}

TEST(JunitXml, IsWellFormedWithTheRightCounts) {
  const std::string text = junit_xml(sample_report());
  XmlElement root;
  ASSERT_NO_THROW(root = read_xml(text)) << text;
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(int_attribute(root, "tests"), 5);
  EXPECT_EQ(int_attribute(root, "failures"), 3);
  EXPECT_EQ(int_attribute(root, "skipped"), 0);
  ASSERT_EQ(root.children.size(), 2u);

  const XmlElement& lab01 = root.children[0];
  EXPECT_EQ(lab01.name, "testsuite");
  EXPECT_EQ(lab01.attribute("name"), "lab01");
  EXPECT_EQ(int_attribute(lab01, "tests"), 4);
  EXPECT_EQ(int_attribute(lab01, "failures"), 2);
  ASSERT_EQ(lab01.children.size(), 4u);
  const XmlElement& count = lab01.children[0];
  EXPECT_EQ(count.name, "testcase");
  EXPECT_EQ(count.attribute("classname"), "lab01");
  EXPECT_EQ(count.attribute("name"), "Lab01Summary.Count");
  EXPECT_TRUE(count.children.empty()) << "a pass has no <failure> or <skipped>";
  const XmlElement& median = lab01.children[1];
  ASSERT_EQ(median.children.size(), 1u);
  EXPECT_EQ(median.children[0].name, "failure");
  EXPECT_EQ(median.children[0].attribute("type"), "failed");
  EXPECT_EQ(median.children[0].attribute("message"),
            "failed: Expected equality of these values:\nlab01_test.cpp:73\n"
            "Expected equality of these values:\n  median(x)\n");
  ASSERT_EQ(lab01.children[3].children.size(), 1u);
  EXPECT_EQ(lab01.children[3].children[0].attribute("type"), "timed_out");

  const XmlElement& lab02 = root.children[1];
  EXPECT_EQ(int_attribute(lab02, "tests"), 1);
  EXPECT_EQ(int_attribute(lab02, "failures"), 1);
  ASSERT_EQ(lab02.children.size(), 1u);
  ASSERT_EQ(lab02.children[0].children.size(), 1u);
  EXPECT_EQ(lab02.children[0].children[0].attribute("type"), "build_failed");
}

TEST(JunitXml, SkippedAndNotGradedAreSkipsNotFailures) {
  GradeReport report = sample_report();
  report.labs[0].tests[1].verdict = {Disposition::skipped, "needs 2 GiB", {}};
  report.labs[0].tests[3].verdict = {Disposition::not_graded, "needs a CUDA device: none", {}};
  const XmlElement root = read_xml(junit_xml(report));
  EXPECT_EQ(int_attribute(root, "tests"), 5);
  EXPECT_EQ(int_attribute(root, "failures"), 1);
  EXPECT_EQ(int_attribute(root, "skipped"), 2);
  const XmlElement& lab01 = root.children.at(0);
  EXPECT_EQ(int_attribute(lab01, "failures"), 0);
  EXPECT_EQ(int_attribute(lab01, "skipped"), 2);
  ASSERT_EQ(lab01.children.at(1).children.size(), 1u);
  EXPECT_EQ(lab01.children[1].children[0].name, "skipped");
  EXPECT_EQ(lab01.children[1].children[0].attribute("message"), "skipped: needs 2 GiB\n");
  EXPECT_EQ(lab01.children.at(3).children.at(0).attribute("message"),
            "not graded: needs a CUDA device: none\n");
}

TEST(JunitXml, EscapesMarkupControlCharactersAndInvalidUtf8) {
  GradeReport report = sample_report();
  TestGrade& test = report.labs[0].tests[1];
  test.name = "Suite<float>.A&B \"q\"";
  test.verdict.detail = "a<b && c>d \"quoted\" 'single' ]]> \x01\x1b[31m\r";
  test.verdict.excerpt = {"bad \xff byte, cut \xc3", "overlong \xc0\xaf surrogate \xed\xa0\x80",
                          "not a character \xef\xbf\xbf, past U+10FFFF \xf4\x90\x80\x80",
                          "kept: \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"};
  report.labs[0].lab = "lab<01>&";
  const std::string text = junit_xml(report);
  XmlElement root;
  ASSERT_NO_THROW(root = read_xml(text)) << text;
  const XmlElement& lab01 = root.children.at(0);
  EXPECT_EQ(lab01.attribute("name"), "lab<01>&");
  const XmlElement& tc = lab01.children.at(1);
  EXPECT_EQ(tc.attribute("name"), "Suite<float>.A&B \"q\"");
  EXPECT_EQ(tc.attribute("classname"), "lab<01>&");
  const std::string& message = tc.children.at(0).attribute("message");
  EXPECT_EQ(message,
            "failed: a<b && c>d \"quoted\" 'single' ]]> ??[31m?\n"
            "bad ? byte, cut ?\n"
            "overlong ?? surrogate ???\n"
            "not a character ???, past U+10FFFF ????\n"
            "kept: \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\n");
}

TEST(JunitXml, AnEmptyReportIsWellFormed) {
  const XmlElement root = read_xml(junit_xml(GradeReport{}));
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(int_attribute(root, "tests"), 0);
  EXPECT_TRUE(root.children.empty());
}

}  // namespace
}  // namespace gpulab
