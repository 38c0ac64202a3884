// Tests of the sim backend's source translator: every rewrite rule (launches, dynamic shared
// memory, #pragma unroll), what must stay untouched (comments, literals, nested templates), line
// numbers kept, each error with its position, and gpulab-sim-translate run as the build runs it.
#include "translate.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::sim::translate_cuda_source;
using gpulab::sim::TranslateError;
using gpulab::sim::Translation;

// What `EXPR<<<CFG>>>` becomes.
std::string launcher(std::string_view expr, std::string_view name, std::string_view config) {
  return "::gpulab::sim::detail::make_launcher(GPULAB_SIM_KERNEL(" + std::string(expr) + "), \"" +
         std::string(name) + "\", " + std::string(config) + ")";
}

std::size_t newlines(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Translates a source that must have no errors; the line count must not change.
std::string translated(std::string_view source) {
  const Translation translation = translate_cuda_source(source);
  for (const TranslateError& e : translation.errors) {
    ADD_FAILURE() << "unexpected error " << e.line << ":" << e.column << ": " << e.message;
  }
  EXPECT_EQ(newlines(translation.text), newlines(source)) << translation.text;
  return translation.text;
}

// The one error a source must produce.
TranslateError only_error(std::string_view source) {
  const Translation translation = translate_cuda_source(source);
  EXPECT_EQ(translation.errors.size(), 1u) << source;
  if (translation.errors.empty()) {
    return {0, 0, "(no error)"};
  }
  return translation.errors.front();
}

// ------------------------------------------------------------------------------------------------
// Launches
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, LaunchOfANamedKernel) {
  EXPECT_EQ(translated("vector_add<<<grid, block>>>(a, b, c, n);"),
            launcher("vector_add", "vector_add", "grid, block") + "(a, b, c, n);");
}

TEST(SimTranslate, LaunchOfATemplateKernelInANamespace) {
  EXPECT_EQ(
      translated("ns::reduce<float, 256><<<g, 256, 0, stream>>>(x)"),
      launcher("ns::reduce<float, 256>", "ns::reduce<float, 256>", "g, 256, 0, stream") + "(x)");
}

TEST(SimTranslate, LaunchOfAParenthesizedExpression) {
  EXPECT_EQ(translated("(fast ? k1 : k2)<<<1, 32>>>(p);"),
            launcher("(fast ? k1 : k2)", "(fast ? k1 : k2)", "1, 32") + "(p);");
}

TEST(SimTranslate, LaunchOfASubscriptedTable) {
  EXPECT_EQ(translated("kernels[level]<<<blocks, 256>>>(p);"),
            launcher("kernels[level]", "kernels[level]", "blocks, 256") + "(p);");
}

TEST(SimTranslate, LaunchOfAMember) {
  EXPECT_EQ(translated("table.kernel<<<1, 1>>>(p);"),
            launcher("table.kernel", "table.kernel", "1, 1") + "(p);");
  EXPECT_EQ(translated("this->levels[2].run<<<1, 1>>>();"),
            launcher("this->levels[2].run", "this->levels[2].run", "1, 1") + "();");
}

TEST(SimTranslate, LaunchOfAGloballyQualifiedOrDependentName) {
  EXPECT_EQ(translated("x; ::k<<<1, 1>>>();"), "x; " + launcher("::k", "::k", "1, 1") + "();");
  EXPECT_EQ(translated("A<T>::template k<2><<<1, 1>>>();"),
            launcher("A<T>::template k<2>", "A<T>::template k<2>", "1, 1") + "();");
}

TEST(SimTranslate, LaunchOfACallResult) {
  EXPECT_EQ(translated("x = 1; pick(level)<<<1, 1>>>(p);"),
            "x = 1; " + launcher("pick(level)", "pick(level)", "1, 1") + "(p);");
}

TEST(SimTranslate, TemplateArgumentsMayHoldParenthesesAndComparisons) {
  EXPECT_EQ(translated("k<(N > 2), T<int>><<<1, 1>>>();"),
            launcher("k<(N > 2), T<int>>", "k<(N > 2), T<int>>", "1, 1") + "();");
}

TEST(SimTranslate, StatementBeforeTheKernelIsNotPartOfIt) {
  EXPECT_EQ(translated("if (x) k<<<1,1>>>();"), "if (x) " + launcher("k", "k", "1,1") + "();");
  EXPECT_EQ(translated("if (x) (k)<<<1,1>>>();"),
            "if (x) " + launcher("(k)", "(k)", "1,1") + "();");
  EXPECT_EQ(translated("{ a = b; k<<<1,1>>>(); }"),
            "{ a = b; " + launcher("k", "k", "1,1") + "(); }");
  EXPECT_EQ(translated("f(a, k<<<1,1>>>())"), "f(a, " + launcher("k", "k", "1,1") + "())");
}

TEST(SimTranslate, KeywordBeforeTheKernelIsNotPartOfIt) {
  EXPECT_EQ(translated("return k<<<1,1>>>();"), "return " + launcher("k", "k", "1,1") + "();");
  EXPECT_EQ(translated("return ::k<<<1,1>>>();"),
            "return " + launcher("::k", "::k", "1,1") + "();");
  EXPECT_EQ(translated("else k<<<1,1>>>();"), "else " + launcher("k", "k", "1,1") + "();");
  EXPECT_EQ(translated("do k<<<1,1>>>(); while (0);"),
            "do " + launcher("k", "k", "1,1") + "(); while (0);");
  EXPECT_EQ(translated("case 1: k<<<1,1>>>();"), "case 1: " + launcher("k", "k", "1,1") + "();");
}

TEST(SimTranslate, OnlyTheKernelAndConfigurationAreReplaced) {
  EXPECT_EQ(translated("  k <<< g, b >>> (f(a), \"s\");  // done\n  next();\n"),
            "  " + launcher("k", "k", " g, b ") + " (f(a), \"s\");  // done\n  next();\n");
}

TEST(SimTranslate, MultiLineConfigurationIsCopiedVerbatim) {
  const std::string source = "k<<<dim3(n / 256,\n           4),\n    256, bytes>>>(p);\nnext();";
  EXPECT_EQ(translated(source),
            launcher("k", "k", "dim3(n / 256,\n           4),\n    256, bytes") + "(p);\nnext();");
}

TEST(SimTranslate, ConfigurationMayHoldBracketsAndShifts) {
  EXPECT_EQ(translated("k<<<sizes[i >> 1], f(a, b), {}, s>>>();"),
            launcher("k", "k", "sizes[i >> 1], f(a, b), {}, s") + "();");
  EXPECT_EQ(translated("k<<<sizeof(std::vector<std::vector<int>>), 1>>>();"),
            launcher("k", "k", "sizeof(std::vector<std::vector<int>>), 1") + "();");
}

TEST(SimTranslate, NewlinesInsideTheKernelAreKeptAndCollapsedInItsName) {
  EXPECT_EQ(translated("ns::reduce<float,\n           256>\n<<<1, 1>>>(x);"),
            "::gpulab::sim::detail::make_launcher(GPULAB_SIM_KERNEL(ns::reduce<float,\n"
            "           256>)\n, \"ns::reduce<float, 256>\", 1, 1)(x);");
}

TEST(SimTranslate, NameEscapesQuotesAndBackslashes) {
  EXPECT_EQ(translated(R"((pick("a\\b"))<<<1, 1>>>();)"),
            launcher(R"((pick("a\\b")))", R"((pick(\"a\\\\b\")))", "1, 1") + "();");
}

TEST(SimTranslate, SeveralLaunchesOnOneLine) {
  EXPECT_EQ(translated("a<<<1, 1>>>(x); b[i]<<<2, 2>>>(y);"),
            launcher("a", "a", "1, 1") + "(x); " + launcher("b[i]", "b[i]", "2, 2") + "(y);");
}

// ------------------------------------------------------------------------------------------------
// What is never rewritten
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, CommentsAndLiteralsAreUntouched) {
  const std::vector<std::string> sources = {
      "// k<<<1, 1>>>(p); extern __shared__ float s[4];\n",
      "/* k<<<1, 1>>>(p);\n   extern __shared__ float s[4]; */\n",
      "// a spliced comment \\\n k<<<1, 1>>>(p);\n",
      "const char* s = \"k<<<1, 1>>>(p); \\\" k<<<\";\n",
      "auto s = u8\"k<<<\"; auto t = L\"k<<<\"; auto u = U\"k<<<\"; auto v = u\"<<<\";\n",
      "auto r = R\"x(k<<<1, 1>>>(p); )\" extern __shared__ float s[]; )x\";\n",
      "auto r = LR\"(\nk<<<1, 1>>>(p);\n)\";\n",
      "char c = '<'; int m = '<<<'; char q = '\\'';\n",
  };
  for (const std::string& source : sources) {
    SCOPED_TRACE(source);
    EXPECT_EQ(translated(source), source);
  }
}

TEST(SimTranslate, CodeAfterLiteralsAndDigitSeparatorsIsTranslated) {
  EXPECT_EQ(translated("int n = 1'000; s = \"<<<\"; c = '\"'; k<<<1, 1>>>();"),
            "int n = 1'000; s = \"<<<\"; c = '\"'; " + launcher("k", "k", "1, 1") + "();");
  EXPECT_EQ(translated("s = R\"(\")\"; k<<<1, 1>>>();"),
            "s = R\"(\")\"; " + launcher("k", "k", "1, 1") + "();");
}

TEST(SimTranslate, ClosingNestedTemplatesIsNotALaunch) {
  const std::string source =
      "std::vector<std::vector<std::vector<int>>> v;\n"
      "using M = std::map<int, std::vector<std::pair<int, int>>>;\n"
      "x = a >> 3; y = b << 2; z = c <<= 1;\n";
  EXPECT_EQ(translated(source), source);
}

// ------------------------------------------------------------------------------------------------
// Preprocessor lines
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, LaunchInAFunctionLikeMacro) {
  EXPECT_EQ(translated("#define LAUNCH(n) kernel_##n<<<1, \\\n   32>>>(n)\nLAUNCH(1);\n"),
            "#define LAUNCH(n) " + launcher("kernel_##n", "kernel_##n", "1, \\\n   32") +
                "(n)\nLAUNCH(1);\n");
}

TEST(SimTranslate, LaunchInAnObjectLikeMacroMayLeaveTheArgumentsToItsCaller) {
  EXPECT_EQ(translated("#define RUN ::k<<<1, 1>>>\nRUN(p);\n"),
            "#define RUN " + launcher("::k", "::k", "1, 1") + "\nRUN(p);\n");
}

TEST(SimTranslate, DirectiveBeforeALaunchIsNotPartOfIt) {
  EXPECT_EQ(translated("#include <vector>\n#define N 4\nk<<<1, N>>>();\n"),
            "#include <vector>\n#define N 4\n" + launcher("k", "k", "1, N") + "();\n");
}

// ------------------------------------------------------------------------------------------------
// Dynamic shared memory
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, DynamicSharedArray) {
  EXPECT_EQ(translated("  extern __shared__ float s[];\n"),
            "  float* const s = ::gpulab::sim::detail::dynamic_shared<float>();\n");
  EXPECT_EQ(translated("extern __shared__ float2 tile[];"),
            "float2* const tile = ::gpulab::sim::detail::dynamic_shared<float2>();");
}

TEST(SimTranslate, DynamicSharedTypeOfSeveralTokens) {
  EXPECT_EQ(translated("extern __shared__ unsigned   char raw[];"),
            "unsigned char* const raw = ::gpulab::sim::detail::dynamic_shared<unsigned char>();");
  EXPECT_EQ(translated("extern __shared__ ns::Pair<int, float> p[];"),
            "ns::Pair<int, float>* const p = "
            "::gpulab::sim::detail::dynamic_shared<ns::Pair<int, float>>();");
}

TEST(SimTranslate, DynamicSharedAlignmentSpecifiersAreDropped) {
  const std::string expected =
      "unsigned char* const smem = ::gpulab::sim::detail::dynamic_shared<unsigned char>();";
  EXPECT_EQ(translated("extern __shared__ __align__(16) unsigned char smem[];"), expected);
  EXPECT_EQ(translated("extern __shared__ unsigned char __align__(sizeof(float4)) smem[];"),
            expected);
  EXPECT_EQ(translated("extern __shared__ alignas(16) unsigned char smem[];"), expected);
  EXPECT_EQ(translated("x; alignas(16) extern __shared__ unsigned char smem[];"), "x; " + expected);
}

TEST(SimTranslate, DynamicSharedOverSeveralLinesKeepsItsNewlines) {
  EXPECT_EQ(translated("extern\n  __shared__ __align__(8)\n  double d[\n];\nx = d[0];\n"),
            "double* const d = ::gpulab::sim::detail::dynamic_shared<double>();\n\n\n\n"
            "x = d[0];\n");
}

TEST(SimTranslate, DynamicSharedInAMacroContinuesTheDirective) {
  EXPECT_EQ(translated("#define SMEM extern __shared__ \\\n  float s[]\nSMEM;\n"),
            "#define SMEM float* const s = ::gpulab::sim::detail::dynamic_shared<float>()\\\n"
            "\nSMEM;\n");
}

TEST(SimTranslate, StaticSharedAndOtherExternsAreUntouched) {
  const std::string source =
      "__shared__ float tile[32][33];\nextern \"C\" void f();\nextern int g[];\n";
  EXPECT_EQ(translated(source), source);
}

// ------------------------------------------------------------------------------------------------
// #pragma unroll
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, BarePragmaUnrollBecomesGccsFullUnroll) {
  EXPECT_EQ(translated("#pragma unroll\nfor (int i = 0; i < 8; ++i) {}\n"),
            "#pragma GCC unroll 64\nfor (int i = 0; i < 8; ++i) {}\n");
  EXPECT_EQ(translated("  #  pragma   unroll  // all of it\n"),
            "  #  pragma   GCC unroll 64  // all of it\n");
  EXPECT_EQ(gpulab::sim::kFullUnrollFactor, 64);
}

TEST(SimTranslate, PragmaUnrollWithANumberKeepsIt) {
  EXPECT_EQ(translated("#pragma unroll 4\n"), "#pragma GCC unroll 4\n");
  EXPECT_EQ(translated("#pragma unroll 1 /* keep the loop */\n"),
            "#pragma GCC unroll 1 /* keep the loop */\n");
}

TEST(SimTranslate, PragmaUnrollWithAnExpressionAndOtherPragmasAreUntouched) {
  const std::string source =
      "#pragma unroll (TM)\n#pragma unroll TILE / 4\n#pragma once\n#pragma GCC unroll 2\n"
      "// #pragma unroll\nconst char* s = \"#pragma unroll\";\nint unroll;\n";
  EXPECT_EQ(translated(source), source);
}

// ------------------------------------------------------------------------------------------------
// Line numbers
// ------------------------------------------------------------------------------------------------

// Every construct at once; each line ends with its number, which must stay on the same line.
TEST(SimTranslate, EveryLineKeepsItsNumber) {
  const std::vector<std::string> lines = {
      "#include \"common.cuh\"",
      "#define LAUNCH(k) k<<<1, \\",
      "  1>>>()",
      "__global__ void kernel(float* p) {",
      "  extern __shared__",
      "    __align__(16) float s[];",
      "  s[0] = p[0];",
      "}",
      "void run(bool fast) {",
      "  /* a comment",
      "     k<<<1, 1>>>() */",
      "  kernel<<<dim3(1,",
      "               2),",
      "           32, 0>>>(nullptr);",
      "  ns::",
      "    reduce<float>",
      "    <<<1, 1>>>(nullptr);",
      "  const char* r = R\"(",
      "  )\";",
      "  return (fast ? kernel",
      "               : kernel)<<<1, 1>>>(nullptr);",
      "}",
  };
  std::string source;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    source += lines[i] + (lines[i].ends_with("\\") ? "\n" : "  // L" + std::to_string(i) + "\n");
  }
  const std::string text = translated(source);
  std::istringstream out(text);
  std::string line;
  for (std::size_t i = 0; std::getline(out, line); ++i) {
    if (!lines.at(i).ends_with("\\")) {
      EXPECT_TRUE(line.ends_with("// L" + std::to_string(i))) << "line " << i + 1 << ": " << line;
    }
  }
  EXPECT_NE(text.find("\"ns:: reduce<float>\", 1, 1)(nullptr);  // L16\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("float* const s = ::gpulab::sim::detail::dynamic_shared<float>(); // L4\n"),
            std::string::npos)
      << text;
}

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

TEST(SimTranslate, LaunchWithoutAKernelIsAnError) {
  for (const char* source : {"x;\n  = <<<1, 1>>>(p);", "x;\n  ;\t<<<1, 1>>>(p);"}) {
    SCOPED_TRACE(source);
    const TranslateError e = only_error(source);
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.column, 5);
    EXPECT_EQ(e.message, "expected a kernel before '<<<'");
  }
  const TranslateError at_start = only_error("<<<1, 1>>>(p);");
  EXPECT_EQ(at_start.line, 1);
  EXPECT_EQ(at_start.column, 1);
}

TEST(SimTranslate, LaunchWithoutClosingIsAnError) {
  for (const char* source :
       {"x;\n\tk<<<1, 1>>(p);\ny<<<1, 1>>>();", "x;\n\tk<<<1, 1)", "x;\n\tk<<<1, 1"}) {
    SCOPED_TRACE(source);
    const TranslateError e = only_error(source);
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.column, 3);
    EXPECT_EQ(e.message, "unterminated '<<<': expected '>>>'");
  }
}

TEST(SimTranslate, LaunchWithoutArgumentsIsAnError) {
  const TranslateError e = only_error("int x;\nk<<<1, 1>>>  p;\n");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 14);
  EXPECT_EQ(e.message, "expected '(' with the kernel arguments after '>>>'");
  const TranslateError at_end = only_error("k<<<1, 1>>>");
  EXPECT_EQ(at_end.line, 1);
  EXPECT_EQ(at_end.column, 12);
}

TEST(SimTranslate, MalformedDynamicSharedIsAnErrorSayingTheExpectedForm) {
  struct Case {
    const char* source;
    int line;
    int column;
    const char* detail;
  };
  const Case cases[] = {
      {"x;\n  extern __shared__ float s[256];", 2, 29, "no size in the brackets"},
      {"x;\n  extern __shared__ float s;", 2, 28, "an array of unknown size"},
      {"x;\n  extern __shared__ float* p;", 2, 29, "an array of unknown size"},
      {"x;\n  extern __shared__ float a[], b[];", 2, 30, "one array per declaration"},
      {"x;\n  extern __shared__ float a, b[];", 2, 28, "one array per declaration"},
      {"x;\n  extern __shared__ s[];", 2, 22, "a type and a name before '['"},
      {"x;\n  extern __shared__ float s[] = {};", 2, 31, "';' after 's[]'"},
      {"x;\n  extern __shared__ __align__ float s[];", 2, 21, "expected '(N)' after '__align__'"},
      {"x;\n  extern __shared__ float", 2, 26, "found the end of the file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    const TranslateError e = only_error(c.source);
    EXPECT_EQ(e.line, c.line);
    EXPECT_EQ(e.column, c.column);
    EXPECT_NE(e.message.find("expected 'extern __shared__ TYPE NAME[];'"), std::string::npos)
        << e.message;
    EXPECT_NE(e.message.find(c.detail), std::string::npos) << e.message;
  }
}

TEST(SimTranslate, TranslationGoesOnAfterAnError) {
  const Translation t = translate_cuda_source(
      "= <<<1, 1>>>();\nextern __shared__ float s[8];\nk<<<1, 1>>>();\nk<<<1, 1>>>;\n");
  ASSERT_EQ(t.errors.size(), 3u);
  EXPECT_EQ(t.errors[0].line, 1);
  EXPECT_EQ(t.errors[1].line, 2);
  EXPECT_EQ(t.errors[2].line, 4);
  EXPECT_NE(t.text.find(launcher("k", "k", "1, 1") + "();\n"), std::string::npos) << t.text;
}

// ------------------------------------------------------------------------------------------------
// gpulab-sim-translate, run as the build runs it
// ------------------------------------------------------------------------------------------------

using gpulab::testing::Outcome;
using gpulab::testing::run_command;
using gpulab::testing::shell_quote;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class SimTranslateTool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpulab_sim_translate_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the tool in directory `cwd` (the test's directory by default) with `args`.
  Outcome tool(const std::string& args, const fs::path& cwd = {}) const {
    return run_command("cd " + shell_quote((cwd.empty() ? dir_ : cwd).string()) + " && " +
                       shell_quote(GPULAB_SIM_TRANSLATE_EXE) + " " + args);
  }

  fs::path dir_;
};

TEST_F(SimTranslateTool, WritesTheHeaderTheLineDirectiveAndTheTranslation) {
  const std::string source =
      "__global__ void k(int* p);\nvoid run() {\n  k<<<1, 32>>>(nullptr);\n}\n";
  write_text(dir_ / "saxpy.cu", source);
  const Outcome run = tool("saxpy.cu out/saxpy.cu.cpp");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const std::string absolute = (dir_ / "saxpy.cu").lexically_normal().string();
  EXPECT_EQ(read_text(dir_ / "out/saxpy.cu.cpp"),
            "// Generated by gpulab-sim-translate from saxpy.cu: the sim backend's build of that "
            "file. Do not edit.\n"
            "#include <cuda_runtime.h>\n"
            "#line 1 \"" +
                absolute + "\"\n" + translate_cuda_source(source).text);
}

TEST_F(SimTranslateTool, LineDirectiveEscapesQuotesAndBackslashes) {
  fs::create_directories(dir_ / "a\"b\\c");
  write_text(dir_ / "a\"b\\c" / "k.cu", "int x;\n");
  const Outcome run = tool("'a\"b\\c/k.cu' k.cpp");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string escaped = dir_.string() + "/a\\\"b\\\\c/k.cu";
  EXPECT_NE(read_text(dir_ / "k.cpp").find("\n#line 1 \"" + escaped + "\"\nint x;\n"),
            std::string::npos)
      << read_text(dir_ / "k.cpp");
}

TEST_F(SimTranslateTool, ReplacesAnExistingOutputAndLeavesNoTemporaryFile) {
  write_text(dir_ / "k.cu", "k<<<1, 1>>>();\n");
  write_text(dir_ / "k.cpp", "stale");
  const Outcome run = tool("k.cu k.cpp");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(read_text(dir_ / "k.cpp").find(launcher("k", "k", "1, 1")), std::string::npos);
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  std::ranges::sort(names);
  EXPECT_EQ(names, (std::vector<std::string>{"k.cpp", "k.cu"}));
}

TEST_F(SimTranslateTool, ErrorsAreReportedAsCompilersDoAndNothingIsWritten) {
  write_text(dir_ / "bad.cu", "void f() {\n  = <<<1, 1>>>(p);\n  k<<<1, 1>>> p;\n}\n");
  const Outcome run = tool("bad.cu bad.cpp");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "bad.cu:2:5: error: expected a kernel before '<<<'\n"
            "bad.cu:3:15: error: expected '(' with the kernel arguments after '>>>'\n");
  EXPECT_FALSE(fs::exists(dir_ / "bad.cpp"));
}

TEST_F(SimTranslateTool, BadUsageGivesAUsageLine) {
  for (const char* args : {"", "only.cu", "a.cu b.cpp c.cpp", "--frobnicate a.cu b.cpp"}) {
    SCOPED_TRACE(args);
    const Outcome run = tool(args);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(std::ranges::count(run.err, '\n'), 1) << run.err;
    EXPECT_EQ(run.err.rfind("gpulab-sim-translate: error: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find("usage: gpulab-sim-translate INPUT.cu OUTPUT.cpp"), std::string::npos)
        << run.err;
  }
  const Outcome help = tool("--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out.rfind("Usage: gpulab-sim-translate INPUT.cu OUTPUT.cpp\n", 0), 0u) << help.out;
}

TEST_F(SimTranslateTool, UnreadableInputIsOneClearLine) {
  for (const char* input : {"missing.cu", "."}) {
    SCOPED_TRACE(input);
    const Outcome run = tool(std::string(input) + " out.cpp");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_EQ(
        run.err.rfind("gpulab-sim-translate: error: cannot read " + std::string(input) + ": ", 0),
        0u)
        << run.err;
    EXPECT_EQ(std::ranges::count(run.err, '\n'), 1) << run.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.cpp"));
  }
}

}  // namespace
