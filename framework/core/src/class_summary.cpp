// Class summary files (class_summary.hpp).
#include "gpulab/core/class_summary.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>

#include "gpulab/core/files.hpp"
#include "results_errors.hpp"
#include "text.hpp"

namespace gpulab {
namespace {

using detail::describe;
using nlohmann::json;

constexpr std::uint64_t kMaxCount = 1ULL << 53;  // every whole number up to it is exact

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    detail::fail(source_, where, what);
  }

  const json& member(const json& object, const std::string& where, const char* key,
                     json::value_t type, const char* what) const {
    const auto it = object.find(key);
    if (it == object.end() || it->type() != type) {
      fail(where + "." + key, std::string("expected ") + what + ", found " +
                                  (it == object.end() ? std::string("nothing") : describe(*it)));
    }
    return *it;
  }

  std::size_t count(const json& value, const std::string& where) const {
    const bool whole =
        value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
    if (!whole || value.get<std::uint64_t>() > kMaxCount) {
      fail(where, "expected a whole number from 0 to 2^53, found " + describe(value));
    }
    return static_cast<std::size_t>(value.get<std::uint64_t>());
  }

  // A lab id or test name: printable UTF-8 (no control characters), 1 to kMaxClassName bytes.
  std::string name(const json& value, const std::string& where) const {
    const bool ok = value.is_string() && !value.get_ref<const std::string&>().empty() &&
                    value.get_ref<const std::string&>().size() <= kMaxClassName &&
                    detail::is_valid_utf8(value.get_ref<const std::string&>()) &&
                    std::none_of(value.get_ref<const std::string&>().begin(),
                                 value.get_ref<const std::string&>().end(), [](char c) {
                                   return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                                 });
    if (!ok) {
      fail(where, "expected a name (UTF-8 without control characters, 1 to " +
                      std::to_string(kMaxClassName) + " bytes), found " + describe(value));
    }
    return value.get<std::string>();
  }

  ClassSummary summary(const json& root) const {
    if (!root.is_object()) {
      fail("(document)", "expected a class summary object, found " + describe(root));
    }
    ClassSummary s;
    // The context is checked as a results file's is.
    const auto context = root.find("context");
    s.context = results_from_json({{"context", context == root.end() ? json() : *context},
                                   {"results", json::array()}},
                                  source_)
                    .context;
    const json& section =
        member(root, "(document)", "class_summary", json::value_t::object, "an object");
    const std::string at = "class_summary";
    const auto number = [&](const char* key) {
      const auto it = section.find(key);
      if (it == section.end()) {
        fail(at + "." + key, "expected a whole number, found nothing");
      }
      return count(*it, at + "." + key);
    };
    s.students = number("students");
    s.graded = number("graded");
    if (s.graded > s.students) {
      fail(at + ".graded",
           std::to_string(s.graded) + " graded of " + std::to_string(s.students) + " students");
    }
    const json& labs = member(section, at, "labs", json::value_t::array, "an array of labs");
    if (labs.size() > kMaxClassLabs) {
      fail(at + ".labs", "expected at most " + std::to_string(kMaxClassLabs) + " labs, found " +
                             std::to_string(labs.size()));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < labs.size(); ++i) {
      const std::string where = at + ".labs[" + std::to_string(i) + "]";
      if (!labs[i].is_object()) {
        fail(where, "expected a lab object, found " + describe(labs[i]));
      }
      ClassLab lab{
          name(member(labs[i], where, "lab", json::value_t::string, "a lab id"), where + ".lab"),
          {}};
      if (!seen.insert(lab.lab).second) {
        fail(where + ".lab", "the lab " + detail::quote_text(lab.lab) + " a second time");
      }
      const json& bins =
          member(labs[i], where, "histogram", json::value_t::array, "an array of 10 counts");
      if (bins.size() != lab.histogram.size()) {
        fail(where + ".histogram", "expected 10 counts, found " + std::to_string(bins.size()));
      }
      std::size_t total = 0;
      for (std::size_t b = 0; b < bins.size(); ++b) {
        lab.histogram[b] = count(bins[b], where + ".histogram[" + std::to_string(b) + "]");
        total += lab.histogram[b];
      }
      if (total != s.graded) {
        fail(where + ".histogram", "counts " + std::to_string(total) + " students, but " +
                                       std::to_string(s.graded) + " were graded");
      }
      s.labs.push_back(std::move(lab));
    }
    const json& failed =
        member(section, at, "failed_most", json::value_t::array, "an array of tests");
    if (failed.size() > kMaxClassFailures) {
      fail(at + ".failed_most", "expected at most " + std::to_string(kMaxClassFailures) +
                                    " tests, found " + std::to_string(failed.size()));
    }
    for (std::size_t i = 0; i < failed.size(); ++i) {
      const std::string where = at + ".failed_most[" + std::to_string(i) + "]";
      if (!failed[i].is_object()) {
        fail(where, "expected a test object, found " + describe(failed[i]));
      }
      ClassFailure f;
      f.test = name(member(failed[i], where, "test", json::value_t::string, "a test name"),
                    where + ".test");
      const auto students = failed[i].find("students");
      if (students == failed[i].end()) {
        fail(where + ".students", "expected a whole number, found nothing");
      }
      f.students = count(*students, where + ".students");
      if (f.students > s.graded) {
        fail(where + ".students", std::to_string(f.students) + " students failed it, but " +
                                      std::to_string(s.graded) + " were graded");
      }
      s.failed_most.push_back(std::move(f));
    }
    return s;
  }

 private:
  std::string_view source_;
};

}  // namespace

bool is_class_summary(const nlohmann::json& document) {
  return document.is_object() && document.contains("class_summary");
}

nlohmann::json to_json(const ClassSummary& summary) {
  json root = to_json(ResultsFile{summary.context, {}});
  json labs = json::array();
  for (const ClassLab& lab : summary.labs) {
    labs.push_back({{"lab", lab.lab}, {"histogram", lab.histogram}});
  }
  json failed = json::array();
  for (const ClassFailure& f : summary.failed_most) {
    failed.push_back({{"test", f.test}, {"students", f.students}});
  }
  root["class_summary"] = {{"students", summary.students},
                           {"graded", summary.graded},
                           {"labs", std::move(labs)},
                           {"failed_most", std::move(failed)}};
  (void)Reader("class summary to write").summary(root);  // what is written can be read back
  return root;
}

ClassSummary class_summary_from_json(const nlohmann::json& document, std::string_view source) {
  return Reader(source).summary(document);
}

std::string class_score_band(std::size_t band) {
  return std::to_string(10 * band) + "-" + std::to_string(band >= 9 ? 100 : 10 * band + 9) + "%";
}

std::string render_class_summary(const ClassSummary& summary) {
  std::ostringstream text;
  text << "Class summary: " << summary.graded << " of " << summary.students
       << " submission(s) graded, " << summary.context.backend
       << " backend\n\nScores per lab (students per tenth of the points):\n";
  for (const ClassLab& lab : summary.labs) {
    text << "  " << lab.lab << " ";
    for (std::size_t b = 0; b < lab.histogram.size(); ++b) {
      text << " " << class_score_band(b) << ": " << lab.histogram[b];
    }
    text << "\n";
  }
  text << "\nTests failed most often:\n";
  for (const ClassFailure& f : summary.failed_most) {
    text << "  " << f.students << "  " << f.test << "\n";
  }
  return text.str();
}

void save_class_summary(const std::filesystem::path& path, const ClassSummary& summary) {
  const std::string text = to_json(summary).dump(2) + "\n";
  try {
    write_file_atomically(path, text, ParentFolders::must_exist);
  } catch (const std::runtime_error& error) {
    throw ResultsError(error.what());
  }
}

}  // namespace gpulab
