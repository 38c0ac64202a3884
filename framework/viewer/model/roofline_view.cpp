// The roofline panel's view (views.hpp): plain data derived from results files, which nothing here
// trusts beyond what the loader checked (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <set>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

namespace {

// Labels of a source's attention components: the component, then the params that tell its shape
// from the source's other shapes at the precision ("Softmax (seq_len=4096)"); seq_len when the
// source has one shape.
class ComponentLabels {
 public:
  ComponentLabels(const ResultsFile& file, Precision precision) {
    std::vector<std::map<std::string, std::string>> shapes;
    for (const Result& r : file.results) {
      if (r.name == result_kind::attention_component && precision_of(r) == precision) {
        shapes.push_back(params_without(r, {"component", "bound", "model_bound", "precision"}));
      }
    }
    std::set<std::string> keys;
    for (const auto& shape : shapes) {
      for (const auto& entry : shape) {
        keys.insert(entry.first);
      }
    }
    for (const std::string& key : keys) {
      const auto value_in = [&](const std::map<std::string, std::string>& shape) {
        const auto it = shape.find(key);
        return it == shape.end() ? std::optional<std::string>() : it->second;
      };
      const std::optional<std::string> first = value_in(shapes.front());
      const bool varies = std::any_of(shapes.begin(), shapes.end(),
                                      [&](const auto& shape) { return value_in(shape) != first; });
      if (varies) {
        varying_.push_back(key);
      }
    }
    if (varying_.empty() && keys.count("seq_len") > 0) {
      varying_.push_back("seq_len");
    }
  }

  [[nodiscard]] std::string label(const Result& r) const {
    std::string text = *param(r, "component");
    std::string detail;
    for (const std::string& key : varying_) {
      if (const std::string* value = param(r, key)) {
        detail += (detail.empty() ? "" : ", ") + key + "=" + *value;
      }
    }
    return detail.empty() ? text : text + " (" + detail + ")";
  }

 private:
  std::vector<std::string> varying_;
};

// Why the roofline has no points, from what was left out.
std::string roofline_empty_reason(std::size_t sources, Precision precision,
                                  std::size_t sim_measured_dropped, std::size_t without_work,
                                  std::size_t without_time) {
  if (sources == 0) {
    return "no results: load a results file or run an experiment";
  }
  std::string reason =
      "no op at " + std::string(to_string(precision)) + " with FLOPs, bytes and a time";
  if (sim_measured_dropped > 0) {
    reason += "; " + std::to_string(sim_measured_dropped) +
              " measured time(s) of sim runs left out (CPU time of the simulation, not GPU time)";
  }
  if (without_work > 0) {
    reason += "; " + std::to_string(without_work) +
              " op(s) not placed: the file gives no FLOPs and bytes for them";
  }
  if (without_time > 0) {
    reason += "; " + std::to_string(without_time) + " op(s) have no positive time";
  }
  return reason;
}

}  // namespace

// The roofline of the GPU a file was measured on (spec_of), at the precision; `drawn` when the
// file names no known spec or that spec lacks the precision.
Roofline file_roof(const ResultsFile& file, const GpuSpec& spec, Precision precision,
                   const Roofline& drawn) {
  try {
    return make_roofline(spec_of(file, spec), precision);
  } catch (const std::exception&) {
    return drawn;
  }
}

RooflineView roofline_view(std::span<const Source> sources, const GpuSpec& spec,
                           Precision precision) {
  RooflineView view;
  try {
    view.roofline = make_roofline(spec, precision);
  } catch (const std::exception& e) {
    view.unavailable = e.what();
    view.empty_reason = view.unavailable;
    return view;
  }
  const Roofline& roof = *view.roofline;

  std::size_t sim_measured_dropped = 0;
  std::size_t without_work = 0;
  std::size_t without_time = 0;
  for (const Source& source : sources) {
    if (source.file == nullptr) {
      continue;
    }
    const ComponentLabels labels(*source.file, precision);
    for (const Result& r : source.file->results) {
      const bool is_component =
          r.name == result_kind::attention_component && param(r, "component") != nullptr;
      if ((!is_component && r.name != result_kind::op_cost) || precision_of(r) != precision) {
        continue;
      }
      const std::optional<double> flops = flops_of(r);
      const std::optional<double> bytes = work_value(r, "bytes");
      // FLOPs per byte must be a finite positive number to sit on a log-log roofline.
      // (work_value() never returns a negative amount; 0 bytes give an infinite intensity.)
      if (!flops || !bytes || !(*flops / *bytes > 0) || !std::isfinite(*flops / *bytes)) {
        ++without_work;
        continue;
      }
      const OpCost cost{*flops, *bytes};
      std::string label;
      if (is_component) {
        label = labels.label(r);
      } else {
        const std::string* op = param(r, "op");
        label = op != nullptr ? *op : r.name;
      }

      bool placed = false;
      // A measured point's % of roof is against the roofs of the GPU it ran on (the file's
      // spec), which may not be the spec drawn: an A100 run is not judged by H100 peaks.
      const auto place = [&](double time, Provenance kind, const Roofline& own) {
        RooflinePoint p;
        p.label = label;
        p.source = source.label;
        p.intensity_flop_per_byte = cost.intensity_flop_per_byte();
        p.achieved_flop_s = cost.flops / (time * 1e-3);
        p.kind = kind;
        p.kind_label =
            kind == Provenance::measured ? source.measured_label : std::string(to_string(kind));
        p.roof_flop_s = own.attainable_flop_s(p.intensity_flop_per_byte);
        p.percent_of_roof = p.roof_flop_s > 0 ? 100 * p.achieved_flop_s / p.roof_flop_s : 0;
        p.bound = own.bound(cost);
        if (std::isfinite(p.achieved_flop_s) && std::isfinite(p.percent_of_roof)) {
          view.points.push_back(std::move(p));
          placed = true;
        }
      };

      if (const std::optional<double> measured = time_ms(r, Provenance::measured)) {
        if (source.cpu_times) {
          ++sim_measured_dropped;
        } else {
          place(*measured, Provenance::measured, file_roof(*source.file, spec, precision, roof));
        }
      }
      if (const Metric* modeled = find_metric(r, "time_ms", Provenance::modeled);
          modeled != nullptr && *modeled->value > 0) {
        // A modeled time is a property of the spec it was modeled for: on another spec's roofs
        // the op is modeled again for that spec rather than drawn above or below its roof.
        place(names_spec(modeled->spec, spec) ? *modeled->value : roof.modeled_time_ms(cost),
              Provenance::modeled, roof);
      }
      if (!placed && !time_ms(r, Provenance::measured)) {
        ++without_time;
      }
    }
  }
  if (view.points.empty()) {
    view.empty_reason = roofline_empty_reason(sources.size(), precision, sim_measured_dropped,
                                              without_work, without_time);
  }
  return view;
}

}  // namespace gpulab::viewer
