// How far the time model is from real GPUs: modeled times set beside measured ones for the same
// kernel, op, level, size and spec, summed up the way issue 37 states its goals.
//
//   error        |modeled / measured - 1|, per kernel; its mean over the kernels
//   worst ratio  max(modeled / measured, measured / modeled): how many times off the worst is
//   order        per ladder (the levels of one op at one size and block size), whether the model
//                ranks every pair of levels as the measurements do, where they differ by more than
//                kOrderTolerance (closer times are a tie within a GPU's run-to-run noise); the same
//                per sweep (one level at several block sizes), reported apart
//
// The corpus (docs/results/fidelity-corpus.json) holds every catalog level the project measured
// on a GPU, each with the problem it measured in words: `gpulab-sim-bench --fidelity` runs on sim
// only those whose problem and kernel are still the catalog's, and names the others.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/results.hpp"

namespace gpulab {

/// One kernel measured on a GPU and modeled for the same spec.
struct FidelityPoint {
  std::string ladder;  ///< the levels compared with each other, e.g. "transpose 8192"
  std::string name;    ///< the kernel within it, e.g. "level 2 (coalesced)"
  double measured_ms = 0;
  double modeled_ms = 0;
  /// The block sizes of one level compared with each other, e.g. "vector_add 67108864 level 1";
  /// empty when the point was measured at its op's own block size only.
  std::string sweep = {};
};

/// Measured times closer than this (relative) are not ranked: GPU runs of one kernel differ by a
/// few percent (the H200's histogram at six block sizes: 17.31 to 17.35 ms).
inline constexpr double kOrderTolerance = 0.05;

/// Whether one ladder keeps its measured order on the model.
struct LadderOrder {
  std::string ladder;
  bool kept = true;
  std::string first_swap;  ///< when not kept: the first pair the model ranks the other way
};

/// The summary of a set of points.
struct FidelitySummary {
  double mean_abs_error = 0;         ///< mean of |modeled / measured - 1|
  double worst_ratio = 1;            ///< max(modeled / measured, measured / modeled)
  std::string worst;                 ///< "ladder: name" of the worst point
  std::vector<LadderOrder> ladders;  ///< in order of first appearance
  std::vector<LadderOrder> sweeps;   ///< the same for sweeps (points with a sweep)
};

/// Summarizes `points`. Throws std::invalid_argument for none, or for a time that is not finite
/// and positive, naming the point.
[[nodiscard]] FidelitySummary summarize_fidelity(const std::vector<FidelityPoint>& points);

/// One catalog level's time measured on a GPU.
struct CorpusEntry {
  std::string spec;         ///< the GPU, as the spec database names it, e.g. "H200 SXM"
  std::string op;           ///< the catalog op, e.g. "transpose"
  int level = 0;            ///< the level's number
  std::size_t size = 0;     ///< the op's size (positive)
  unsigned block_size = 0;  ///< threads per block; 0 for the op's default or its levels' own
  double measured_ms = 0;   ///< the median time measured (finite, positive)
  /// The op's problem at that size as measured, in the catalog's words (OpProblem::describe);
  /// a run compares it with today's, so a problem that changed is never compared.
  std::string problem;
  std::string source;  ///< where the time comes from: the results file and its revision
  /// Why the kernel measured is no longer the catalog's (the level was rewritten since), or
  /// empty: a stale entry stays in the corpus, named, but is not compared.
  std::string stale;

  friend bool operator==(const CorpusEntry&, const CorpusEntry&) = default;
};

/// The corpus as JSON: {"corpus_version": 1, "measurements": [...]}.
[[nodiscard]] nlohmann::json corpus_to_json(const std::vector<CorpusEntry>& entries);
/// Reads a corpus from JSON; `source` prefixes errors. Throws std::invalid_argument naming the
/// entry and field for a missing or mistyped field, a field it does not know, an empty spec,
/// op, problem or source, a size of 0 or a time that is not finite and positive.
[[nodiscard]] std::vector<CorpusEntry> corpus_from_json(const nlohmann::json& json,
                                                        std::string_view source);
/// Whether a JSON document is a corpus (an object with "corpus_version") rather than a results
/// file.
[[nodiscard]] bool is_corpus(const nlohmann::json& json) noexcept;
/// Writes the corpus atomically, two-space indented.
void save_corpus(const std::filesystem::path& path, const std::vector<CorpusEntry>& entries);

/// The `gpulab bench` times of a results file measured on a GPU, as corpus entries whose source
/// is `source` and the file's revision. Throws std::invalid_argument for a file not measured on
/// the cuda backend, or for a kernel_bench result without its "problem" (written before
/// `gpulab bench` recorded it: such files enter the corpus by hand, their problem read from the
/// code at their revision).
[[nodiscard]] std::vector<CorpusEntry> corpus_entries(const ResultsFile& results,
                                                      std::string_view source);

/// `entries` with `added` merged in: an added entry replaces the one of the same spec, op,
/// level, size and block size (a new measurement of the same kernel); the others are appended.
[[nodiscard]] std::vector<CorpusEntry> merge_corpus(std::vector<CorpusEntry> entries,
                                                    const std::vector<CorpusEntry>& added);

}  // namespace gpulab
