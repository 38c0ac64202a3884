#include "gpulab/grader/similarity.hpp"

#include "gpulab/core/files.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/staging.hpp"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <iterator>
#include <sstream>
#include <tuple>

namespace gpulab {

namespace {

// 64-bit FNV-1a, continued from `hash`.
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 14695981039346656037ULL) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// C++ keywords and the CUDA words that give code its shape: kept, where other identifiers are
// one symbol.
bool is_keyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {"auto",         "break",
                                                   "case",         "class",
                                                   "const",        "constexpr",
                                                   "continue",     "default",
                                                   "delete",       "do",
                                                   "double",       "else",
                                                   "enum",         "float",
                                                   "for",          "if",
                                                   "inline",       "int",
                                                   "long",         "namespace",
                                                   "new",          "return",
                                                   "short",        "signed",
                                                   "sizeof",       "static",
                                                   "static_cast",  "struct",
                                                   "switch",       "template",
                                                   "this",         "throw",
                                                   "try",          "catch",
                                                   "typename",     "unsigned",
                                                   "using",        "void",
                                                   "volatile",     "while",
                                                   "bool",         "char",
                                                   "__global__",   "__device__",
                                                   "__shared__",   "__syncthreads",
                                                   "__restrict__", "extern"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

// The normalised token sequence of `source`, each token hashed.
std::vector<std::uint64_t> token_hashes(std::string_view source) {
  std::vector<std::uint64_t> tokens;
  std::size_t i = 0;
  bool line_start = true;
  while (i < source.size()) {
    const char c = source[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
    } else if (c == '#' && line_start) {  // a preprocessor line, continued lines included
      while (i < source.size() && source[i] != '\n') {
        i += source[i] == '\\' && i + 1 < source.size() ? 2 : 1;
      }
    } else if (source.substr(i, 2) == "//") {
      i = std::min(source.size(), source.find('\n', i));
    } else if (source.substr(i, 2) == "/*") {
      const std::size_t end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? source.size() : end + 2;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < source.size() && source[i] != c && source[i] != '\n') {
        i += source[i] == '\\' ? 2 : 1;
      }
      ++i;
      tokens.push_back(fnv1a("\"literal"));
      line_start = false;
    } else if (identifier_char(c)) {
      const std::size_t start = i;
      while (i < source.size() && (identifier_char(source[i]) || source[i] == '.')) {
        if (source[i] == '.' && std::isdigit(static_cast<unsigned char>(source[start])) == 0) {
          break;  // a member access, not a number's point
        }
        ++i;
      }
      const std::string_view word = source.substr(start, i - start);
      tokens.push_back(std::isdigit(static_cast<unsigned char>(c)) != 0 ? fnv1a("0number")
                       : is_keyword(word)                               ? fnv1a(word)
                                                                        : fnv1a("_identifier"));
      line_start = false;
    } else {
      tokens.push_back(fnv1a(source.substr(i, 1)));
      line_start = false;
      ++i;
    }
  }
  return tokens;
}

}  // namespace

Fingerprints fingerprint(std::string_view source) {
  const std::vector<std::uint64_t> tokens = token_hashes(source);
  Fingerprints fingerprints;
  if (tokens.size() < kTokensPerGram) {
    return fingerprints;
  }
  std::vector<std::uint64_t> grams;
  grams.reserve(tokens.size() - kTokensPerGram + 1);
  for (std::size_t i = 0; i + kTokensPerGram <= tokens.size(); ++i) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (std::size_t k = 0; k < kTokensPerGram; ++k) {
      hash = (hash ^ tokens[i + k]) * 1099511628211ULL;
    }
    grams.push_back(hash);
  }
  // Winnowing: the smallest hash of every window of kWindow grams.
  const std::size_t windows = grams.size() >= kWindow ? grams.size() - kWindow + 1 : 1;
  for (std::size_t w = 0; w < windows; ++w) {
    const auto end =
        grams.begin() + static_cast<std::ptrdiff_t>(std::min(grams.size(), w + kWindow));
    fingerprints.insert(*std::min_element(grams.begin() + static_cast<std::ptrdiff_t>(w), end));
  }
  return fingerprints;
}

Fingerprints without(const Fingerprints& fingerprints, const Fingerprints& starter) {
  Fingerprints left;
  std::set_difference(fingerprints.begin(), fingerprints.end(), starter.begin(), starter.end(),
                      std::inserter(left, left.end()));
  return left;
}

namespace {

// How many of the smaller set's fingerprints the other has.
std::size_t shared_fingerprints(const Fingerprints& a, const Fingerprints& b) {
  const Fingerprints& small = a.size() <= b.size() ? a : b;
  const Fingerprints& large = a.size() <= b.size() ? b : a;
  return static_cast<std::size_t>(std::count_if(
      small.begin(), small.end(), [&](std::uint64_t hash) { return large.contains(hash); }));
}

}  // namespace

double similarity(const Fingerprints& a, const Fingerprints& b) {
  const std::size_t smaller = std::min(a.size(), b.size());
  if (smaller < kMinFingerprints) {
    return 0;
  }
  return static_cast<double>(shared_fingerprints(a, b)) / static_cast<double>(smaller);
}

std::vector<SimilarPair> similar_pairs(const std::vector<SimilaritySource>& sources,
                                       double threshold) {
  std::vector<SimilarPair> pairs;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    for (std::size_t j = i + 1; j < sources.size(); ++j) {
      if (sources[i].reference && sources[j].reference) {
        continue;
      }
      const double s = similarity(sources[i].fingerprints, sources[j].fingerprints);
      if (s < threshold || s == 0) {
        continue;
      }
      pairs.push_back({sources[i].name, sources[j].name, s,
                       shared_fingerprints(sources[i].fingerprints, sources[j].fingerprints),
                       std::min(sources[i].fingerprints.size(), sources[j].fingerprints.size())});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.similarity != y.similarity ? x.similarity > y.similarity
                                        : std::tie(x.a, x.b) < std::tie(y.a, y.b);
  });
  return pairs;
}

namespace fs = std::filesystem;

std::string class_similarity_report(const std::vector<std::pair<std::string, fs::path>>& students,
                                    const std::vector<const LabEntry*>& labs,
                                    const fs::path& source_dir, double threshold) {
  // The catalog's kernels: what a student could have pasted from the framework.
  std::vector<SimilaritySource> catalog;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(source_dir / "kernels", error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const std::string extension = it->path().extension().string();
    if (it->is_regular_file() && (extension == ".cu" || extension == ".cpp")) {
      if (const std::optional<std::string> text = read_file(it->path())) {
        catalog.push_back(
            {fs::relative(it->path(), source_dir).generic_string(), fingerprint(*text), true});
      }
    }
  }
  std::ostringstream out;
  out << "Submissions that share much of their code (" << static_cast<int>(threshold * 100)
      << "% or more of the smaller one's token fingerprints; identifiers, literals, comments and "
         "layout ignored, the starter code left out), with each other, the lab's solution and "
         "the kernel catalog's sources. For you to read: never a grade.\n";
  std::size_t total = 0;
  for (const LabEntry* lab : labs) {
    for (const std::string& file : lab->student_files) {
      const std::optional<std::string> starter_text =
          read_file(source_dir / "labs" / lab->dir / file);
      const Fingerprints starter = starter_text ? fingerprint(*starter_text) : Fingerprints{};
      std::vector<SimilaritySource> sources;
      for (const auto& [student, root] : students) {
        const std::optional<fs::path> found = find_student_file(root, *lab, file);
        if (!found || submitted_file_problem(root, *found)) {
          continue;
        }
        if (const std::optional<std::string> text = read_file(root / *found)) {
          sources.push_back({student, without(fingerprint(*text), starter), false});
        }
      }
      if (const std::optional<std::string> solution =
              read_file(source_dir / "solutions" / lab->dir / file)) {
        sources.push_back(
            {"solutions/" + lab->dir + "/" + file, without(fingerprint(*solution), starter), true});
      }
      for (const SimilaritySource& kernel : catalog) {
        sources.push_back({kernel.name, without(kernel.fingerprints, starter), true});
      }
      const std::vector<SimilarPair> pairs = similar_pairs(sources, threshold);
      out << "\n" << lab->id << " " << file << ": ";
      if (pairs.empty()) {
        out << "no pair\n";
        continue;
      }
      out << pairs.size() << " pair(s)\n";
      for (const SimilarPair& pair : pairs) {
        out << "  " << std::setw(4) << static_cast<int>(pair.similarity * 100 + 0.5) << "%  "
            << pair.a << "  ~  " << pair.b << "  (" << pair.shared << " of " << pair.smaller
            << " fingerprints)\n";
      }
      total += pairs.size();
    }
  }
  out << "\n" << total << " pair(s) in all\n";
  return out.str();
}

}  // namespace gpulab
