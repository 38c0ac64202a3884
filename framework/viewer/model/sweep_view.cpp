// The block-size sweep panel's views (views.hpp): plain data derived from results files, which
// nothing here trusts beyond what the loader checked (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

std::vector<SweepView> sweep_views(const ResultsFile& file) {
  struct Group {
    std::string kernel;
    std::map<std::string, std::string> problem;
    std::vector<const Result*> results;
  };
  std::vector<Group> groups;
  for (const Result& r : file.results) {
    const std::string* kernel = param(r, "kernel");
    if (r.name != result_kind::block_size_sweep || kernel == nullptr) {
      continue;
    }
    std::map<std::string, std::string> problem =
        params_without(r, {"kernel", "block_size", "limiter"});
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.kernel == *kernel && g.problem == problem;
    });
    if (it == groups.end()) {
      groups.push_back(Group{*kernel, std::move(problem), {}});
      it = std::prev(groups.end());
    }
    it->results.push_back(&r);
  }

  std::vector<SweepView> views;
  for (const Group& g : groups) {
    SweepView view;
    view.kernel = g.kernel;
    view.problem = join_params(g.problem);
    view.cpu_times = host_clock_times(file);
    view.modeled_spec = modeled_spec_of(g.results, file);
    std::set<int> seen;
    for (const Result* r : g.results) {
      const std::string* text = param(*r, "block_size");
      const std::optional<int> block = text != nullptr ? parse_int(*text) : std::nullopt;
      if (!block || *block <= 0 || !seen.insert(*block).second) {
        continue;  // not a block size, or one seen already (the first counts)
      }
      SweepPoint p;
      p.block_size = *block;
      p.measured_ms = time_ms(*r, Provenance::measured);
      p.modeled_ms = time_ms(*r, Provenance::modeled);
      p.occupancy_percent = metric_value(*r, "occupancy_percent", Provenance::modeled);
      if (!p.occupancy_percent) {
        p.occupancy_percent = metric_value(*r, "occupancy_percent", Provenance::measured);
      }
      if (const std::string* limiter = param(*r, "limiter")) {
        p.limiter = *limiter;
      }
      view.points.push_back(std::move(p));
    }
    if (view.points.empty()) {
      continue;  // nothing usable in this group
    }
    std::sort(view.points.begin(), view.points.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.block_size < b.block_size; });
    for (std::size_t i = 0; i < view.points.size(); ++i) {
      const std::optional<double>& t = view.points[i].measured_ms;
      if (t && (!view.fastest_measured || *t < *view.points[*view.fastest_measured].measured_ms)) {
        view.fastest_measured = i;
      }
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gpulab::viewer
