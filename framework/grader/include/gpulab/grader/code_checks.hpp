// What the grader checks in the object code of a lab's student files before any test runs. Lab
// code may reference only what an allowlist names (every symbol its objects leave undefined):
//
//   - the C and C++ standard library without its process, thread-creation, signal, file,
//     environment and dynamic-loading functions (no exec*, fork, system, std::thread, dlopen,
//     fopen, std::filesystem, signal, syscall, exit ...): maths, memory, strings, formatted
//     output, containers, string streams, exceptions, clocks;
//   - the CUDA runtime (cuda*, or only CodeRules::cuda_calls, CUDA_CALLS in labs/CMakeLists.txt;
//     and nvcc's __cuda* registration), and on sim the built-ins its
//     translation of a kernel calls, not the sim's instruments (counting, the clock, the stream
//     record);
//   - the lab's own namespace, and the framework functions its contract allows
//     (CodeRules::allowed_calls, ALLOWED_CALLS in labs/CMakeLists.txt).
//
// Anything else rejects the lab with one line naming the symbol and the function that uses it.
// Besides: at most kMaxStaticBytes of writable static storage per object, no function in
// .preinit_array (it would run before the graded program locks itself
// down), no system call instruction of its own, nothing of GoogleTest (testing::) or of the
// tests' helpers, and no strong definition outside the lab's namespace (it could replace a test's
// helper at link time). Code that runs before main or at exit is fine: the graded test program
// is locked down before any of it runs and ends with _exit (tests/labs/graded_main.cpp).
//
// Separately, find_forbidden_calls lists the calls of framework functions the lab's contract says
// do its work: each fails the graded tests that cover the lab function whose work it does.
//
// The checks read `nm` and `objdump` output of the lab's student library (one archive member per
// student file).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// One symbol of an object file, as `nm` lists it.
struct ObjectSymbol {
  std::string name;  ///< mangled
  char type = '?';   ///< nm's letter: 'U' undefined, 'T' text, 'W' weak, ...
};

/// What one function's machine code refers to, as `objdump -dr` shows it.
struct FunctionCode {
  std::set<std::string> references;  ///< relocation targets (mangled; offsets removed)
  bool system_call = false;          ///< a syscall, sysenter or int $0x80 instruction
  /// Its first instructions ("mnemonic operands", spaces collapsed) beyond padding, landing pads
  /// (endbr64) and the prologue's stack frame set-up (push/pop of a register, sub/add on %rsp
  /// before any other instruction): at most 8.
  std::vector<std::string> work;
  int work_instructions = 0;  ///< all of them, counted
};

/// One object file of the student library.
struct ObjectCode {
  std::string member;  ///< e.g. "benchmark.cu.cpp.o"
  std::vector<ObjectSymbol> symbols;
  std::map<std::string, FunctionCode> functions;  ///< by mangled name
  int preinit_entries = 0;                        ///< function pointers in .preinit_array
  /// Bytes of writable static storage: .data and .bss sections (not thread-local ones).
  std::uint64_t static_bytes = 0;
};

/// The most writable static storage an object of lab code may have (64 KiB): its data belongs in
/// the device buffers and allocations the tests measure (on sim a __device__ array is host memory
/// that neither the memory accounting nor the counted traffic sees). A kernel's __shared__ arrays
/// are thread-local on sim and not counted.
inline constexpr std::uint64_t kMaxStaticBytes = std::uint64_t{64} * 1024;

/// What a lab's code may do.
struct CodeRules {
  std::string lab_namespace;  ///< "gpulab::lab01": where every strong definition must be
  /// The lab's contract: framework functions lab code must not call (demangled name prefixes,
  /// e.g. "gpulab::summarize(").
  std::vector<std::string> forbidden_calls;
  bool nvcc = false;  ///< objects compiled by nvcc (their __device__ functions' host stand-ins)
  /// The lab's contract: framework functions lab code may call (demangled name prefixes, e.g.
  /// "gpulab::flush_l2(" or "gpulab::kernels::"); everything under the lab's namespace may be.
  std::vector<std::string> allowed_calls;
  /// The lab's contract: the CUDA runtime functions its code may call, by name (e.g.
  /// "cudaGetLastError"); empty: all of them. nvcc's own __cuda* calls are always allowed.
  std::vector<std::string> cuda_calls{};
};

/// Parses `nm -A ARCHIVE`, `objdump -dr ARCHIVE` and `objdump -h ARCHIVE` into one ObjectCode per
/// member. Throws std::runtime_error on text that is not such output.
[[nodiscard]] std::vector<ObjectCode> parse_object_code(std::string_view nm,
                                                        std::string_view disassembly,
                                                        std::string_view headers);

/// Runs nm and objdump (the paths the build found) on a static library and parses what they say.
/// Throws std::runtime_error when a tool fails.
[[nodiscard]] std::vector<ObjectCode> read_object_code(const std::filesystem::path& archive,
                                                       const std::filesystem::path& nm,
                                                       const std::filesystem::path& objdump);

/// Every rule `objects` break (forbidden calls apart: find_forbidden_calls), one line each: the
/// student's file, the function and what it does, e.g. "benchmark.cu:
/// gpulab::lab01::time_kernel(...) calls exit: lab code must not end the process". Empty when the
/// code may be graded.
[[nodiscard]] std::vector<std::string> check_object_code(const std::vector<ObjectCode>& objects,
                                                         const CodeRules& rules);

/// A call of a framework function the lab's contract forbids (CodeRules::forbidden_calls).
struct ForbiddenCall {
  std::string file;  ///< the student's file, e.g. "benchmark.cu"
  std::string call;  ///< demangled, e.g. "gpulab::summarize(std::span<double const, ...>)"
};

/// Every forbidden call in `objects`, once per file and function called (the object code says
/// which file calls it, not which of its functions: the compiler inlines one into another).
[[nodiscard]] std::vector<ForbiddenCall> find_forbidden_calls(
    const std::vector<ObjectCode>& objects, const CodeRules& rules);

/// A mangled C++ name demangled (the name itself when it is not a C++ name).
[[nodiscard]] std::string demangle(const std::string& name);

}  // namespace gpulab

namespace gpulab {

// ---- includes -------------------------------------------------------------------------------

/// Where a lab's student files may take their includes from, an allowlist: the lab's own folder
/// (labs/<dir> and the staged copy of the submission), the framework's public headers
/// (framework/<module>/include), the kernel catalog's headers (kernels/**/*.hpp, .h, .cuh: not
/// its sources), the sim's translation of the file itself, and the compilers' system include
/// folders (GoogleTest's headers excepted). Nothing else: not solutions/, tests/, the hidden
/// suites, other labs, the catalog's kernels, any other file of the build (another variant's
/// translation, another slot's files) and no file elsewhere on the machine.
struct IncludeRules {
  std::filesystem::path source_dir;  ///< the instructor's tree
  std::filesystem::path build_dir;   ///< the build
  std::filesystem::path lab_dir;     ///< <source>/labs/<dir>
  std::filesystem::path
      staged_dir;  ///< where the graded files are: <build>/grading/slot<N>/submission/<dir>
  std::filesystem::path extra_tests_dir;  ///< the hidden suites (may be outside both trees)
  /// The sim's translation of the library's files (<build>/sim_sources/<library target>);
  /// check_library_sources sets it.
  std::filesystem::path translated_dir;
  /// The compilers' include folders (LabManifest::system_include_dirs), and check_library_sources
  /// adds each -isystem folder of the compile command (an imported package's headers).
  std::vector<std::filesystem::path> system_dirs;
};

/// The words of a shell command line (compile_commands.json's "command"): blanks separate words;
/// single quotes, double quotes and backslashes quote as sh does.
[[nodiscard]] std::vector<std::string> shell_words(std::string_view command);

/// The files a preprocessor's output includes: each name its line markers enter (`# 1 "a.h" 1`,
/// flag 1; not the main file's marker or a #line directive's), once each, in order, as written.
/// GCC's and nvcc's -E name exactly the files their -M lists.
[[nodiscard]] std::vector<std::string> included_files(std::string_view preprocessed);

/// The files a compile command forces into every source (`-include FILE`, and clang's `-Xclang
/// -include -Xclang FILE`), as written: the build's precompiled header, not the student's.
[[nodiscard]] std::vector<std::string> forced_includes(std::string_view command);

/// The folders a compile command searches as system headers (`-isystem DIR`, `-isystemDIR`), as
/// written: an imported package's headers.
[[nodiscard]] std::vector<std::string> isystem_folders(std::string_view command);

/// The file a staged source says it was copied from: the name in its first line, `#line 1
/// "<path>"` (staging.hpp's stage_student_file writes it), unescaped; nullopt without one.
/// The preprocessor's markers name it: it is the submitted file, not an include.
[[nodiscard]] std::optional<std::filesystem::path> staged_origin(std::string_view text);

/// One line per include `file` must not use, e.g. "benchmark.cu: includes
/// solutions/lab01_benchmarking/benchmark.cu: ...". `dependencies` are absolute paths.
[[nodiscard]] std::vector<std::string> check_includes(const std::string& file,
                                                      const std::vector<std::string>& dependencies,
                                                      const IncludeRules& rules);

/// A preprocessing directive of a source file: its line and its name ("include", "line", "42" for
/// a GCC line marker `# 42 "file"`, "" for a null directive).
struct SourceDirective {
  int line = 0;
  std::string name;
};

/// The directives of a source file as the preprocessor sees them: a `#` (or `%:`) first on a
/// line after blanks and comments, lines continued with a backslash joined; not inside comments,
/// string, character or raw string literals.
[[nodiscard]] std::vector<SourceDirective> source_directives(std::string_view source);

/// One line per directive of a student file (`source`, its first line skipped when staging put
/// a `#line 1 "<origin>"` there) that renames its lines: `#line` and GCC's line markers
/// (`# 1 "/usr/include/stdio.h" 1`). The checks of its own lines (check_preprocessed) and of its
/// includes find them by the compiler's markers, which such a directive forges. E.g.
/// "attention.cu:12: a #line directive: lab code may not rename its lines (...)".
[[nodiscard]] std::vector<std::string> check_line_directives(const std::string& file,
                                                             std::string_view source);

/// What a student file's own lines (`preprocessed`: the compiler's -E output, whose line markers
/// say which file each line comes from; `own_files`: the names it may give the student's file)
/// must not hold, an allowlist again: inline assembly (asm: it could make system calls or embed any
/// file of the machine with .incbin), pragmas other than loop unrolling and diagnostics, and
/// attributes other than the ones a CUDA C++ lab needs (not no_sanitize, optimize or target,
/// which take code out of the sim's counting and checks; not section, alias, weak or weakref).
/// Macros are expanded, so a macro that spells one is found too. One line per finding, e.g.
/// "attention.cu:57: __attribute__((no_sanitize)): an attribute lab code may not use (...)".
[[nodiscard]] std::vector<std::string> check_preprocessed(
    const std::string& file, std::string_view preprocessed,
    const std::vector<std::filesystem::path>& own_files);

/// Runs the compile command of each source of `library_target` (from
/// <build>/compile_commands.json) with -E instead of -o, once, and checks what it includes
/// (included_files; not the student's file under the names a staged copy gives it, staged_origin,
/// not what the command forces in, forced_includes, and not CMake's own sources, the precompiled
/// header's, under CMakeFiles/) and the student's own lines (check_preprocessed). Throws
/// std::runtime_error when the commands cannot be read or run.
[[nodiscard]] std::vector<std::string> check_library_sources(const std::string& library_target,
                                                             const IncludeRules& rules);

}  // namespace gpulab
