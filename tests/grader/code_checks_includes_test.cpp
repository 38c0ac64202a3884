// Unit tests of the code checks of what lab code includes (code_checks_includes.cpp): the compile
// command's words, the files the preprocessor enters, the allowlist of folders and files, and a
// staged submission checked with the real compilers (g++, and clang and nvcc where the machine
// has them), as `gpulab grade` checks a student's library.
#include "gpulab/grader/code_checks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "code_checks_support.hpp"
#include "gpulab/grader/staging.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using gpulab::testing::any_contains;
using gpulab::testing::joined;
using gpulab::testing::Lines;
using gpulab::testing::shell_quote;

TEST(ShellWords, SplitsAsShDoes) {
  EXPECT_EQ(shell_words("/usr/bin/c++ -DA=1  -I/x\\ y -o out.o -c f.cpp"),
            (Lines{"/usr/bin/c++", "-DA=1", "-I/x y", "-o", "out.o", "-c", "f.cpp"}));
  EXPECT_EQ(shell_words(R"(c++ -DID=\"lab01\" '-DT=a b' "-DQ=\"q\" \$x")"),
            (Lines{"c++", "-DID=\"lab01\"", "-DT=a b", "-DQ=\"q\" $x"}));
  EXPECT_TRUE(shell_words("   ").empty());
  EXPECT_THROW((void)shell_words("c++ 'open"), std::runtime_error);
  EXPECT_THROW((void)shell_words("c++ \"open"), std::runtime_error);
}

TEST(IncludedFiles, AreTheFilesTheLineMarkersEnter) {
  // As GCC's -E writes them: the main file and the built-ins without flags, an include entered
  // (1) and left (2), a system header (1 3 4), a #line directive (no flag), a name with an
  // escaped quote.
  const std::string preprocessed =
      "# 0 \"work.cu\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n"
      "# 1 \"/usr/include/stdc-predef.h\" 1 3 4\n# 0 \"<command-line>\" 2\n# 1 \"work.cu\"\n"
      "# 1 \"/src/labs/lab01_x/lab01.hpp\" 1\n#pragma once\nint f();\n"
      "# 1 \"/usr/include/c++/12/cmath\" 1 3\n# 2 \"/src/labs/lab01_x/lab01.hpp\" 2\n"
      "# 3 \"work.cu\" 2\n# 1 \"/sub/work.cu\"\nint x;\n"
      "# 1 \"/src/a \\\"b\\\".h\" 1\n# 1 \"/src/labs/lab01_x/lab01.hpp\" 1\n";
  EXPECT_EQ(included_files(preprocessed),
            (Lines{"/usr/include/stdc-predef.h", "/src/labs/lab01_x/lab01.hpp",
                   "/usr/include/c++/12/cmath", "/src/a \"b\".h"}));
  EXPECT_TRUE(included_files("int x;\n# 1 \"unterminated 1\n#pragma once\n").empty());
  // As clang's -E writes them: it enters its pseudo-files, which are no one's includes.
  EXPECT_EQ(included_files("# 1 \"work.cu\"\n# 1 \"<built-in>\" 1\n# 1 \"<command line>\" 1\n"
                           "# 1 \"<built-in>\" 2\n# 1 \"/src/h.hpp\" 1\n"),
            Lines{"/src/h.hpp"});
}

IncludeRules include_rules() {
  return {"/src",
          "/build",
          "/src/labs/lab01_x",
          "/build/grading/submission/lab01_x",
          "/hidden",
          "/build/sim_sources/gpulab.lab01.submission.sim",
          {"/usr/include/c++/12", "/usr/include"}};
}

TEST(CheckIncludes, TheLabsFolderTheFrameworkTheCatalogsHeadersAndTheSystemAreAllowed) {
  const Lines found = check_includes(
      "work.cu",
      {"/build/sim_sources/gpulab.lab01.submission.sim/build/grading/submission/lab01_x/"
       "work.cu.cpp",
       "/build/grading/submission/lab01_x/helper.cuh", "/src/labs/lab01_x/lab01.hpp",
       "/src/framework/core/include/gpulab/core/stats.hpp",
       "/src/framework/sim/include/cuda_runtime.h",
       "/src/kernels/include/gpulab/kernels/vector_add.hpp", "/usr/include/c++/12/vector",
       "/usr/include/stdio.h", "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h",
       "/usr/lib/gcc/x86_64-linux-gnu/12/include-fixed/limits.h",
       "/usr/lib/llvm-19/lib/clang/19/include/stdint.h",
       "/usr/lib/llvm-19/lib/clang/19/include/__stddef_size_t.h",
       "/usr/lib/llvm-19/lib/clang/19/include/__stdarg___gnuc_va_list.h"},
      include_rules());
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CheckIncludes, OfTheCompilersOwnHeadersOnlyTheFreestandingOnesAreAllowed) {
  const Lines found =
      check_includes("work.cu",
                     {"/usr/lib/gcc/x86_64-linux-gnu/12/include/xmmintrin.h",
                      "/usr/lib/gcc/x86_64-linux-gnu/12/include/immintrin.h",
                      "/usr/lib/gcc/x86_64-linux-gnu/12/include/sanitizer/asan_interface.h",
                      "/usr/lib/llvm-19/lib/clang/19/include/emmintrin.h",
                      "/usr/lib/llvm-19/lib/clang/19/include/__stddef_size_t.hpp",
                      "/usr/lib/llvm-19/lib/clang/19/include/__clang_cuda_intrinsics.h",
                      "/usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h"},
                     include_rules());
  ASSERT_EQ(found.size(), 6u) << joined(found);
  EXPECT_TRUE(any_contains(found, "xmmintrin.h (a header of the compiler's own")) << joined(found);
}

TEST(CheckIncludes, SolutionsTestsHiddenSuitesOtherLabsKernelsSourcesAndAnythingElseAreNot) {
  const Lines found = check_includes(
      "work.cu",
      {"/src/labs/lab01_x/../../solutions/lab01_x/work.cu", "/src/tests/labs/lab03/expect.hpp",
       "/hidden/lab01_x/hidden_test.cpp", "/src/labs/lab02_y/lab02.hpp",
       "/src/framework/grader/src/xml_text.hpp", "/build/grading/manifest.json",
       "/usr/include/gtest/gtest.h", "/src/kernels/attention/flash.cu",
       "/build/sim_sources/gpulab.lab01.solution.sim/src/solutions/lab01_x/work.cu.cpp",
       "/build/generated/kernel_table/table.cpp", "/tmp/answer.inc", "/usr/share/doc/x.h"},
      include_rules());
  ASSERT_EQ(found.size(), 12u) << joined(found);
  EXPECT_TRUE(any_contains(found,
                           "includes kernels/attention/flash.cu (a file of the "
                           "instructor's tree outside"))
      << joined(found);
  EXPECT_TRUE(any_contains(found,
                           "includes /tmp/answer.inc (a file outside the project and the "
                           "compilers' system include folders)"))
      << joined(found);
  EXPECT_EQ(found[0].rfind("work.cu: includes solutions/lab01_x/work.cu (a file of the "
                           "instructor's tree",
                           0),
            0u)
      << found[0];
  EXPECT_TRUE(any_contains(found, "includes /hidden/lab01_x/hidden_test.cpp (a hidden test)"))
      << joined(found);
  EXPECT_TRUE(any_contains(found, "(GoogleTest's headers)")) << joined(found);
  EXPECT_TRUE(any_contains(found, "(a file of the build that is not the lab's)")) << joined(found);
}

TEST(ForcedIncludes, ListsWhatTheCommandForcesInAsGccAndClangSpellIt) {
  EXPECT_EQ(forced_includes("c++ -DX -include /b/pch.hxx -c f.cpp -o f.o"), Lines{"/b/pch.hxx"});
  EXPECT_EQ(forced_includes("clang++ -Xclang -include-pch -Xclang /b/pch.hxx.pch -Xclang -include "
                            "-Xclang /b/pch.hxx -c f.cpp"),
            Lines{"/b/pch.hxx"});
  EXPECT_EQ(forced_includes("c++ -include 'a b.hxx' -include c.hxx -c f.cpp"),
            (Lines{"a b.hxx", "c.hxx"}));
  EXPECT_TRUE(forced_includes("c++ -Iinclude -c f.cpp -include").empty());
}

TEST(IsystemFolders, ListsTheSystemFoldersOfACommandInBothSpellings) {
  EXPECT_EQ(isystem_folders("c++ -I/a -isystem /opt/deps/usr/include -isystem/x -c f.cpp"),
            (Lines{"/opt/deps/usr/include", "/x"}));
  EXPECT_TRUE(isystem_folders("c++ -I/a -c f.cpp -isystem").empty());
}

TEST(StagedOrigin, ReadsTheNameInTheFirstLinesLineDirective) {
  EXPECT_EQ(staged_origin("#line 1 \"/sub/lab01/work.cu\"\nint x;\n"),
            fs::path("/sub/lab01/work.cu"));
  EXPECT_EQ(staged_origin(R"(#line 1 "/a \"quoted\" \\ dir/w.cu")"),
            fs::path(R"(/a "quoted" \ dir/w.cu)"));
  EXPECT_EQ(staged_origin("int x;\n#line 1 \"/sub/w.cu\"\n"), std::nullopt);
  EXPECT_EQ(staged_origin("#line 1 \"/sub/w.cu\n\"\n"), std::nullopt);
  EXPECT_EQ(staged_origin(""), std::nullopt);
}

// A submission from the instructor's tree (solutions/, the planted ones under tests/), staged as
// gpulab grade stages it, built with a precompiled header as CMake builds lab code, and listed by
// the real compiler: its own file and the forced-in header are not its includes, what it includes
// from solutions/ is; and preprocessed, an attribute hidden behind a macro is found on its line.
// nvcc's preprocessing differs from g++'s (its -M listed the #line file as a dependency), so it
// runs with nvcc too where the toolkit is; and with clang, whose precompiled header CMake builds
// and passes its own way (clang's -E then enters the header's source, cmake_pch.hxx.cxx).
enum class PchStyle { gcc, clang };

void expect_staged_submission_checked(const std::string& compiler, const std::string& language,
                                      PchStyle style = PchStyle::gcc) {
  const gpulab::testing::TempDir dir("gpulab-include-checks");
  const fs::path src = dir.path() / "src";
  const fs::path build = dir.path() / "build";
  // The system: everything under /usr (g++'s headers, and the CUDA toolkit's in /usr/local).
  const IncludeRules rules{src,
                           build,
                           src / "labs" / "lab01_x",
                           build / "grading" / "submission" / "lab01_x",
                           dir.path() / "hidden",
                           {},
                           {"/usr"}};
  fs::create_directories(src / "solutions" / "lab01_x");
  fs::create_directories(rules.lab_dir);  // on the include path, as the lab's folder is
  fs::create_directories(rules.staged_dir);
  const std::string target_dir = "CMakeFiles/gpulab.lab01.submission.dir";
  const fs::path pch = build / target_dir / "cmake_pch.hxx";
  fs::create_directories(pch.parent_path());
  std::ofstream(pch) << "#include <vector>\n";
  std::ofstream(pch.string() + ".cxx") << "/* empty */\n";
  std::ofstream(src / "solutions" / "lab01_x" / "answer.hpp")
      << "inline int answer() { return 42; }\n";
  // Each submission's first lines, and what the check must find (nothing: "").
  const std::pair<std::string, std::string> submissions[] = {
      {"", ""},
      {"#include \"../../solutions/lab01_x/answer.hpp\"\n",
       "work.cu: includes solutions/lab01_x/answer.hpp"},
      {"#define QUIET __attribute__((no_sanitize(\"kernel-address\")))\nQUIET\n",
       "work.cu:2: __attribute__((no_sanitize)): an attribute lab code may not use"}};
  for (const auto& [head, finding] : submissions) {
    SCOPED_TRACE("the submission starts with: " + head);
    const fs::path submitted = src / "solutions" / "lab01_x" / "work.cu";
    std::ofstream(submitted) << head << "int work() { return 1; }\n";
    const fs::path staged = rules.staged_dir / "work.cu";
    fs::remove(staged);
    ASSERT_TRUE(stage_student_file(submitted, staged));
    // As CMake compiles a target with a precompiled header: the header forced in, and a source
    // of CMake's own for it, both in the build. For clang, CMake builds the .pch from that source
    // first and passes it with the header.
    std::string flags = " -I" + shell_quote(rules.lab_dir.string());
    if (style == PchStyle::clang) {
      const gpulab::testing::Outcome built = gpulab::testing::run_command(
          "cd " + shell_quote(build.string()) + " && " + shell_quote(compiler) +
          " -x c++-header -Xclang -emit-pch -Xclang -include -Xclang " + shell_quote(pch.string()) +
          " -o " + shell_quote(pch.string() + ".pch") + " -c " +
          shell_quote(pch.string() + ".cxx"));
      ASSERT_EQ(built.exit_code, 0) << built.err;
      flags += " -Xclang -include-pch -Xclang " + shell_quote(pch.string() + ".pch") +
               " -Xclang -include -Xclang " + shell_quote(pch.string());
    } else {
      flags += " -include " + shell_quote(pch.string());
    }
    nlohmann::json database = nlohmann::json::array();
    database.push_back(
        {{"directory", build.string()},
         {"command", shell_quote(compiler) + " -x " + language + flags + " -c " +
                         shell_quote(staged.string()) + " -o " + target_dir + "/work.cu.o"},
         {"file", staged.string()}});
    database.push_back({{"directory", build.string()},
                        {"command", shell_quote(compiler) + " -x c++-header" + flags + " -c " +
                                        shell_quote(pch.string() + ".cxx") + " -o " + target_dir +
                                        "/cmake_pch.hxx.gch"},
                        {"file", pch.string() + ".cxx"}});
    std::ofstream(build / "compile_commands.json") << database.dump();
    const Lines found = check_library_sources("gpulab.lab01.submission", rules);
    if (finding.empty()) {
      EXPECT_TRUE(found.empty()) << joined(found);
    } else {
      ASSERT_EQ(found.size(), 1u) << joined(found);
      EXPECT_EQ(found[0].rfind(finding, 0), 0u) << found[0];
    }
  }
}

TEST(CheckLibraryIncludes, AStagedSubmissionIsNotItsOwnIncludeWithGcc) {
  expect_staged_submission_checked(GPULAB_CXX, "c++");
}

TEST(CheckLibraryIncludes, AStagedSubmissionIsNotItsOwnIncludeWithClangsPrecompiledHeader) {
  if (std::string(GPULAB_CLANGXX).empty()) {
    GTEST_SKIP() << "this machine has no clang++";
  }
  expect_staged_submission_checked(GPULAB_CLANGXX, "c++", PchStyle::clang);
}

TEST(CheckLibraryIncludes, AStagedSubmissionIsNotItsOwnIncludeWithNvcc) {
  if (std::string(GPULAB_NVCC).empty()) {
    GTEST_SKIP() << "this build has no CUDA toolkit (no nvcc)";
  }
  expect_staged_submission_checked(GPULAB_NVCC, "cu");
}

}  // namespace
}  // namespace gpulab
