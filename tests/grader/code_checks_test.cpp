// Unit tests of code_checks.hpp on real object code: each case is a small file compiled with this
// build's compiler (-O2, as a lab's code is) into a static library, read with nm and objdump as
// `gpulab grade` reads a student's library, and checked against the rules of a lab "lab09".
#include "gpulab/grader/code_checks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "code_checks_support.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using gpulab::testing::any_contains;
using gpulab::testing::joined;
using gpulab::testing::Lines;
using gpulab::testing::shell_quote;

// `source` compiled as lab code (-O2, into an archive, as the labs' student libraries are) and
// read back; empty (with a test failure) when it does not compile. By g++ as <name>.cpp, or with
// `nvcc` by nvcc as <name> (a .cu file).
std::vector<gpulab::ObjectCode> compile_lab_code(const std::string& source,
                                                 const std::string& name = "work.cu",
                                                 bool nvcc = false, const std::string& flags = "") {
  const gpulab::testing::TempDir dir("gpulab-code-checks");
  const fs::path file = dir.path() / (nvcc ? name : name + ".cpp");
  std::ofstream(file) << source;
  const fs::path object = dir.path() / (file.filename().string() + ".o");
  const fs::path archive = dir.path() / "lib.a";
  const auto compile = gpulab::testing::run_command(
      shell_quote(nvcc ? GPULAB_NVCC : GPULAB_CXX) + " -std=c++20 -O2 -g " + flags + " -c " +
      shell_quote(file.string()) + " -o " + shell_quote(object.string()) + " && " +
      shell_quote(GPULAB_AR) + " rcs " + shell_quote(archive.string()) + " " +
      shell_quote(object.string()));
  if (compile.exit_code != 0) {
    ADD_FAILURE() << "the case did not compile:\n" << compile.out;
    return {};
  }
  return read_object_code(archive, GPULAB_NM, GPULAB_OBJDUMP);
}

Lines check(const std::string& source, CodeRules rules = {"gpulab::lab09", {}, false, {}},
            const std::string& name = "work.cu") {
  return check_object_code(compile_lab_code(source, name), rules);
}

TEST(CodeChecks, ALabsCudaCallsNameTheRuntimeFunctionsItsCodeMayUse) {
  // As nvcc's objects name them (C linkage) and as the sim's do (C++ functions of the global
  // namespace).
  const std::string source = R"cpp(
    extern "C" int cudaMemcpy(void*, const void*, unsigned long, int);
    extern "C" int cudaGetLastError();
    int cudaMallocHost(void**, unsigned long);
    namespace gpulab::lab09 {
    int copy_back(float* host, const float* device) {
      void* pinned = nullptr;
      return cudaGetLastError() + cudaMemcpy(host, device, 4, 2) + cudaMallocHost(&pinned, 4);
    }
    }  // namespace gpulab::lab09
  )cpp";
  EXPECT_TRUE(check(source).empty()) << "without CUDA_CALLS, the whole runtime";
  CodeRules rules{"gpulab::lab09", {}, false, {}, {"cudaGetLastError", "cudaLaunchKernel"}};
  const Lines found = check(source, rules);
  ASSERT_EQ(found.size(), 2u) << joined(found);
  EXPECT_TRUE(any_contains(found,
                           "calls cudaMemcpy: not among the CUDA runtime functions this "
                           "lab's code may use"))
      << joined(found);
  EXPECT_TRUE(any_contains(found,
                           "calls cudaMallocHost(void**, unsigned long): not among the "
                           "CUDA runtime functions"))
      << joined(found);
}

TEST(CodeChecks, StaticStorageBeyond64KiBIsFoundThreadLocalIsNot) {
  // A __device__ array is a global on sim; a kernel's __shared__ array is thread-local there.
  const Lines big = check(R"cpp(
    namespace gpulab::lab09 {
    namespace {
    float scratch[1 << 17];  // 512 KiB
    thread_local float shared_tile[1 << 15];
    }  // namespace
    float* use() {
      shared_tile[0] = 1;
      return scratch;
    }
    }  // namespace gpulab::lab09
  )cpp");
  ASSERT_EQ(big.size(), 1u) << joined(big);
  EXPECT_TRUE(any_contains(big, "work.cu: 524288 bytes of writable variables of static storage"))
      << joined(big);
  const Lines small = check(R"cpp(
    namespace gpulab::lab09 {
    namespace {
    float table[1 << 10];
    thread_local float shared_tile[1 << 15];
    }  // namespace
    float* use() {
      shared_tile[0] = 1;
      return table;
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(small.empty()) << joined(small);
}

TEST(CodeChecks, OrdinaryLabCodePasses) {
  const Lines found = check(R"cpp(
#include <algorithm>
#include <array>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
    namespace gpulab::lab09 {
    namespace {
    double twice(double x) {
      return 2 * x;
    }
    }  // namespace
    struct Summary {
      double mean = 0;
      std::string name;
    };
    double total(const std::vector<double>& xs) {
      static constexpr std::array<double, 2> kWeights = {1.0, 2.0};
      std::vector<double> sorted = xs;
      std::sort(sorted.begin(), sorted.end());
      if (sorted.empty()) {
        throw std::invalid_argument("empty");
      }
      std::cout << sorted.size() << "\n";
      return twice(sorted.front()) * kWeights[1];
    }
    Summary summarize(const std::vector<double>& xs) {
      return {total(xs), "x"};
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CodeChecks, AFunctionNotOnTheAllowlistIsNamedWithItsCaller) {
  const Lines found = check(R"cpp(
#include <cstdlib>
    namespace gpulab::lab09 {
    double f(int n) {
      if (n == 42) {
        std::_Exit(0);
      }
      return n;
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(any_contains(found,
                           "work.cu: gpulab::lab09::f(int) calls _Exit: not among what "
                           "lab code may use"))
      << joined(found);
}

TEST(CodeChecks, NvccsHostStandInsForDeviceCodeAreNotLabCodeEndingTheProcess) {
  if (std::string(GPULAB_NVCC).empty()) {
    GTEST_SKIP() << "this build has no CUDA toolkit (no nvcc)";
  }
  // nvcc compiles a __device__ function for the host as a body that calls exit(1), and launches a
  // kernel through a stub named __device_stub__<the kernel's mangled name> in no namespace.
  const std::string kernels = R"cpp(
#include <cstdlib>
    namespace gpulab::lab09 {
    namespace {
    __device__ float twice(float x) {
      return 2 * x;
    }
    __global__ void scale(float* data, int n) {
      const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
      if (i < n) {
        data[i] = twice(data[i]);
      }
    }
    }  // namespace
    void run(float* data, int n) {
      scale<<<(n + 255) / 256, 256>>>(data, n);
    }
  )cpp";
  const CodeRules rules{"gpulab::lab09", {}, true, {}};
  const Lines found = check_object_code(
      compile_lab_code(kernels + "}  // namespace gpulab::lab09\n", "work.cu", true), rules);
  EXPECT_TRUE(found.empty()) << joined(found);
  // Ubuntu's GCC builds with -fcf-protection: every function starts with an endbr64 landing pad.
  const std::vector<gpulab::ObjectCode> protected_code = compile_lab_code(
      kernels + "}  // namespace gpulab::lab09\n", "work.cu", true, "-Xcompiler=-fcf-protection");
  const Lines protected_found = check_object_code(protected_code, rules);
  EXPECT_TRUE(protected_found.empty()) << joined(protected_found);
  // The stand-in is there (and calls exit): what was excused exists.
  bool stand_in = false;
  for (const gpulab::ObjectCode& object : protected_code) {
    for (const auto& [name, code] : object.functions) {
      stand_in =
          stand_in || (name.find("twice") != std::string::npos && code.references.contains("exit"));
    }
  }
  EXPECT_TRUE(stand_in) << "nvcc made no host stand-in of twice(float)";
  // Host code that ends the process is still found, and a kernel outside the lab's namespace.
  const Lines ending = check_object_code(
      compile_lab_code(kernels + "void stop() { std::exit(1); }\n}\n__global__ void outside() {}\n",
                       "work.cu", true),
      rules);
  EXPECT_TRUE(any_contains(ending, "gpulab::lab09::stop() calls exit: not among"))
      << joined(ending);
  // Host code written like the stand-in, but ending the process with status 0, is found too.
  const Lines zero = check_object_code(
      compile_lab_code(kernels + "void stop() { volatile int one = 1; std::exit(one - 1); }\n}\n",
                       "work.cu", true),
      rules);
  EXPECT_TRUE(any_contains(zero, "gpulab::lab09::stop() calls exit: not among")) << joined(zero);
  EXPECT_TRUE(any_contains(ending, "outside namespace gpulab::lab09")) << joined(ending);
}

TEST(CodeChecks, StaticObjectsAndCodeBeforeMainAreFine) {
  // The graded program locks itself down before any static initializer and ends with _exit:
  // a static cache, a namespace-scope string and a constructor function are honest code.
  const Lines found = check(R"cpp(
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
    namespace gpulab::lab09 {
    const std::string kName = "lab09";
    std::vector<double> g_table = {1, 2, 3};
    __attribute__((constructor)) void early() {
      std::puts("x");
    }
    double f(int n) {
      static std::unordered_map<int, double> cache;
      static const std::map<int, std::string> names = {{1, "one"}};
      auto [it, inserted] = cache.try_emplace(n, n * 2.0);
      return it->second + g_table[0] + static_cast<double>(names.size() + kName.size());
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CodeChecks, HonestUsesOfTheStandardLibraryAreAllowed) {
  // What students write (found by playing one): streams and getline, character classes, long
  // double and float maths, regular expressions, shared and weak pointers, std::any and
  // std::variant, a shared_mutex-guarded cache, dynamic_cast, a namespace-scope string.
  const Lines found = check(R"cpp(
#include <any>
#include <cctype>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <variant>
#include <vector>
    namespace gpulab::lab09 {
    const std::string kUnits = "ms";
    std::string a(const std::string& text) {
      std::istringstream in(text);
      std::string line;
      std::getline(in, line);
      std::string word;
      in >> word;
      double x = 0;
      in >> x;
      return line + word + std::to_string(x) + kUnits;
    }
    void b(double x) {
      std::cout << "value " << std::setprecision(3) << std::fixed << x << '\n' << std::endl;
      std::cerr << std::string("s") << std::scientific << x;
    }
    bool c(const std::string& s) {
      for (const char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        if (std::isspace(u) || std::isdigit(u) || std::isalpha(u) || std::toupper(u) == 'A' ||
            std::tolower(u) == 'a') {
          return true;
        }
      }
      return false;
    }
    double d(const std::string& s) {
      char buf[64];
      const auto r = std::to_chars(buf, buf + 64, 1.5);
      return std::stod(s) + std::stoi(s) + static_cast<double>(r.ptr - buf);
    }
    double e(int i) {
      std::variant<int, double> v;
      if (i) {
        v = 1.5;
      } else {
        v = 2;
      }
      std::any any = i;
      auto p = std::make_shared<double>(1.0);
      std::weak_ptr<double> w = p;
      return std::visit([](auto y) { return static_cast<double>(y); }, v) +
             std::any_cast<int>(any) + *w.lock();
    }
    bool f(const std::string& s) {
      return std::regex_match(s, std::regex("[a-z]+"));
    }
    float g(float x) {
      return static_cast<float>(std::lround(x)) + std::tgamma(x) + std::nearbyint(x) +
             std::remainder(x, 2.0f) + std::asinh(x) + std::sqrt(x);
    }
    long double h(long double x) {
      return std::pow(x, 2.0L) + std::exp(x) + std::log(x) + std::sqrt(x);
    }
    char* i(char* s) {
      return std::strtok(s, ",");
    }
    double j(int n) {
      static std::shared_mutex lock;
      static std::map<int, double> cache;
      {
        std::shared_lock read(lock);
        if (auto it = cache.find(n); it != cache.end()) {
          return it->second;
        }
      }
      std::unique_lock write(lock);
      return cache[n] = n * 2.0;
    }
    struct Shape {
      virtual ~Shape() = default;
      virtual double area() const = 0;
    };
    struct Square : Shape {
      double side = 1;
      double area() const override { return side * side; }
    };
    double k(const Shape& shape) {
      const auto* square = dynamic_cast<const Square*>(&shape);
      return square != nullptr ? square->side : shape.area();
    }
    long l() {
      return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CodeChecks, AsTheSimCompilesItANamespaceScopeStringAndArithmeticAreFine) {
  // The sim's translation of a .cu file is built with the counting instrumentation, which calls
  // __asan_{before,after}_dynamic_init around a file's dynamic initialization, and (with GCC's
  // plugin headers) adds to gpulab_sim_ops in every basic block that computes.
  const Lines found = check_object_code(compile_lab_code(
                                            R"cpp(
#include <string>
                                              namespace gpulab::lab09 {
                                              const std::string kUnits = "ms";
                                              std::size_t f() {
                                                return kUnits.size();
                                              }
                                              float g(const float* p, int n) {
                                                float s = 0.0f;
                                                for (int i = 0; i < n; ++i) {
                                                  s = s * p[i] + 1.0f;
                                                }
                                                return s;
                                              }
                                              }  // namespace gpulab::lab09
                                            )cpp",
                                            "work.cu", false, GPULAB_SIM_FLAGS),
                                        {"gpulab::lab09", {}, false, {}});
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CodeChecks, ClangsCallsInPlaceOfTheCLibrarysAreAllowed) {
  // clang calls bcmp where a memcmp's result is only compared with 0 (an std::string's ==).
  const Lines found = check(R"cpp(
#include <strings.h>
    namespace gpulab::lab09 {
    bool same(const char* a, const char* b) {
      return bcmp(a, b, 16) == 0;
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(CodeChecks, AnIndirectFunctionsResolverWouldRunBeforeTheLockdown) {
  const Lines found = check(R"cpp(
    namespace gpulab::lab09 {
    int early_impl() {
      return 1;
    }
    extern "C" void* gpulab_lab09_resolve() {
      return reinterpret_cast<void*>(&early_impl);
    }
    int early() __attribute__((ifunc("gpulab_lab09_resolve")));
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(any_contains(found, "as an indirect function (ifunc)")) << joined(found);
}

TEST(CodeChecks, AFunctionInPreinitArrayWouldRunBeforeTheLockdown) {
  const Lines found = check(R"cpp(
#include <cstdio>
    namespace gpulab::lab09 {
    void early(int, char**, char**) {
      std::puts("x");
    }
    [[gnu::used, gnu::section(".preinit_array")]] void (*const entry)(int, char**, char**) = &early;
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(any_contains(found, "a function in .preinit_array")) << joined(found);
}

TEST(CodeChecks, ASystemCallInstructionIsFound) {
  const Lines found = check(R"cpp(
    namespace gpulab::lab09 {
    long f(long code) {
      long r;
      asm volatile("syscall" : "=a"(r) : "a"(231), "D"(code));
      return r;
    }
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(any_contains(found, "gpulab::lab09::f(long) makes a system call")) << joined(found);
}

TEST(CodeChecks, ProcessesThreadsSignalsFilesAndLoadingCodeAreNotAllowed) {
  // Each is named with what uses it, whatever member of its family it is: the allowlist does not
  // know them, it only knows what is allowed.
  const Lines found = check(R"cpp(
#include <dlfcn.h>
#include <signal.h>
#include <threads.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
    extern char** environ;
    namespace gpulab::lab09 {
    int a() {
      return std::system("true");
    }
    int b() {
      return fork();
    }
    void* c() {
      return dlsym(nullptr, "exit");
    }
    void d() {
      std::thread t([] {});
      t.join();
    }
    int e(char* const* argv) {
      return execvpe("true", argv, environ);
    }
    int f() {
      thrd_t t;
      return thrd_create(
          &t, [](void*) { return 0; }, nullptr);
    }
    void g() {
      signal(SIGALRM, SIG_IGN);
    }
    bool h() {
      std::ofstream("x") << 1;
      return std::filesystem::remove("y");
    }
    std::FILE* i() {
      return std::fopen("/etc/passwd", "r");
    }
    }  // namespace gpulab::lab09
  )cpp");
  for (const char* call : {"gpulab::lab09::a() calls system", "gpulab::lab09::b() calls fork",
                           "gpulab::lab09::c() calls dlsym", "calls std::thread::_M_start_thread",
                           "gpulab::lab09::e(char* const*) calls execvpe", "calls thrd_create",
                           "calls signal", "calls std::filesystem", "calls fopen"}) {
    EXPECT_TRUE(any_contains(found, call)) << call << joined(found);
  }
}

TEST(CodeChecks, TheFrameworkIsAllowedWhereTheLabsContractSaysSo) {
  // The sim's instruments (counting, the modeled clock) are not lab code's to switch; a framework
  // function the lab allows is fine.
  const std::string source = R"cpp(
    namespace gpulab {
    void flush_l2(void*);
    namespace sim {
    bool set_counting(bool on) noexcept;
    }
    }  // namespace gpulab
    namespace gpulab::lab09 {
    void f() {
      gpulab::flush_l2(nullptr);
      gpulab::sim::set_counting(false);
    }
    }  // namespace gpulab::lab09
  )cpp";
  const Lines found = check(source, {"gpulab::lab09", {}, false, {"gpulab::flush_l2("}});
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_TRUE(any_contains(found, "calls gpulab::sim::set_counting(bool)")) << joined(found);
  EXPECT_EQ(check(source).size(), 2u) << "without ALLOWED_CALLS, flush_l2 is not allowed either";
}

TEST(CodeChecks, ReplacingATestHelperIsFound) {
  const Lines found = check(R"cpp(
    namespace testing {
    class AssertionResult;
    }
    namespace testing::internal {
    template <typename A, typename B>
    int CmpHelperOpFailure(const A&, const B&) {
      return 0;
    }
    template <>
    int CmpHelperOpFailure<double, double>(const double&, const double&) {
      return 1;
    }
    }  // namespace testing::internal
    namespace gpulab::lab03_expect {
    bool near_rel(double, double, double) {
      return true;
    }
    }  // namespace gpulab::lab03_expect
  )cpp");
  EXPECT_TRUE(any_contains(found,
                           "defines int testing::internal::CmpHelperOpFailure<double, "
                           "double>(double const&, double const&): lab code must not call "
                           "or replace the test framework (GoogleTest) or the tests' "
                           "helpers"))
      << joined(found);
  EXPECT_TRUE(any_contains(found,
                           "defines gpulab::lab03_expect::near_rel(double, double, "
                           "double) outside namespace gpulab::lab09"))
      << joined(found);
}

TEST(ForbiddenCalls, EachCallIsNamedWithItsFile) {
  // summarize is called twice (once through a helper), quantile is declared and never called.
  const std::string source = R"cpp(
#include <vector>
    namespace gpulab {
    double summarize(const std::vector<double>&);
    double quantile(const std::vector<double>&, double);
    }  // namespace gpulab
    namespace gpulab::lab09 {
    namespace {
    [[gnu::noinline]] double helper(const std::vector<double>& x) {
      return gpulab::summarize(x);
    }
    }  // namespace
    double f(const std::vector<double>& x) {
      return gpulab::summarize(x);
    }
    double g(const std::vector<double>& x) {
      return helper(x) + 1;
    }
    }  // namespace gpulab::lab09
  )cpp";
  const CodeRules rules{"gpulab::lab09", {"gpulab::quantile(", "gpulab::summarize("}, false, {}};
  const std::vector<gpulab::ObjectCode> objects = compile_lab_code(source, "stats");
  const std::vector<ForbiddenCall> calls = find_forbidden_calls(objects, rules);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].file, "stats.cpp");
  EXPECT_EQ(calls[0].call,
            "gpulab::summarize(std::vector<double, std::allocator<double> > const&)");
  EXPECT_TRUE(check_object_code(objects, rules).empty())
      << "a forbidden call is not a rule broken: it fails the tests of the work it does";
  EXPECT_TRUE(find_forbidden_calls(objects, {"gpulab::lab09", {}, false, {}}).empty())
      << "without the rule the call is allowed";
}

TEST(CodeChecks, TheFileIsNamedAsTheStudentWroteIt) {
  const Lines found = check("#include <cstdlib>\nvoid f() { std::exit(1); }\n",
                            {"gpulab::lab09", {}, false, {}}, "bottleneck");
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().rfind("bottleneck.cpp: ", 0), 0u) << joined(found);
}

TEST(ParseObjectCode, ReadsNmObjdumpAndSectionHeaders) {
  const std::vector<ObjectCode> objects = parse_object_code(
      "/a b/lib.a:x.cu.cpp.o:0000000000000000 T _ZN6gpulab5lab091fEi\n"
      "/a b/lib.a:x.cu.cpp.o:                 U exit\n",
      "In archive /a b/lib.a:\n\nx.cu.cpp.o:     file format elf64-x86-64\n\n"
      "Disassembly of section .text:\n\n"
      "0000000000000000 <_ZN6gpulab5lab091fEi>:\n"
      "   0:\tf3 0f 1e fa          \tendbr64\n"
      "   4:\te8 00 00 00 00       \tcall   9 <_ZN6gpulab5lab091fEi+0x9>\n"
      "\t\t\t5: R_X86_64_PLT32\texit-0x4\n"
      "   9:\t0f 05                \tsyscall\n",
      "In archive /a b/lib.a:\n\nx.cu.cpp.o:     file format elf64-x86-64\n\n"
      "Sections:\nIdx Name          Size      VMA               LMA               File off  "
      "Algn\n  0 .text         00000010  0000000000000000  0000000000000000  00000040  2**4\n"
      "  4 .init_array   00000010  0000000000000000  0000000000000000  00000088  2**3\n"
      "  5 .preinit_array 00000008  0000000000000000  0000000000000000  00000098  2**3\n");
  ASSERT_EQ(objects.size(), 1u);
  const ObjectCode& object = objects[0];
  EXPECT_EQ(object.member, "x.cu.cpp.o");
  ASSERT_EQ(object.symbols.size(), 2u);
  EXPECT_EQ(object.symbols[0].name, "_ZN6gpulab5lab091fEi");
  EXPECT_EQ(object.symbols[0].type, 'T');
  EXPECT_EQ(object.symbols[1].type, 'U');
  ASSERT_EQ(object.functions.count("_ZN6gpulab5lab091fEi"), 1u);
  const FunctionCode& f = object.functions.at("_ZN6gpulab5lab091fEi");
  EXPECT_EQ(f.references, (std::set<std::string>{"exit"}));
  EXPECT_TRUE(f.system_call);
  EXPECT_EQ(object.preinit_entries, 1) << ".init_array is not .preinit_array";
}

TEST(ParseObjectCode, ReadsLlvmsNmAndObjdumpToo) {
  // llvm-nm and llvm-objdump (a Clang build's CMAKE_NM and CMAKE_OBJDUMP) lay lines out
  // differently.
  const std::vector<ObjectCode> objects = parse_object_code(
      "lib.a:x.cpp.o: 0000000000000000 T _ZN6gpulab5lab091fEi\n"
      "lib.a:x.cpp.o:                  U exit\n",
      "\nlib.a(x.cpp.o):\tfile format elf64-x86-64\n\nDisassembly of section .text:\n\n"
      "0000000000000000 <_ZN6gpulab5lab091fEi>:\n"
      "       0: 53                           \tpushq\t%rbx\n"
      "       1: e8 00 00 00 00               \tcallq\t0x6 <_ZN6gpulab5lab091fEi+0x6>\n"
      "\t\t0000000000000002:  R_X86_64_PLT32\texit-0x4\n"
      "       6: 0f 05                        \tsyscall\n",
      "\nlib.a(x.cpp.o):\tfile format elf64-x86-64\n\nSections:\n"
      "Idx Name          Size     VMA              Type\n"
      "  2 .text         00000010 0000000000000000 TEXT\n"
      "  5 .preinit_array 00000008 0000000000000000 \n");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].member, "x.cpp.o");
  ASSERT_EQ(objects[0].symbols.size(), 2u);
  EXPECT_EQ(objects[0].symbols[1].name, "exit");
  const FunctionCode& f = objects[0].functions.at("_ZN6gpulab5lab091fEi");
  EXPECT_EQ(f.references, (std::set<std::string>{"exit"}));
  EXPECT_TRUE(f.system_call);
  EXPECT_EQ(objects[0].preinit_entries, 1);
}

TEST(ParseObjectCode, NvccsStandInIsKnownInsideAnyFrame) {
  // A __device__ function's host stand-in as Ubuntu 24.04's GCC 13 (nvcc 13.0, binutils 2.42)
  // compiles it, seen on the GPU machine: endbr64 and a push/pop probe around Debian's four.
  const auto stand_in = [](const std::string& argument) {
    return parse_object_code(
        "lib.a:work.cu.o:0000000000000010 t _ZN6gpulab5lab0912_GLOBAL__N_15twiceEf\n"
        "lib.a:work.cu.o:                 U exit\n",
        "In archive lib.a:\n\nwork.cu.o:     file format elf64-x86-64\n\n"
        "Disassembly of section .text:\n\n"
        "0000000000000010 <_ZN6gpulab5lab0912_GLOBAL__N_15twiceEf>:\n"
        "  10:\tf3 0f 1e fa          \tendbr64\n"
        "  14:\t50                   \tpush   %rax\n"
        "  15:\t58                   \tpop    %rax\n"
        "  16:\t48 83 ec 18          \tsub    $0x18,%rsp\n"
        "  1a:\tc7 44 24 0c 01 00 00 \tmovl   $0x1,0xc(%rsp)\n"
        "  21:\t00 \n" +
            argument +
            "  26:\te8 00 00 00 00       \tcall   2b "
            "<_ZN6gpulab5lab0912_GLOBAL__N_15twiceEf+0x1b>\n"
            "\t\t\t27: R_X86_64_PLT32\texit-0x4\n"
            "  2b:\t0f 1f 44 00 00       \tnopl   0x0(%rax,%rax,1)\n",
        "In archive lib.a:\n\nwork.cu.o:     file format elf64-x86-64\n\n");
  };
  const CodeRules nvcc{"gpulab::lab09", {}, true, {}};
  const std::vector<ObjectCode> excused =
      stand_in("  22:\t8b 7c 24 0c          \tmov    0xc(%rsp),%edi\n");
  EXPECT_EQ(excused.at(0).functions.at("_ZN6gpulab5lab0912_GLOBAL__N_15twiceEf").work,
            (std::vector<std::string>{"movl $0x1,0xc(%rsp)", "mov 0xc(%rsp),%edi",
                                      "call 2b <_ZN6gpulab5lab0912_GLOBAL__N_15twiceEf+0x1b>"}));
  EXPECT_TRUE(check_object_code(excused, nvcc).empty()) << joined(check_object_code(excused, nvcc));
  // Status 0 (the 1 loaded, then decremented) is lab code ending the process.
  const std::vector<ObjectCode> zero = stand_in(
      "  22:\t8b 7c 24 0c          \tmov    0xc(%rsp),%edi\n"
      "  23:\t83 ef 01             \tsub    $0x1,%edi\n");
  EXPECT_TRUE(any_contains(check_object_code(zero, nvcc), "calls exit")) << "status 0 excused";
  // The argument replaced after the load: frame-like instructions count once the work began.
  const std::vector<ObjectCode> popped = stand_in(
      "  22:\t8b 7c 24 0c          \tmov    0xc(%rsp),%edi\n"
      "  24:\t48 83 c4 08          \tadd    $0x8,%rsp\n"
      "  25:\t5f                   \tpop    %rdi\n");
  EXPECT_TRUE(any_contains(check_object_code(popped, nvcc), "calls exit")) << "argument popped";
  // Another value than the one stored.
  const std::vector<ObjectCode> other =
      stand_in("  22:\t8b 7c 24 08          \tmov    0x8(%rsp),%edi\n");
  EXPECT_TRUE(any_contains(check_object_code(other, nvcc), "calls exit")) << "another argument";
}

TEST(ParseObjectCode, TextThatIsNotNmOutputIsARuntimeError) {
  EXPECT_THROW((void)parse_object_code("hello\n", "", ""), std::runtime_error);
  EXPECT_THROW((void)parse_object_code("0000000000000000 T f\n", "", ""), std::runtime_error);
}

TEST(CodeChecks, SpecialNamesAndTemplatesBelongToTheirNamespace) {
  // A class with a key function (strong vtable and typeinfo) and an explicitly instantiated
  // function template (its demangled name starts with the return type) are the lab's own.
  const Lines found = check(R"cpp(
    namespace gpulab::lab09 {
    struct Base {
      virtual ~Base();
      virtual double f() const { return 1; }
    };
    Base::~Base() = default;
    template <typename T>
    T twice(T x) {
      return 2 * x;
    }
    template double twice<double>(double);
    }  // namespace gpulab::lab09
  )cpp");
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(Demangle, DemanglesCxxNamesAndKeepsCNames) {
  EXPECT_EQ(demangle("_ZN6gpulab5lab091fEi"), "gpulab::lab09::f(int)");
  EXPECT_EQ(demangle("exit"), "exit");
}

}  // namespace
}  // namespace gpulab
