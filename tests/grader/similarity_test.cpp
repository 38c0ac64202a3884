// Similar submissions (gpulab/grader/similarity.hpp): token fingerprints that renaming and
// reformatting do not change, the starter code left out.
#include "gpulab/grader/similarity.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using gpulab::fingerprint;
using gpulab::similarity;

// A lab function a student might write.
const std::string kWork = R"cpp(
  // Lab 09: the sum of squares.
#include <vector>
  namespace gpulab::lab09 {
  double sum_of_squares(const std::vector<double>& values) {
    double total = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double v = values[i];
      if (v < 0) {
        total += -v * -v;
      } else {
        total += v * v;
      }
    }
    return total / static_cast<double>(values.size() + 1);
  }
  double mean(const std::vector<double>& values) {
    double total = 0;
    for (const double v : values) {
      total += v;
    }
    return values.empty() ? 0.0 : total / static_cast<double>(values.size());
  }
  }  // namespace gpulab::lab09
)cpp";

// The same code renamed, reformatted and commented otherwise.
const std::string kRenamed = R"cpp(
#include <vector>
  namespace gpulab::lab09 {
  /* mine, all mine */
  double sum_of_squares(const std::vector<double>& xs) {
    double acc = 0;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const double x = xs[k];
      if (x < 0) {
        acc += -x * -x;
      } else {
        acc += x * x;
      }
    }
    return acc / static_cast<double>(xs.size() + 2);
  }
  double mean(const std::vector<double>& xs) {
    double acc = 0;
    for (const double x : xs) {
      acc += x;
    }
    return xs.empty() ? 0.0 : acc / static_cast<double>(xs.size());
  }
  }  // namespace gpulab::lab09
)cpp";

// Other code doing other work.
const std::string kOther = R"cpp(
#include <map>
#include <string>
  namespace gpulab::lab09 {
  int count_words(const std::string& text) {
    std::map<std::string, int> seen;
    std::string word;
    for (const char c : text) {
      if (c == ' ') {
        if (!word.empty()) {
          seen[word]++;
        }
        word.clear();
        continue;
      }
      word += c;
    }
    return static_cast<int>(seen.size());
  }
  }  // namespace gpulab::lab09
)cpp";

TEST(Similarity, RenamingAndReformattingChangeNothing) {
  const gpulab::Fingerprints work = fingerprint(kWork);
  ASSERT_GE(work.size(), gpulab::kMinFingerprints);
  EXPECT_GE(similarity(work, fingerprint(kRenamed)), 0.9);
  EXPECT_DOUBLE_EQ(similarity(work, work), 1.0);
}

TEST(Similarity, OtherCodeIsNotSimilar) {
  EXPECT_LT(similarity(fingerprint(kWork), fingerprint(kOther)), 0.2);
}

TEST(Similarity, TheStarterCodeMakesNoTwoSubmissionsAlike) {
  // Two students who kept the same starter (kWork) and each added different code.
  const gpulab::Fingerprints starter = fingerprint(kWork);
  const gpulab::Fingerprints a = fingerprint(kWork + kOther);
  const gpulab::Fingerprints b = fingerprint(kWork + R"cpp(
    namespace gpulab::lab09 {
    float clamp_all(float* data, int n, float low, float high) {
      float changed = 0;
      while (n-- > 0) {
        if (data[n] < low) {
          data[n] = low;
          changed += 1;
        } else if (data[n] > high) {
          data[n] = high;
          changed += 1;
        }
      }
      return changed;
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_GE(similarity(a, b), 0.5) << "with the starter code they look alike";
  EXPECT_LT(similarity(gpulab::without(a, starter), gpulab::without(b, starter)), 0.2);
}

TEST(Similarity, TooLittleCodeSaysNothing) {
  const gpulab::Fingerprints tiny = fingerprint("int f() { return 1; }");
  EXPECT_LT(tiny.size(), gpulab::kMinFingerprints);
  EXPECT_EQ(similarity(tiny, tiny), 0.0);
  EXPECT_TRUE(fingerprint("").empty());
}

TEST(SimilarPairs, StudentsAgainstEachOtherAndReferencesMostSimilarFirst) {
  const std::vector<gpulab::SimilaritySource> sources = {
      {"alice", fingerprint(kWork), false},
      {"bob", fingerprint(kRenamed), false},
      {"cy", fingerprint(kOther), false},
      {"kernels/count.cu", fingerprint(kOther), true},
      {"kernels/copy.cu", fingerprint(kOther), true}};
  const std::vector<gpulab::SimilarPair> pairs = gpulab::similar_pairs(sources, 0.5);
  // alice ~ bob, and cy against each reference; never a reference against a reference.
  ASSERT_EQ(pairs.size(), 3u);
  std::set<std::string> named;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    named.insert(pairs[i].a + " ~ " + pairs[i].b);
    EXPECT_GE(pairs[i].similarity, 0.9);
    EXPECT_LE(pairs[i].shared, pairs[i].smaller);
    if (i > 0) {
      EXPECT_GE(pairs[i - 1].similarity, pairs[i].similarity) << "most similar first";
    }
  }
  EXPECT_EQ(named, (std::set<std::string>{"alice ~ bob", "cy ~ kernels/copy.cu",
                                          "cy ~ kernels/count.cu"}));
  EXPECT_TRUE(gpulab::similar_pairs(sources, 1.01).empty());
}

}  // namespace
