#include "gpulab/core/fidelity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>

#include "gpulab/core/files.hpp"

namespace gpulab {

namespace {

constexpr int kCorpusVersion = 1;

using nlohmann::json;

[[noreturn]] void corpus_error(std::string_view source, const std::string& where,
                               const std::string& what) {
  throw std::invalid_argument(std::string(source) + ": " + where + ": " + what);
}

// A whole number of type T in `text` (digits only), or invalid_argument naming `what`.
template <class T>
T whole_number(std::string_view text, const std::string& what) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(what + " is \"" + std::string(text) + "\", not a whole number");
  }
  return value;
}

}  // namespace

FidelitySummary summarize_fidelity(const std::vector<FidelityPoint>& points) {
  if (points.empty()) {
    throw std::invalid_argument("fidelity: no kernels to compare");
  }
  FidelitySummary summary;
  double error_sum = 0;
  for (const FidelityPoint& p : points) {
    const bool usable = std::isfinite(p.measured_ms) && std::isfinite(p.modeled_ms) &&
                        p.measured_ms > 0 && p.modeled_ms > 0;
    if (!usable) {
      throw std::invalid_argument("fidelity: " + p.ladder + ": " + p.name +
                                  ": measured and modeled times must be finite and positive");
    }
    const double ratio = p.modeled_ms / p.measured_ms;
    error_sum += std::abs(ratio - 1);
    const double off = std::max(ratio, 1 / ratio);
    if (off > summary.worst_ratio || summary.worst.empty()) {
      summary.worst_ratio = off;
      summary.worst = p.ladder + ": " + p.name;
    }
  }
  summary.mean_abs_error = error_sum / static_cast<double>(points.size());
  // Every pair of one group whose measured times differ by more than kOrderTolerance: the model
  // must rank them as the measurements do (a modeled tie counts as a rank of its own).
  const auto orders = [&points](std::string FidelityPoint::*group) {
    std::vector<LadderOrder> out;
    for (const FidelityPoint& p : points) {
      const std::string& key = p.*group;
      if (!key.empty() && std::none_of(out.begin(), out.end(),
                                       [&](const LadderOrder& l) { return l.ladder == key; })) {
        out.push_back({key, true, {}});
      }
    }
    const auto sign = [](double x, double y) { return (x > y) - (x < y); };
    for (LadderOrder& order : out) {
      for (std::size_t i = 0; i < points.size() && order.kept; ++i) {
        for (std::size_t j = i + 1; j < points.size() && order.kept; ++j) {
          const FidelityPoint& a = points[i];
          const FidelityPoint& b = points[j];
          if (a.*group != order.ladder || b.*group != order.ladder ||
              std::max(a.measured_ms, b.measured_ms) <=
                  (1 + kOrderTolerance) * std::min(a.measured_ms, b.measured_ms)) {
            continue;
          }
          if (sign(a.measured_ms, b.measured_ms) != sign(a.modeled_ms, b.modeled_ms)) {
            // A sweep's points differ by their ladder (the block size), a ladder's by their name.
            const bool sweep = group == &FidelityPoint::sweep;
            order.kept = false;
            order.first_swap = (sweep ? a.ladder : a.name) + " and " + (sweep ? b.ladder : b.name);
          }
        }
      }
    }
    return out;
  };
  summary.ladders = orders(&FidelityPoint::ladder);
  summary.sweeps = orders(&FidelityPoint::sweep);
  // A sweep of one block size orders nothing.
  std::erase_if(summary.sweeps, [&points](const LadderOrder& sweep) {
    return std::count_if(points.begin(), points.end(),
                         [&](const FidelityPoint& p) { return p.sweep == sweep.ladder; }) < 2;
  });
  return summary;
}

json corpus_to_json(const std::vector<CorpusEntry>& entries) {
  json measurements = json::array();
  for (const CorpusEntry& e : entries) {
    json entry = {{"spec", e.spec},
                  {"op", e.op},
                  {"level", e.level},
                  {"size", e.size},
                  {"block_size", e.block_size},
                  {"measured_ms", e.measured_ms},
                  {"problem", e.problem},
                  {"source", e.source}};
    if (!e.stale.empty()) {
      entry["stale"] = e.stale;
    }
    measurements.push_back(std::move(entry));
  }
  return {{"corpus_version", kCorpusVersion}, {"measurements", std::move(measurements)}};
}

bool is_corpus(const json& json) noexcept {
  return json.is_object() && json.contains("corpus_version");
}

std::vector<CorpusEntry> corpus_from_json(const json& json, std::string_view source) {
  if (!is_corpus(json)) {
    corpus_error(source, "the document", "expected an object with \"corpus_version\"");
  }
  const nlohmann::json& version = json.at("corpus_version");
  if (!version.is_number_integer() || version.get<long long>() != kCorpusVersion) {
    corpus_error(source, "corpus_version",
                 "expected " + std::to_string(kCorpusVersion) + ", found " + version.dump());
  }
  for (const auto& [key, value] : json.items()) {
    if (key != "corpus_version" && key != "measurements") {
      corpus_error(source, key, "not a field of a corpus");
    }
  }
  if (!json.contains("measurements") || !json.at("measurements").is_array()) {
    corpus_error(source, "measurements", "expected an array");
  }
  std::vector<CorpusEntry> entries;
  const nlohmann::json& measurements = json.at("measurements");
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string where = "measurements[" + std::to_string(i) + "]";
    const nlohmann::json& m = measurements[i];
    if (!m.is_object()) {
      corpus_error(source, where, "expected an object");
    }
    static const std::set<std::string> known = {
        "spec", "op", "level", "size", "block_size", "problem", "source", "stale", "measured_ms"};
    for (const auto& [key, value] : m.items()) {
      if (known.count(key) == 0) {
        corpus_error(source, where + "." + key, "not a field of a measurement");
      }
    }
    const auto field = [&](const char* key) -> const nlohmann::json& {
      if (!m.contains(key)) {
        corpus_error(source, where + "." + key, "missing");
      }
      return m.at(key);
    };
    const auto text = [&](const char* key, bool required) {
      if (!required && !m.contains(key)) {
        return std::string();
      }
      const nlohmann::json& value = field(key);
      if (!value.is_string() || (required && value.get<std::string>().empty())) {
        corpus_error(source, where + "." + key, "expected a non-empty string");
      }
      return value.get<std::string>();
    };
    const auto whole = [&](const char* key, std::uint64_t max) {
      const nlohmann::json& value = field(key);
      // Parsed text gives non-negative whole numbers unsigned; a document built in memory from a
      // signed field, signed.
      const bool whole_number = value.is_number_unsigned() ||
                                (value.is_number_integer() && value.get<std::int64_t>() >= 0);
      if (!whole_number || value.get<std::uint64_t>() > max) {
        corpus_error(
            source, where + "." + key,
            "expected a whole number from 0 to " + std::to_string(max) + ", found " + value.dump());
      }
      return value.get<std::uint64_t>();
    };
    CorpusEntry e;
    e.spec = text("spec", true);
    e.op = text("op", true);
    e.level = static_cast<int>(whole("level", std::numeric_limits<int>::max()));
    e.size = static_cast<std::size_t>(whole("size", std::numeric_limits<std::size_t>::max()));
    if (e.size == 0) {
      corpus_error(source, where + ".size", "expected a positive size");
    }
    e.block_size = static_cast<unsigned>(whole("block_size", std::numeric_limits<unsigned>::max()));
    const nlohmann::json& ms = field("measured_ms");
    if (!ms.is_number() || !std::isfinite(ms.get<double>()) || ms.get<double>() <= 0) {
      corpus_error(source, where + ".measured_ms", "expected a finite positive time");
    }
    e.measured_ms = ms.get<double>();
    e.problem = text("problem", true);
    e.source = text("source", true);
    e.stale = text("stale", false);
    entries.push_back(std::move(e));
  }
  return entries;
}

void save_corpus(const std::filesystem::path& path, const std::vector<CorpusEntry>& entries) {
  write_file_atomically(path, corpus_to_json(entries).dump(2) + "\n");
}

std::vector<CorpusEntry> corpus_entries(const ResultsFile& results, std::string_view source) {
  if (results.context.backend != "cuda") {
    throw std::invalid_argument(std::string(source) + " was not measured on a GPU (backend " +
                                results.context.backend + ")");
  }
  if (results.context.spec.empty()) {
    throw std::invalid_argument(std::string(source) + " names no GPU spec");
  }
  std::string from(source);
  if (!results.context.git_revision.empty()) {
    from += " (revision " + results.context.git_revision + ")";
  }
  std::vector<CorpusEntry> entries;
  for (std::size_t i = 0; i < results.results.size(); ++i) {
    const Result& r = results.results[i];
    const auto time = std::find_if(r.metrics.begin(), r.metrics.end(), [](const Metric& m) {
      return m.name == "time_ms" && m.provenance == Provenance::measured && m.value;
    });
    if (r.name != result_kind::kernel_bench || time == r.metrics.end()) {
      continue;
    }
    const std::string where = std::string(source) + ": results[" + std::to_string(i) + "]";
    const auto param = [&](const char* key) {
      const auto found = r.params.find(key);
      if (found == r.params.end()) {
        throw std::invalid_argument(
            where + " has no parameter \"" + key + "\"" +
            (std::string_view(key) == "problem"
                 ? " (a file written before gpulab bench recorded each problem: add its entries "
                   "to the corpus by hand, with the problem read from the code at its revision)"
                 : ""));
      }
      return found->second;
    };
    CorpusEntry e;
    e.spec = results.context.spec;
    e.op = param("op");
    e.level = whole_number<int>(param("level"), where + "'s level");
    e.size = whole_number<std::size_t>(param("size"), where + "'s size");
    e.block_size = r.params.count("block_size") != 0
                       ? whole_number<unsigned>(param("block_size"), where + "'s block_size")
                       : 0;
    e.measured_ms = *time->value;
    e.problem = param("problem");
    e.source = from;
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<CorpusEntry> merge_corpus(std::vector<CorpusEntry> entries,
                                      const std::vector<CorpusEntry>& added) {
  for (const CorpusEntry& a : added) {
    const auto same = std::find_if(entries.begin(), entries.end(), [&](const CorpusEntry& e) {
      return e.spec == a.spec && e.op == a.op && e.level == a.level && e.size == a.size &&
             e.block_size == a.block_size;
    });
    if (same != entries.end()) {
      *same = a;
    } else {
      entries.push_back(a);
    }
  }
  return entries;
}

}  // namespace gpulab
