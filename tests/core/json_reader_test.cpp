// Unit tests of gpulab/core/json_reader.hpp, the bounded JSON reader every untrusted document goes
// through (results files, the grading manifest, verdict files, counted-launch lines). The results
// tests check its messages in depth through parse_results; these check the reader on its own.
#include "gpulab/core/json_reader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using gpulab::JsonError;
using gpulab::JsonLimits;
using gpulab::parse_json;

std::string error_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    (void)parse_json(text, "doc.json", limits);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonReader, ParsesAStrictDocument) {
  const nlohmann::json doc =
      parse_json(R"({"a": [1, 2.5, "x", null, true], "b": {"c": 5e-324}})", "doc.json");
  EXPECT_EQ(doc["a"][0], 1);
  EXPECT_EQ(doc["a"][2], "x");
  EXPECT_GT(doc["b"]["c"].get<double>(), 0);  // a subnormal is kept
}

TEST(JsonReader, RefusesWhatAPlainParseLetsThrough) {
  EXPECT_EQ(error_of("{\"a\": 1,\n \"a\": 2}"),
            "doc.json:2:4: duplicate key \"a\" (each key may appear once)");
  EXPECT_EQ(error_of(R"({"a": 1e-400})"),
            "doc.json:1:7: number too small for a double (it would become 0), found '1e-400'");
  EXPECT_EQ(error_of(R"({"a": 1e400})").rfind("doc.json:1:7: number too large for a double", 0), 0u)
      << error_of(R"({"a": 1e400})");
  EXPECT_EQ(error_of(std::string("{}\0{}", 5)),
            "doc.json:1:3: expected JSON text, found a NUL byte");
  EXPECT_NE(error_of("{} {}").find("doc.json:1:4:"), std::string::npos) << error_of("{} {}");
  EXPECT_NE(error_of("{/* c */}").find("doc.json:1:2:"), std::string::npos);
}

TEST(JsonReader, KeepsToItsLimits) {
  EXPECT_EQ(error_of("[[[1]]]", JsonLimits{1000, 2}),
            "doc.json:1:3: nesting deeper than the limit of 2 levels of arrays and objects");
  EXPECT_NO_THROW((void)parse_json("[[[1]]]", "doc.json", JsonLimits{1000, 3}));
  EXPECT_EQ(error_of("[1, 2, 3]", JsonLimits{8, 32}),
            "doc.json: expected at most 8 bytes, found 9");
}

TEST(JsonReader, ErrorsAreOnePrintableLine) {
  const std::string message = error_of("{\"a\x1b[31m\": tru}");
  EXPECT_EQ(message.rfind("doc.json:1:", 0), 0u) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(error_of("").rfind("doc.json:1:1: ", 0), 0u) << error_of("");
}

}  // namespace
