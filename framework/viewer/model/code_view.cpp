// The Source panel's views (views.hpp): a kernel's lines with what they cost and the rules'
// problems, from the counted_line and finding results of `gpulab profile --source --json`, which
// nothing here trusts beyond what the loader checked (view_support.hpp).
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include "gpulab/viewer/views.hpp"
#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

namespace {

// "transpose.cu:49" from params file and line; "the kernel" without a line.
std::string where_of(const Result& r) {
  const std::string* file = param(r, "file");
  const std::string* line = param(r, "line");
  if (file == nullptr || file->empty() || line == nullptr || parse_int(*line).value_or(0) <= 0) {
    return "the kernel";
  }
  return std::filesystem::path(*file).filename().string() + ":" + *line;
}

}  // namespace

std::vector<CodeView> code_views(const ResultsFile& file) {
  std::vector<CodeView> views;
  const auto view_of = [&](const std::string& kernel) -> CodeView& {
    const auto it = std::find_if(views.begin(), views.end(),
                                 [&](const CodeView& v) { return v.kernel == kernel; });
    if (it != views.end()) {
      return *it;
    }
    views.push_back(CodeView{kernel, {}, {}});
    return views.back();
  };
  for (const Result& r : file.results) {
    const std::string* kernel = param(r, "kernel");
    if (kernel == nullptr) {
      continue;
    }
    const auto counted = [&](const char* name) {
      return metric_value(r, name, Provenance::counted);
    };
    if (r.name == result_kind::counted_line) {
      const std::string* code = param(r, "code");
      view_of(*kernel).lines.push_back(
          CodeLine{where_of(r), code != nullptr ? *code : std::string(), counted("requests_count"),
                   counted("load_sectors_per_request_ratio"),
                   counted("store_sectors_per_request_ratio"), counted("excess_sectors_count"),
                   counted("shared_wavefronts_count"), counted("bank_conflicts_count"),
                   counted("l2_hit_rate_percent"), counted("dram_read_bytes"),
                   std::clamp(counted("l1_share_percent").value_or(0), 0.0, 100.0)});
    } else if (r.name == result_kind::finding) {
      const std::string* problem = param(r, "problem");
      const std::string* what = param(r, "what");
      const Metric* speedup = find_metric(r, "speedup_ratio", Provenance::modeled);
      view_of(*kernel).problems.push_back(
          CodeProblem{where_of(r), problem != nullptr ? *problem : std::string(),
                      what != nullptr ? *what : std::string(),
                      speedup != nullptr ? speedup->value : std::nullopt,
                      speedup != nullptr ? speedup->spec : std::string()});
    }
  }
  for (CodeView& v : views) {
    std::stable_sort(v.lines.begin(), v.lines.end(), [](const CodeLine& a, const CodeLine& b) {
      return a.l1_share_percent > b.l1_share_percent;
    });
    std::stable_sort(v.problems.begin(), v.problems.end(),
                     [](const CodeProblem& a, const CodeProblem& b) {
                       return a.speedup.value_or(0) > b.speedup.value_or(0);
                     });
  }
  return views;
}

}  // namespace gpulab::viewer
