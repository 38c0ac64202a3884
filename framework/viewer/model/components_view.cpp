// The components panel's views (views.hpp): plain data derived from results files, which nothing
// here trusts beyond what the loader checked (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

std::vector<ComponentsView> components_views(const ResultsFile& file) {
  // Shapes in order of first appearance, each with its results in file order.
  std::vector<std::pair<std::map<std::string, std::string>, std::vector<const Result*>>> shapes;
  for (const Result& r : file.results) {
    if (r.name != result_kind::attention_component || param(r, "component") == nullptr) {
      continue;
    }
    std::map<std::string, std::string> shape =
        params_without(r, {"component", "bound", "model_bound"});
    auto it = std::find_if(shapes.begin(), shapes.end(),
                           [&](const auto& entry) { return entry.first == shape; });
    if (it == shapes.end()) {
      shapes.emplace_back(std::move(shape), std::vector<const Result*>{});
      it = std::prev(shapes.end());
    }
    it->second.push_back(&r);
  }

  std::vector<ComponentsView> views;
  for (const auto& [shape, results] : shapes) {
    ComponentsView view;
    view.shape = join_params(shape);
    view.cpu_times = host_clock_times(file);
    view.modeled_spec = modeled_spec_of(results, file);
    std::set<std::string> seen;
    for (const Result* r : results) {
      const std::string& name = *param(*r, "component");
      if (!seen.insert(name).second) {
        continue;  // a component twice in one shape: the first one counts
      }
      ComponentRow row;
      row.name = name;
      row.measured_ms = time_ms(*r, Provenance::measured);
      row.modeled_ms = time_ms(*r, Provenance::modeled);
      row.flop = flops_of(*r);
      row.bytes = work_value(*r, "bytes");
      if (const std::string* bound = param(*r, "bound")) {
        row.bound = *bound;
      }
      view.rows.push_back(std::move(row));
    }

    double measured_total = 0;
    double modeled_total = 0;
    for (const ComponentRow& row : view.rows) {
      measured_total += row.measured_ms.value_or(0);
      modeled_total += row.modeled_ms.value_or(0);
    }
    std::optional<std::size_t> slowest_measured;
    std::optional<std::size_t> slowest_modeled;
    for (std::size_t i = 0; i < view.rows.size(); ++i) {
      ComponentRow& row = view.rows[i];
      if (row.measured_ms) {
        if (measured_total > 0) {
          row.measured_share = *row.measured_ms / measured_total;
        }
        if (!slowest_measured || *row.measured_ms > *view.rows[*slowest_measured].measured_ms) {
          slowest_measured = i;
        }
      }
      if (row.modeled_ms) {
        if (modeled_total > 0) {
          row.modeled_share = *row.modeled_ms / modeled_total;
        }
        if (!slowest_modeled || *row.modeled_ms > *view.rows[*slowest_modeled].modeled_ms) {
          slowest_modeled = i;
        }
      }
    }
    // On the sim's host clock the measured ranking is the CPU's: the GPU's bottleneck is the
    // modeled one.
    const bool cpu_times = host_clock_times(file);
    if (slowest_measured && !(cpu_times && slowest_modeled)) {
      view.bottleneck = slowest_measured;
    } else if (slowest_modeled) {
      view.bottleneck = slowest_modeled;
      view.bottleneck_is_modeled = true;
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gpulab::viewer
