// The optimization levels panel's views (views.hpp): plain data derived from results files, which
// nothing here trusts beyond what the loader checked (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <stdexcept>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

namespace {

// A level's number (param level, >= 0); empty when it has none or it is not one.
std::optional<int> level_of(const Result& result) {
  const std::string* text = param(result, "level");
  if (text == nullptr) {
    return std::nullopt;
  }
  const std::optional<int> level = parse_int(*text);
  return level && *level >= 0 ? level : std::nullopt;
}

// "L3 flash", or "L3" without a level_name.
std::string level_label(const Result& result, int level) {
  std::string label = "L" + std::to_string(level);
  if (const std::string* name = param(result, "level_name"); name != nullptr && !name->empty()) {
    label += " " + *name;
  }
  return label;
}

LevelRow level_row(const Result& r, int level) {
  LevelRow row;
  row.level = level;
  row.name = level_label(r, level);
  row.time_ms = time_ms(r, Provenance::measured);
  if (const std::optional<double> memory = metric_value(r, "memory_bytes", Provenance::measured);
      memory && *memory > 0) {
    row.memory_bytes = memory;
  }
  for (const Provenance provenance :
       {Provenance::counted, Provenance::measured, Provenance::modeled}) {
    if (const std::optional<double> dram = metric_value(r, "dram_bytes", provenance);
        dram && *dram >= 0) {
      row.dram_bytes = dram;
      row.dram_provenance = provenance;
      break;
    }
  }
  if (const std::string* bound = param(r, "bound")) {
    row.bound = *bound;
  }
  if (const std::string* bound = param(r, "model_bound")) {
    row.model_bound = *bound;
  }
  if (const std::string* kernel = param(r, "longest_kernel")) {
    row.longest_kernel = *kernel;
  }
  return row;
}

// The memory of one level at one length: its memory_bytes (> 0), computed from the shape (modeled)
// when there is such a figure, else measured; and whether it was measured.
struct PointMemory {
  double bytes = 0;
  bool measured = false;
};
std::optional<PointMemory> memory_of(const Result& r) {
  for (const Provenance provenance : {Provenance::modeled, Provenance::measured}) {
    if (const std::optional<double> bytes = metric_value(r, "memory_bytes", provenance);
        bytes && *bytes > 0) {
      return PointMemory{*bytes, provenance == Provenance::measured};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<LevelsView> levels_views(const ResultsFile& file) {
  // A view per shape, in order of first appearance. A level result's shape is its params but
  // level, level_name and what was found of the level (its bounds, its longest kernel); a memory
  // result belongs to every view whose shape equals its params but level, level_name and seq_len
  // once seq_len is taken out too.
  struct Entry {
    std::map<std::string, std::string> shape;   // empty for a view of memory results only
    std::map<std::string, std::string> family;  // shape without seq_len
    std::vector<std::pair<int, const Result*>> levels;
  };
  struct Memory {
    int level;
    const Result* result;
    std::map<std::string, std::string> family;  // its params but level, level_name, seq_len
  };
  std::vector<Entry> entries;
  std::vector<Memory> memory;
  for (const Result& r : file.results) {
    const std::optional<int> level = level_of(r);
    if (!level) {
      continue;
    }
    if (r.name == result_kind::attention_level) {
      std::map<std::string, std::string> shape =
          params_without(r, {"level", "level_name", "bound", "model_bound", "longest_kernel"});
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const Entry& e) { return e.shape == shape; });
      if (it == entries.end()) {
        std::map<std::string, std::string> family = shape;
        family.erase("seq_len");
        entries.push_back({std::move(shape), std::move(family), {}});
        it = std::prev(entries.end());
      }
      it->levels.emplace_back(*level, &r);
    } else if (r.name == result_kind::attention_level_memory) {
      memory.push_back(
          {*level, &r, params_without(r, {"level", "level_name", "seq_len", "bound"})});
    }
  }
  // Memory families without a level result of their shape get a view of their own.
  for (const Memory& m : memory) {
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.family == m.family; })) {
      entries.push_back({{}, m.family, {}});
    }
  }

  const bool cpu_times = host_clock_times(file);
  std::vector<LevelsView> views;
  for (const Entry& entry : entries) {
    LevelsView view;
    view.shape = join_params(entry.shape.empty() ? entry.family : entry.shape);
    if (const auto it = entry.shape.find("seq_len"); it != entry.shape.end()) {
      view.seq_len = parse_number(it->second);
    }
    view.cpu_times = cpu_times;
    for (const auto& [level, r] : entry.levels) {
      const auto at =
          std::lower_bound(view.rows.begin(), view.rows.end(), level,
                           [](const LevelRow& row, int value) { return row.level < value; });
      if (at == view.rows.end() || at->level != level) {  // a level twice: the first counts
        view.rows.insert(at, level_row(*r, level));
      }
    }
    const auto baseline = std::find_if(view.rows.begin(), view.rows.end(),
                                       [](const LevelRow& row) { return row.level == 0; });
    for (std::size_t i = 0; i < view.rows.size(); ++i) {
      LevelRow& row = view.rows[i];
      if (row.time_ms && baseline != view.rows.end() && baseline->time_ms) {
        row.speedup = *baseline->time_ms / *row.time_ms;
      }
      if (!cpu_times && row.time_ms &&
          (!view.fastest || *row.time_ms < *view.rows[*view.fastest].time_ms)) {
        view.fastest = i;
      }
    }

    for (const auto& [level, r, family] : memory) {
      if (family != entry.family) {
        continue;
      }
      const std::string* seq_text = param(*r, "seq_len");
      const std::optional<double> seq_len =
          seq_text != nullptr ? parse_number(*seq_text) : std::nullopt;
      const std::optional<PointMemory> point = memory_of(*r);
      if (!seq_len || !(*seq_len > 0) || !point) {
        continue;
      }
      auto curve =
          std::lower_bound(view.memory.begin(), view.memory.end(), level,
                           [](const LevelMemoryCurve& c, int value) { return c.level < value; });
      if (curve == view.memory.end() || curve->level != level) {
        curve = view.memory.insert(
            curve, LevelMemoryCurve{level, level_label(*r, level), {}, {}, {}, true});
      }
      const auto at = std::lower_bound(curve->seq_len.begin(), curve->seq_len.end(), *seq_len);
      if (at != curve->seq_len.end() && *at == *seq_len) {
        continue;  // a length twice: the first counts
      }
      const auto index = at - curve->seq_len.begin();
      curve->measured = curve->measured && point->measured;
      curve->seq_len.insert(at, *seq_len);
      curve->bytes.insert(curve->bytes.begin() + index, point->bytes);
    }
    for (LevelMemoryCurve& curve : view.memory) {
      if (curve.seq_len.size() >= 2) {
        try {
          curve.exponent = growth_exponent(curve.seq_len, curve.bytes);
        } catch (const std::invalid_argument&) {
          // lengths too close to tell apart in a double (a hand-made file): no exponent
        }
      }
    }
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace gpulab::viewer
