// Submissions that share much of their code, for an instructor to read: never a grade. Each
// source is reduced to fingerprints of its token sequence (comments, whitespace and preprocessor
// lines dropped; identifiers, numbers and literals each one symbol, so renaming and reformatting
// change nothing; keywords and punctuation kept): the hashes of every run of kTokensPerGram tokens,
// winnowed (the smallest hash of each window of kWindow runs), as MOSS does. The starter code's
// fingerprints are left out, so the stub every student starts from makes no two submissions
// alike. Two files' similarity is the share of the smaller one's fingerprints the other has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {

inline constexpr std::size_t kTokensPerGram = 12;
inline constexpr std::size_t kWindow = 8;
/// Below this many fingerprints (after the starter code's are left out) a file is too small to
/// say anything about: its similarity is 0.
inline constexpr std::size_t kMinFingerprints = 10;

using Fingerprints = std::set<std::uint64_t>;

/// The winnowed fingerprints of C++ or CUDA C++ `source`.
[[nodiscard]] Fingerprints fingerprint(std::string_view source);

/// `fingerprints` without those of `starter`.
[[nodiscard]] Fingerprints without(const Fingerprints& fingerprints, const Fingerprints& starter);

/// The share of the smaller set's fingerprints the other has (0 to 1); 0 when either has fewer
/// than kMinFingerprints.
[[nodiscard]] double similarity(const Fingerprints& a, const Fingerprints& b);

/// One file of a class, or a reference (a framework kernel, the solution).
struct SimilaritySource {
  std::string name;  ///< the student's name, or "kernels/attention/flash.cu"
  Fingerprints fingerprints;
  bool reference = false;  ///< compared with the students' files, not with other references
};

/// Two sources that share much of their code.
struct SimilarPair {
  std::string a;
  std::string b;
  double similarity = 0;
  std::size_t shared = 0;   ///< fingerprints in both
  std::size_t smaller = 0;  ///< fingerprints of the smaller source
};

/// Every pair of `sources` (two students, or a student and a reference) whose similarity is at
/// least `threshold`, most similar first (then by name).
[[nodiscard]] std::vector<SimilarPair> similar_pairs(const std::vector<SimilaritySource>& sources,
                                                     double threshold);

struct LabEntry;

/// A class's similarity report (gpulab grade --roster writes it as similarity.txt): per lab and
/// student file, the pairs of students, and of a student and a reference (the lab's solution and
/// the kernel catalog's sources under `source_dir`), whose code is at least `threshold` alike,
/// the starter file (labs/<dir>/<file>) left out. `students` are (name, submission folder);
/// files that are missing or not regular files (submitted_file_problem) are left out.
[[nodiscard]] std::string class_similarity_report(
    const std::vector<std::pair<std::string, std::filesystem::path>>& students,
    const std::vector<const LabEntry*>& labs, const std::filesystem::path& source_dir,
    double threshold = 0.5);

}  // namespace gpulab
