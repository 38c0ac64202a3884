// Unit tests of the code checks of the student's own tokens (code_checks_tokens.cpp): directives
// found as the preprocessor finds them, #line directives and line markers that would rename the
// student's lines, and inline assembly, pragmas, attributes and builtins in preprocessed text.
#include "gpulab/grader/code_checks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "code_checks_support.hpp"

namespace gpulab {
namespace {

using gpulab::testing::joined;
using gpulab::testing::Lines;

TEST(SourceDirectives, FindsEveryDirectiveTheWayThePreprocessorDoes) {
  const std::string source =
      "#include <cmath>\n"                  // 1
      "  #  define X 1\n"                   // 2
      "/* a */ # line 9 \"a.h\"\n"          // 3: after a comment, still first on the line
      "%:line 3\n"                          // 4: the digraph
      "#/**/line 4\n"                       // 5
      "#\\\nline 5\n"                       // 6-7: continued, counted where it starts
      "# 12 \"/usr/include/x.h\" 1\n"       // 8: a GCC line marker
      "int a = 1'000; // #line 1\n"         // 9: a digit separator, a comment
      "const char* s = \"\\\n#line 2\";\n"  // 10-11: inside a string, continued
      "auto r = R\"x(\n#line 3\n)x\";\n"    // 12-14: inside a raw string
      "/*\n#line 4\n*/\n"                   // 15-17: inside a comment
      "int b; #line 5\n"                    // 18: not first on its line
      "#\n"                                 // 19: a null directive
      "#warning don't\n"                    // 20: an unterminated quote ends with its line
      "#line 6 \"/usr/include/x.h\"\n";     // 21
  const std::vector<SourceDirective> found = source_directives(source);
  std::vector<std::pair<int, std::string>> got;
  for (const SourceDirective& d : found) {
    got.emplace_back(d.line, d.name);
  }
  EXPECT_EQ(got, (std::vector<std::pair<int, std::string>>{{1, "include"},
                                                           {2, "define"},
                                                           {3, "line"},
                                                           {4, "line"},
                                                           {5, "line"},
                                                           {6, "line"},
                                                           {8, "12"},
                                                           {19, ""},
                                                           {20, "warning"},
                                                           {21, "line"}}));
}

TEST(CheckLineDirectives, RefusesWhatRenamesTheStudentsLinesNotTheStagingLine) {
  const std::string staged =
      "#line 1 \"/sub/lab01/work.cu\"\n#include <cmath>\n"
      "#line 1 \"/usr/include/stdio.h\"\nasm(\"nop\");\n"
      "# 1 \"/usr/include/fake.h\" 1\n";
  const Lines findings = check_line_directives("work.cu", staged);
  ASSERT_EQ(findings.size(), 2u) << joined(findings);
  EXPECT_TRUE(findings[0].starts_with("work.cu:2: a #line directive")) << findings[0];
  EXPECT_TRUE(findings[1].starts_with("work.cu:4: a line marker (# 1)")) << findings[1];
  EXPECT_TRUE(check_line_directives("work.cu",
                                    "#line 1 \"/sub/w.cu\"\n#include <cmath>\n"
                                    "#pragma unroll\nint x;\n")
                  .empty());
  EXPECT_TRUE(check_line_directives("work.cu", "#include <cmath>\nint x;\n").empty());
}

TEST(CheckPreprocessed, AssemblyPragmasAndAttributesOutsideTheAllowlistAreFoundInTheOwnFileOnly) {
  // As g++ -E writes it: line markers, a header's lines (anything goes there), the student's.
  const std::string text = R"pp(# 0 "/s/work.cu"
# 1 "/usr/include/c++/12/vector" 1 3
__attribute__((no_sanitize_address)) void header_only();
asm("nop");
#pragma GCC optimize("O0")
# 2 "/s/work.cu" 2
[[nodiscard]] [[gnu::always_inline]] inline int a() { return 1; }
__attribute__((noinline, aligned(16), __noinline__)) int b();
const char* s = "asm __attribute__((section))";
const char* r = R"x(asm
[[gnu::section]])x";
__attribute__((no_sanitize("kernel-address"))) void c();
[[gnu::no_sanitize_address, nodiscard]] int d();
#pragma unroll
#pragma GCC unroll 4
#pragma GCC push_options
int e() { asm volatile(".incbin \"/etc/passwd\""); return 0; }
__attribute__ ((section(".preinit_array"))) void (*f)() = nullptr;
[[using gnu: optimize("O0")]] int g();
)pp";
  const Lines found = check_preprocessed("work.cu", text, {"/s/work.cu"});
  const Lines expected = {
      "work.cu:7: __attribute__((no_sanitize)): an attribute lab code may not use",
      "work.cu:8: [[no_sanitize_address]]: an attribute lab code may not use",
      "work.cu:11: #pragma GCC push_options: a pragma lab code may not use",
      "work.cu:12: inline assembly (asm): lab code is C++ and CUDA C++ only",
      "work.cu:13: __attribute__((section)): an attribute lab code may not use",
      "work.cu:14: [[optimize]]: an attribute lab code may not use"};
  ASSERT_EQ(found.size(), expected.size()) << joined(found);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(found[i].rfind(expected[i], 0), 0u) << found[i];
  }
}

TEST(CheckPreprocessed, TargetAndMemoryBuiltInsAreFoundMathsAndHintsAreNot) {
  const std::string text = R"pp(# 0 "/s/work.cu"
# 1 "/usr/include/c++/12/bits/stl_algobase.h" 1 3
void header() { __builtin_memmove(0, 0, 0); }
# 2 "/s/work.cu" 2
float a(float x) { return __builtin_expect(x > 0, 1) ? __builtin_sqrtf(x) : __builtin_nanf(""); }
int b(unsigned v) { return __builtin_popcountll(v) + __builtin_clz(v) + __builtin_offsetof(S, m); }
void c(float* p) { __builtin_ia32_storelps((__v2sf*)p, __builtin_ia32_loadlps(0, p)); }
void d(void* p) { __builtin_prefetch(p); __builtin_memcpy(p, p, 4); }
)pp";
  const Lines found = check_preprocessed("work.cu", text, {"/s/work.cu"});
  const Lines expected = {
      "work.cu:4: __builtin_ia32_storelps: a compiler built-in lab code may not use",
      "work.cu:4: __builtin_ia32_loadlps: a compiler built-in lab code may not use",
      "work.cu:5: __builtin_prefetch: a compiler built-in lab code may not use",
      "work.cu:5: __builtin_memcpy: a compiler built-in lab code may not use"};
  ASSERT_EQ(found.size(), expected.size()) << joined(found);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(found[i].rfind(expected[i], 0), 0u) << found[i];
  }
}

TEST(CheckPreprocessed, LiteralsWithAnEncodingPrefixEndWhereTheCompilerEndsThem) {
  // A raw string with a prefix holds a lone quote; a prefixed character literal, an
  // unterminated one: the code after each is still read.
  const std::string text = R"pp(# 1 "/s/work.cu"
constexpr auto a = u8R"(")"; __attribute__((no_sanitize("kernel-address"))) void f();
constexpr auto b = LR"x(" asm)x"; asm("nop");
constexpr auto c = u8'"'; [[gnu::section(".x")]] int g;
#pragma message "don't
[[gnu::optimize("O0")]] int h();
)pp";
  const Lines found = check_preprocessed("work.cu", text, {"/s/work.cu"});
  const Lines expected = {"work.cu:1: __attribute__((no_sanitize))", "work.cu:2: inline assembly",
                          "work.cu:3: [[section]]", "work.cu:4: #pragma message",
                          "work.cu:5: [[optimize]]"};
  ASSERT_EQ(found.size(), expected.size()) << joined(found);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(found[i].rfind(expected[i], 0), 0u) << found[i];
  }
}

TEST(CheckPreprocessed, RenamingTheStudentsLinesIsFoundAndTheLinesStayChecked) {
  // A #line naming a system header (check_line_directives refuses it in the source as well):
  // the assembly after it is still the student's. The preprocessor's own markers (the built-ins
  // before the file's first line, an include entered and left) are not renames.
  const std::string text = R"pp(# 0 "/s/work.cu"
# 0 "<built-in>"
# 0 "<command-line>"
# 1 "/s/work.cu"
# 1 "/usr/include/c++/12/vector" 1 3
int in_header;
# 2 "/s/work.cu" 2
int mine;
# 1 "/usr/include/stdio.h"
asm("nop");
)pp";
  const Lines found = check_preprocessed("work.cu", text, {"/s/work.cu"});
  ASSERT_EQ(found.size(), 2u) << joined(found);
  EXPECT_TRUE(found[0].starts_with("work.cu:3: a line directive naming /usr/include/stdio.h"))
      << found[0];
  EXPECT_TRUE(found[1].starts_with("work.cu:4: inline assembly")) << found[1];
}

}  // namespace
}  // namespace gpulab
