#include "gpulab/grader/code_checks.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

namespace {

// nvcc compiles every __device__ function for the host as well, as a stand-in that must never
// run there: cudafe's body `{ int volatile ___ = 1; ::exit(___); }`. At -O2 its work is exactly
// three instructions after the prologue the host compiler builds (Debian's GCC 12: sub; Ubuntu's
// GCC 13: endbr64, a push/pop probe, sub): store 1 on the stack, load it as the argument, call
// exit. It is not lab code that ends the process: it could only end
// it with status 1, a failure, which forges nothing. Anything else (another argument, another
// call, any other work) is judged as lab code.
bool is_nvcc_device_placeholder(const FunctionCode& code) {
  if (code.references != std::set<std::string>{"exit"} || code.work_instructions != 3) {
    return false;
  }
  const std::string store = "movl $0x1,";
  if (!code.work[0].starts_with(store)) {
    return false;
  }
  const std::string load = code.work[0].substr(store.size()) + ",%edi";
  return (code.work[1] == "mov " + load || code.work[1] == "movl " + load) &&
         code.work[2].starts_with("call");
}

// Whether an instruction does work: not a line of a long instruction's bytes (no mnemonic), not
// padding, not the landing pad -fcf-protection puts first (endbr64), and, in the prologue (before
// the first instruction that does work), not stack frame set-up: a push or pop of a register, an
// adjustment of %rsp. After the prologue every instruction counts (a `pop %rdi` before a call
// changes its argument).
bool is_work(std::string_view mnemonic, std::string_view operands, bool in_prologue) {
  if (mnemonic.empty() || mnemonic.starts_with("nop") || mnemonic == "data16" ||
      mnemonic.starts_with("endbr")) {
    return false;
  }
  if (!in_prologue) {
    return true;
  }
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), mnemonic) != names.end();
  };
  if (is({"push", "pushq", "pop", "popq"}) && operands.starts_with("%r")) {
    return false;
  }
  return !(is({"sub", "subq", "add", "addq"}) && operands.starts_with("$") &&
           operands.ends_with(",%rsp"));
}

// nvcc's host-side launch stub of a kernel, "__device_stub__" and the kernel's mangled name
// without its leading underscore: the kernel's name, which decides where the stub belongs; the
// stub's own name otherwise.
std::string launched_kernel(const std::string& mangled, const std::string& readable) {
  constexpr std::string_view kStub = "__device_stub__Z";
  if (!readable.starts_with(kStub)) {
    return mangled;
  }
  const std::size_t end = readable.find('(');
  return "_" + readable.substr(kStub.size() - 1, end == std::string::npos ? std::string::npos
                                                                          : end - kStub.size() + 1);
}

// The student's file an archive member was compiled from: "benchmark.cu.cpp.o" (the sim's
// translation) and "benchmark.cu.o" are benchmark.cu.
std::string source_of(std::string member) {
  if (member.ends_with(".o")) {
    member.resize(member.size() - 2);
  }
  if (member.ends_with(".cu.cpp")) {
    member.resize(member.size() - 4);
  }
  return member;
}

// True when `scope` starts with the components of `ns` ("gpulab::lab01").
bool within(const std::vector<std::string>& scope, std::string_view ns) {
  std::size_t i = 0;
  while (!ns.empty()) {
    const std::size_t end = ns.find("::");
    if (i >= scope.size() || scope[i] != ns.substr(0, end)) {
      return false;
    }
    ++i;
    ns.remove_prefix(end == std::string_view::npos ? ns.size() : end + 2);
  }
  return i < scope.size();  // a name inside it, not the namespace itself
}

// ---- what lab code may reference: an allowlist ------------------------------------------------
//
// Every symbol a student object leaves undefined (nm's U and w) must be one of these; anything
// else (exec, fork, threads, signals, dynamic loading, files, raw system calls, the instruments of
// the sim and the framework's functions the lab does not name) rejects the lab.

// C library and compiler-runtime functions and objects, by exact name: arithmetic and maths,
// memory and strings, formatted output, clocks and sleeping, allocation, assertions and
// exceptions, the mutex and once-flag calls <mutex> makes. No process, thread-creation, signal,
// file, environment or dynamic-loading function is here.
// <cmath>'s functions, each also with its float (f) and long double (l) suffix.
constexpr std::string_view kMathFunctions[] = {
    "acos",  "acosh",     "asin",      "asinh",      "atan",   "atan2",     "atanh",  "cbrt",
    "ceil",  "copysign",  "cos",       "cosh",       "erf",    "erfc",      "exp",    "exp10",
    "exp2",  "expm1",     "fabs",      "fdim",       "floor",  "fma",       "fmax",   "fmin",
    "fmod",  "frexp",     "hypot",     "ilogb",      "ldexp",  "lgamma",    "llrint", "llround",
    "log",   "log10",     "log1p",     "log2",       "logb",   "lrint",     "lround", "modf",
    "nan",   "nearbyint", "nextafter", "nexttoward", "pow",    "remainder", "remquo", "rint",
    "round", "scalbln",   "scalbn",    "sin",        "sincos", "sinh",      "sqrt",   "tan",
    "tanh",  "tgamma",    "trunc"};

// Other C library and compiler-runtime functions and objects, by exact name: memory and
// strings (bcmp: memcmp where only equality matters, which clang calls in memcmp's place),
// character classes, formatted output, clocks and sleeping, allocation, assertions and exceptions,
// and the lock calls <mutex> and <shared_mutex> make. No process, thread-creation, signal, file,
// environment or dynamic-loading function is here.
constexpr std::string_view kCNames[] = {
    // <cstdlib>, <cstring>, <cctype>, <cstdio> output, <ctime>
    "abs", "labs", "llabs", "div", "ldiv", "lldiv", "qsort", "bsearch", "rand", "srand", "strtod",
    "strtof", "strtold", "strtol", "strtoll", "strtoul", "strtoull", "atoi", "atol", "atoll",
    "atof", "__isoc23_strtol", "__isoc23_strtoll", "__isoc23_strtoul", "__isoc23_strtoull",
    "memchr", "memcmp", "bcmp", "memcpy", "memmove", "memset", "strchr", "strcmp", "strcpy",
    "strlen", "strncmp", "strncpy", "strnlen", "strrchr", "strstr", "strcat", "strncat", "strspn",
    "strcspn", "strpbrk", "strtok", "strtok_r", "strerror", "__memcpy_chk", "__memmove_chk",
    "__memset_chk", "__strcpy_chk", "__strcat_chk", "__strncpy_chk", "isalnum", "isalpha",
    "isblank", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct", "isspace",
    "isupper", "isxdigit", "tolower", "toupper", "__ctype_b_loc", "__ctype_tolower_loc",
    "__ctype_toupper_loc", "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf",
    "vsprintf", "vsnprintf", "puts", "putchar", "fputs", "fputc", "putc", "fwrite", "fflush",
    "stdout", "stderr", "__printf_chk", "__fprintf_chk", "__sprintf_chk", "__snprintf_chk",
    "__vsnprintf_chk", "__vfprintf_chk", "__vsprintf_chk", "sscanf", "__isoc99_sscanf",
    "__isoc23_sscanf", "clock", "clock_gettime", "time", "nanosleep", "usleep", "sched_yield",
    // allocation
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
    // assertions, errors, the stack protector
    "abort", "__assert_fail", "__errno_location", "__stack_chk_fail",
    // the C++ ABI: exceptions, casts, guarded statics, destructors registered for the end
    // (graded programs end with _exit: they never run), thread-local storage
    "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_rethrow",
    "__cxa_begin_catch", "__cxa_end_catch", "__cxa_get_exception_ptr", "__cxa_call_terminate",
    "__cxa_call_unexpected", "__cxa_current_exception_type", "__cxa_bad_cast", "__cxa_bad_typeid",
    "__cxa_pure_virtual", "__cxa_deleted_virtual", "__cxa_throw_bad_array_new_length",
    "__dynamic_cast", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
    "__cxa_atexit", "__cxa_thread_atexit", "__cxa_thread_atexit_impl", "atexit", "__dso_handle",
    "__tls_get_addr", "__gxx_personality_v0", "_Unwind_Resume", "_GLOBAL_OFFSET_TABLE_",
    "__libc_single_threaded",
    // what <mutex>, <shared_mutex>, <condition_variable> and std::call_once call (not
    // pthread_create)
    "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_mutex_trylock", "pthread_once",
    "__pthread_key_create", "pthread_key_create", "pthread_getspecific", "pthread_setspecific",
    "pthread_cond_wait", "pthread_cond_signal", "pthread_cond_broadcast", "pthread_cond_destroy",
    "pthread_cond_timedwait", "pthread_cond_clockwait", "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock", "pthread_rwlock_unlock", "pthread_rwlock_tryrdlock",
    "pthread_rwlock_trywrlock", "pthread_rwlock_destroy", "pthread_rwlock_init",
    // the sim's CUDA built-in variables and what its counting compiles in (the memory accesses'
    // calls, and the counts each basic block adds to: framework/sim/plugin)
    "threadIdx", "blockIdx", "blockDim", "gridDim", "__asan_handle_no_return",
    "__asan_before_dynamic_init", "__asan_after_dynamic_init", "__gpulab_sim_load",
    "__gpulab_sim_store", "gpulab_sim_ops"};

// C names by prefix: libgcc's arithmetic helpers (__divti3, __popcountdi2, ...), nvcc's
// registration calls (__cudaRegisterFunction, ...; the CUDA runtime's cuda* go by the lab's
// contract, cuda_call_allowed), the sim's counting callbacks
// (__asan_load4_noabort, ...) and its checked memcpy family (gpulab_sim_checked_memcpy, ...).
constexpr std::string_view kCPrefixes[] = {
    "__isnan",    "__isinf", "__finite",    "__fpclassify", "__signbit",
    "__popcount", "__clz",   "__ctz",       "__ffs",        "__parity",
    "__bswap",    "__div",   "__udiv",      "__mod",        "__umod",
    "__mul",      "__fix",   "__float",     "__extend",     "__trunc",
    "__powi",     "__cuda",  "__asan_load", "__asan_store", "gpulab_sim_checked_"};

// The C++ standard library, by the entity under std:: (the first name after std::, __cxx11:: and
// the chrono _V2:: left out): strings, string streams and console streams, containers' out-of-line
// parts, exceptions, clocks, random devices, locks and once-flags, character conversions. Not
// its threads (thread, jthread, async), files (filesystem, fstreams) or process functions.
constexpr std::string_view kStdEntities[] = {"basic_string",
                                             "getline",
                                             "use_facet",
                                             "has_facet",
                                             "collate",
                                             "regex_error",
                                             "regex_traits",
                                             "bad_any_cast",
                                             "char_traits",
                                             "allocator",
                                             "basic_ostringstream",
                                             "basic_istringstream",
                                             "basic_stringstream",
                                             "basic_stringbuf",
                                             "basic_ostream",
                                             "basic_istream",
                                             "basic_iostream",
                                             "basic_ios",
                                             "basic_streambuf",
                                             "ios_base",
                                             "locale",
                                             "ctype",
                                             "num_put",
                                             "num_get",
                                             "numpunct",
                                             "codecvt",
                                             "__ostream_insert",
                                             "endl",
                                             "flush",
                                             "cout",
                                             "cerr",
                                             "clog",
                                             "cin",
                                             "chrono",
                                             "steady_clock",
                                             "system_clock",
                                             "high_resolution_clock",
                                             "_Rb_tree_increment",
                                             "_Rb_tree_decrement",
                                             "_Rb_tree_insert_and_rebalance",
                                             "_Rb_tree_rebalance_for_erase",
                                             "_List_node_base",
                                             "__detail",
                                             "_Hash_bytes",
                                             "_Fnv_hash_bytes",
                                             "_Sp_make_shared_tag",
                                             "exception",
                                             "bad_alloc",
                                             "bad_cast",
                                             "bad_typeid",
                                             "bad_array_new_length",
                                             "bad_function_call",
                                             "bad_optional_access",
                                             "bad_variant_access",
                                             "bad_weak_ptr",
                                             "logic_error",
                                             "runtime_error",
                                             "invalid_argument",
                                             "out_of_range",
                                             "length_error",
                                             "domain_error",
                                             "range_error",
                                             "overflow_error",
                                             "underflow_error",
                                             "system_error",
                                             "error_category",
                                             "generic_category",
                                             "system_category",
                                             "terminate",
                                             "uncaught_exception",
                                             "uncaught_exceptions",
                                             "current_exception",
                                             "rethrow_exception",
                                             "__exception_ptr",
                                             "nested_exception",
                                             "type_info",
                                             "nothrow",
                                             "random_device",
                                             "mutex",
                                             "recursive_mutex",
                                             "condition_variable",
                                             "__once_callable",
                                             "__once_call",
                                             "__once_proxy",
                                             "this_thread",
                                             "to_chars",
                                             "from_chars",
                                             "__to_chars_len",
                                             "__glibcxx_assert_fail",
                                             "_Hashtable",
                                             "__throw_"};

// The names of a mangled C++ symbol: {"std", "basic_ostream", "_M_insert"} for
// _ZNSo9_M_insertIdEERSoT_; for special names (vtables, typeinfo, guard variables) the names of
// their entity; empty for C names, operators and what it cannot read. std's abbreviations (St,
// So, Sa, ...) are spelled out.
std::vector<std::string> symbol_scope(std::string_view name) {
  std::vector<std::string> scope;
  if (!name.starts_with("_Z")) {
    return scope;
  }
  name.remove_prefix(2);
  if (name.starts_with("T") || name.starts_with("GV")) {  // special name: skip its code
    const bool thunk = name.starts_with("Th") || name.starts_with("Tv") || name.starts_with("Tc");
    name.remove_prefix(2);
    if (thunk) {
      const std::size_t end = name.rfind('_', name.find('N'));
      name.remove_prefix(end == std::string_view::npos ? 0 : end + 1);
    }
  }
  const bool nested = name.starts_with('N');
  if (nested) {
    name.remove_prefix(1);
    while (!name.empty() &&
           std::string_view("rVKRO").find(name.front()) != std::string_view::npos) {
      name.remove_prefix(1);
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kAbbreviations[] = {
      {"St", ""},
      {"Sa", "allocator"},
      {"Sb", "basic_string"},
      {"Ss", "basic_string"},
      {"Si", "basic_istream"},
      {"So", "basic_ostream"},
      {"Sd", "basic_iostream"}};
  for (const auto& [code, entity] : kAbbreviations) {
    if (name.starts_with(code)) {
      scope.emplace_back("std");
      if (!entity.empty()) {
        scope.emplace_back(entity);
      }
      name.remove_prefix(2);
      break;
    }
  }
  if (!nested && scope.empty() && (name.empty() || name.front() < '0' || name.front() > '9')) {
    return scope;  // an operator or a name this does not read
  }
  while (!name.empty() && name.front() >= '0' && name.front() <= '9') {
    std::size_t length = 0;
    std::size_t digits = 0;
    while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') {
      length = length * 10 + static_cast<std::size_t>(name[digits] - '0');
      ++digits;
    }
    if (digits + length > name.size()) {
      break;
    }
    scope.emplace_back(name.substr(digits, length));
    name.remove_prefix(digits + length);
    if (!nested) {
      break;  // an unscoped name has one component (std's has std:: before it)
    }
  }
  return scope;
}

// Whether `text` starts with one of `prefixes`.
template <class Prefixes>
bool starts_with_any(std::string_view text, const Prefixes& prefixes) {
  return std::any_of(std::begin(prefixes), std::end(prefixes),
                     [&](std::string_view prefix) { return text.starts_with(prefix); });
}

// Whether lab code may call the CUDA runtime function `name` (cudaMemcpy): any, unless the lab's
// contract names the ones it may (CodeRules::cuda_calls).
bool cuda_call_allowed(std::string_view name, const CodeRules& rules) {
  return rules.cuda_calls.empty() || std::find(rules.cuda_calls.begin(), rules.cuda_calls.end(),
                                               name) != rules.cuda_calls.end();
}

// Whether lab code may reference the symbol `name` (mangled; `readable` demangled) under `rules`.
bool allowed_reference(const std::string& name, const std::string& readable,
                       const CodeRules& rules) {
  if (name.starts_with("cuda")) {  // the CUDA runtime, nvcc's C names
    return cuda_call_allowed(name, rules);
  }
  if (!name.starts_with("_Z")) {  // a C name
    const auto math = [&](std::string_view base) {
      return name == base || (name.size() == base.size() + 1 && name.starts_with(base) &&
                              (name.back() == 'f' || name.back() == 'l'));
    };
    return std::find(std::begin(kCNames), std::end(kCNames), name) != std::end(kCNames) ||
           std::any_of(std::begin(kMathFunctions), std::end(kMathFunctions), math) ||
           starts_with_any(name, kCPrefixes);
  }
  // operator new and delete, in every form.
  if (name.starts_with("_Znw") || name.starts_with("_Zna") || name.starts_with("_Zdl") ||
      name.starts_with("_Zda")) {
    return true;
  }
  // typeinfo and its name are data about a type: allowed for any type.
  if (name.starts_with("_ZTI") || name.starts_with("_ZTS")) {
    return true;
  }
  std::vector<std::string> scope = symbol_scope(name);
  if (scope.empty()) {
    return false;
  }
  if (scope.front() == "std") {
    if (scope.size() == 1) {
      return true;  // an operator of namespace std (<<, >>, ==, + on its types)
    }
    std::size_t at = 1;
    while (at < scope.size() && (scope[at] == "__cxx11" || scope[at] == "_V2")) {
      ++at;
    }
    return at < scope.size() && (std::find(std::begin(kStdEntities), std::end(kStdEntities),
                                           scope[at]) != std::end(kStdEntities) ||
                                 scope[at].starts_with("__throw_"));
  }
  if (scope.front() == "__gnu_cxx" || scope.front() == "__cxxabiv1") {
    return true;  // the library's own helpers (verbose terminate, type_info classes)
  }
  if (scope.size() == 1) {
    // A C++ function of the global namespace that this object does not define: the sim's CUDA
    // runtime (cudaMalloc(void**, unsigned long)) and device built-ins (__float2half, ...).
    return scope.front().starts_with("cuda") ? cuda_call_allowed(scope.front(), rules)
                                             : scope.front().starts_with("__");
  }
  if (within(scope, rules.lab_namespace)) {
    return true;  // the lab's own code and interface
  }
  // The sim's built-ins that the translation of a kernel calls; not its instruments.
  static constexpr std::string_view kSimBuiltins[] = {
      "gpulab::sim::detail::block_barrier(", "gpulab::sim::detail::dynamic_shared_memory(",
      "gpulab::sim::detail::submit_launch(", "gpulab::sim::detail::warp_collective(",
      "gpulab::sim::detail::warp_matrix(",   "gpulab::sim::detail::fail_kernel(",
      "gpulab::sim::detail::count_atomic(",  "gpulab::sim::detail::count_access(",
      "gpulab::sim::detail::clock_cycles("};
  return starts_with_any(readable, kSimBuiltins) || starts_with_any(readable, rules.allowed_calls);
}

std::string strip_offset(std::string_view target) {
  const std::size_t cut = target.find_first_of("+-", 1);
  return std::string(target.substr(0, cut));
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) {
      break;
    }
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  const std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The member a "file format" line introduces: GNU objdump writes "benchmark.cu.o:     file format
// elf64-x86-64", LLVM's "lib.a(benchmark.cu.o):\tfile format elf64-x86-64".
std::optional<std::string> member_header(std::string_view line) {
  const std::size_t at = line.find("file format ");
  if (at == std::string_view::npos || line.starts_with("In archive")) {
    return std::nullopt;
  }
  std::string_view name = trim(line.substr(0, at));
  if (!name.ends_with(':')) {
    return std::nullopt;
  }
  name.remove_suffix(1);
  if (name.ends_with(')') && name.find('(') != std::string_view::npos) {
    name = name.substr(name.rfind('(') + 1);
    name.remove_suffix(1);
  }
  return std::string(name);
}

ObjectCode& object_named(std::vector<ObjectCode>& objects, const std::string& member) {
  for (ObjectCode& object : objects) {
    if (object.member == member) {
      return object;
    }
  }
  objects.push_back(ObjectCode{member, {}, {}, 0});
  return objects.back();
}

bool is_hex(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

std::string demangle(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

std::vector<ObjectCode> parse_object_code(std::string_view nm, std::string_view disassembly,
                                          std::string_view headers) {
  std::vector<ObjectCode> objects;
  // nm -A: "<archive>:<member>:<value> <type> <name>", the value blank for undefined symbols.
  for (const std::string_view raw : split_lines(nm)) {
    const std::string_view line = trim(raw);
    if (line.empty()) {
      continue;
    }
    const std::size_t name_at = line.rfind(' ');
    if (name_at == std::string_view::npos || name_at < 2 || line[name_at - 2] != ' ') {
      throw std::runtime_error("unexpected nm output: " + std::string(line));
    }
    const char type = line[name_at - 1];
    std::string_view prefix = trim(line.substr(0, name_at - 2));  // "<archive>:<member>:<value>"
    if (const std::size_t colon = prefix.rfind(':');
        colon != std::string_view::npos && is_hex(trim(prefix.substr(colon + 1)))) {
      prefix = prefix.substr(0, colon + 1);
    }
    if (!prefix.ends_with(':')) {
      throw std::runtime_error("unexpected nm output (nm -A expected): " + std::string(line));
    }
    prefix.remove_suffix(1);
    const std::size_t colon = prefix.rfind(':');
    const std::string member(colon == std::string_view::npos ? prefix : prefix.substr(colon + 1));
    object_named(objects, member).symbols.push_back({std::string(line.substr(name_at + 1)), type});
  }
  // objdump -dr: "<member>:     file format ...", "<address> <function>:", relocations
  // "<offset>: R_<type>\t<target>[+-offset]" and instructions "<offset>:\t<bytes>\t<mnemonic> ...".
  // A call or jump to a function of the same file needs no relocation: objdump names its target
  // "<function>". An instruction with a relocation (the line after it) names a placeholder
  // instead, so a target counts only when no relocation follows and it is a function of the file.
  ObjectCode* object = nullptr;
  FunctionCode* function = nullptr;
  std::string current;  // the function being read
  std::string pending;  // the last call or jump's target, until we know no relocation follows
  std::vector<std::pair<FunctionCode*, std::string>> direct_calls;
  // (member's index in `objects`, its first direct call): indices, as `objects` may grow.
  std::vector<std::pair<std::size_t, std::size_t>> direct_calls_of;
  const auto commit = [&] {
    if (!pending.empty() && function != nullptr && pending != current) {
      direct_calls.emplace_back(function, pending);
    }
    pending.clear();
  };
  for (const std::string_view line : split_lines(disassembly)) {
    if (const std::optional<std::string> member = member_header(line)) {
      commit();
      object = &object_named(objects, *member);
      direct_calls_of.emplace_back(static_cast<std::size_t>(object - objects.data()),
                                   direct_calls.size());
      function = nullptr;
      continue;
    }
    if (object == nullptr) {
      continue;
    }
    if (line.ends_with(">:") && line.find(" <") != std::string_view::npos &&
        !line.starts_with(' ')) {
      commit();
      const std::size_t open = line.find(" <");
      current = std::string(line.substr(open + 2, line.size() - open - 4));
      function = &object->functions[current];
      continue;
    }
    if (function == nullptr) {
      continue;
    }
    // "<offset>: <rest>", the offset in hex (GNU: "  1b:\t...", LLVM: "      1b: ...").
    const std::string_view body = trim(line);
    const std::size_t colon = body.find(':');
    if (colon == std::string_view::npos || !is_hex(body.substr(0, colon))) {
      continue;
    }
    const std::string_view rest = trim(body.substr(colon + 1));
    if (rest.starts_with("R_")) {  // a relocation: "R_<type>\t<target>[+-offset]"
      pending.clear();             // the instruction's target was a placeholder
      const std::size_t gap = rest.find_first_of(" \t");
      if (gap != std::string_view::npos) {
        function->references.insert(strip_offset(trim(rest.substr(gap))));
      }
      continue;
    }
    commit();
    // An instruction: its bytes (pairs of hex digits), then the mnemonic and the operands.
    std::string_view instruction = rest;
    while (instruction.size() >= 2 && is_hex(instruction.substr(0, 2)) &&
           (instruction.size() == 2 || instruction[2] == ' ' || instruction[2] == '\t')) {
      instruction = trim(instruction.substr(2));
    }
    const std::string_view mnemonic = instruction.substr(0, instruction.find_first_of(" \t"));
    const std::string operands(trim(instruction.substr(mnemonic.size())));
    if (is_work(mnemonic, operands, function->work_instructions == 0)) {
      if (function->work.size() < 8) {
        function->work.push_back(std::string(mnemonic) + " " + operands);
      }
      ++function->work_instructions;
    }
    if (mnemonic == "syscall" || mnemonic == "sysenter" ||
        (mnemonic == "int" && instruction.find("$0x80") != std::string_view::npos)) {
      function->system_call = true;
    }
    const std::size_t open = instruction.find('<');
    if ((mnemonic.starts_with("call") || mnemonic.starts_with("jmp")) &&
        open != std::string_view::npos && instruction.ends_with('>')) {
      pending = strip_offset(instruction.substr(open + 1, instruction.size() - open - 2));
    }
  }
  commit();
  for (std::size_t m = 0; m < direct_calls_of.size(); ++m) {
    const std::size_t end =
        m + 1 < direct_calls_of.size() ? direct_calls_of[m + 1].second : direct_calls.size();
    for (std::size_t c = direct_calls_of[m].second; c < end; ++c) {
      if (objects[direct_calls_of[m].first].functions.contains(direct_calls[c].second)) {
        direct_calls[c].first->references.insert(direct_calls[c].second);
      }
    }
  }
  // objdump -h: "  <index> <section> <size> <vma> ...".
  object = nullptr;
  for (const std::string_view line : split_lines(headers)) {
    if (const std::optional<std::string> member = member_header(line)) {
      object = &object_named(objects, *member);
      continue;
    }
    std::istringstream fields{std::string(line)};
    std::string index;
    std::string section;
    std::string size;
    if (object == nullptr || !(fields >> index >> section >> size) ||
        index.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    if (section == ".preinit_array") {
      object->preinit_entries += static_cast<int>(std::stoul(size, nullptr, 16) / 8);
    }
    // Writable static storage (.data, .bss and their per-symbol sections), not thread-local
    // (.tdata, .tbss: on sim a kernel's __shared__ arrays).
    for (const std::string_view writable : {".data", ".bss"}) {
      if (section == writable || section.starts_with(std::string(writable) + ".")) {
        object->static_bytes += std::stoull(size, nullptr, 16);
      }
    }
  }
  return objects;
}

std::vector<ObjectCode> read_object_code(const std::filesystem::path& archive,
                                         const std::filesystem::path& nm,
                                         const std::filesystem::path& objdump) {
  const auto run = [&](std::vector<std::string> argv) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout_s = 120;
    spec.keep_bytes = std::size_t{1} << 30;
    const ProcessResult result = run_process(spec);
    if (!result.started || result.exit_code != 0) {
      throw std::runtime_error(
          "cannot read the object code of " + archive.string() + ": " +
          (result.started ? spec.argv.front() + " failed: " + result.output : result.start_error));
    }
    return result.output;
  };
  return parse_object_code(run({nm.string(), "-A", archive.string()}),
                           run({objdump.string(), "-dr", archive.string()}),
                           run({objdump.string(), "-h", archive.string()}));
}

std::vector<std::string> check_object_code(const std::vector<ObjectCode>& objects,
                                           const CodeRules& rules) {
  std::vector<std::string> findings;
  for (const ObjectCode& object : objects) {
    const std::string file = source_of(object.member);
    const auto add = [&](const std::string& what) {
      const std::string line = file + ": " + what;
      if (std::find(findings.begin(), findings.end(), line) == findings.end()) {
        findings.push_back(line);
      }
    };
    // Data of its own that no test measures: on sim a __device__ array is host memory the memory
    // accounting and the counted traffic do not see.
    if (object.static_bytes > kMaxStaticBytes) {
      add(std::to_string(object.static_bytes) +
          " bytes of writable variables of static storage (global, static or __device__), over "
          "the " +
          std::to_string(kMaxStaticBytes / 1024) +
          " KiB lab code may have: its data belongs in the device buffers and allocations the "
          "tests measure");
    }
    // Before the lockdown: a .preinit_array entry could run ahead of it.
    if (object.preinit_entries > 0) {
      add("a function in .preinit_array (it would run before the graded test program locks "
          "itself down): lab code must not run before main's code");
    }
    for (const auto& [name, code] : object.functions) {
      if (code.system_call) {
        add(demangle(name) +
            " makes a system call (inline assembly): lab code must not make "
            "system calls itself");
      }
    }
    for (const ObjectSymbol& symbol : object.symbols) {
      const std::string readable = demangle(symbol.name);
      const std::vector<std::string> scope = symbol_scope(symbol.name);
      if (within(scope, "testing") || within(scope, "gpulab::testing")) {
        add((symbol.type == 'U' ? "calls " : "defines ") + readable +
            ": lab code must not call or replace the test framework (GoogleTest) or the tests' "
            "helpers");
        continue;
      }
      if (symbol.type == 'i') {
        add("defines " + readable +
            " as an indirect function (ifunc): its resolver would run before the graded program "
            "locks itself down");
        continue;
      }
      if (symbol.type == 'U' || symbol.type == 'w') {
        if (starts_with_any(readable, rules.forbidden_calls) ||
            allowed_reference(symbol.name, readable, rules)) {
          continue;  // a forbidden call fails the tests of its work (find_forbidden_calls)
        }
        std::vector<std::string> callers;
        int placeholders = 0;
        for (const auto& [name, code] : object.functions) {
          if (!code.references.contains(symbol.name)) {
            continue;
          }
          if (rules.nvcc && symbol.name == "exit" && is_nvcc_device_placeholder(code)) {
            ++placeholders;  // nvcc's host stand-in of a __device__ function: never run
          } else {
            callers.push_back(demangle(name));
          }
        }
        if (callers.empty() && placeholders > 0) {
          continue;
        }
        const bool cuda = symbol.name.starts_with("cuda") || readable.starts_with("cuda");
        add((callers.empty() ? "refers to " : callers.front() + " calls ") + readable +
            (cuda ? ": not among the CUDA runtime functions this lab's code may use (its "
                    "kernels work on device memory, which its tests measure: CUDA_CALLS in "
                    "labs/CMakeLists.txt)"
                  : ": not among what lab code may use (the C and C++ standard library without "
                    "its process, thread, signal, file and dynamic-loading functions, the CUDA "
                    "runtime, and the framework functions the lab's header names)"));
        continue;
      }
      const bool strong = symbol.type >= 'A' && symbol.type <= 'Z' && symbol.type != 'W' &&
                          symbol.type != 'V' && symbol.type != 'U';
      const std::vector<std::string> owner =
          rules.nvcc ? symbol_scope(launched_kernel(symbol.name, readable)) : scope;
      if (strong && !within(owner, rules.lab_namespace)) {
        add("defines " + readable + " outside namespace " + rules.lab_namespace +
            ": lab code's definitions belong in it (or in an unnamed namespace)");
      }
    }
  }
  return findings;
}

std::vector<ForbiddenCall> find_forbidden_calls(const std::vector<ObjectCode>& objects,
                                                const CodeRules& rules) {
  std::vector<ForbiddenCall> calls;
  for (const ObjectCode& object : objects) {
    for (const ObjectSymbol& symbol : object.symbols) {
      if (symbol.type != 'U' && symbol.type != 'w') {
        continue;
      }
      const std::string readable = demangle(symbol.name);
      if (starts_with_any(readable, rules.forbidden_calls)) {
        calls.push_back({source_of(object.member), readable});
      }
    }
  }
  return calls;
}

// ---- includes ---------------------------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

// True when `path` is `dir` or inside it (both lexically normal and absolute).
bool inside(const fs::path& path, const fs::path& dir) {
  if (dir.empty()) {
    return false;
  }
  const fs::path relative = path.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

// For a header of the compiler's own folder (GCC's <libdir>/gcc/<target>/<version>/include or
// include-fixed, clang's <libdir>/clang/<version>/include), whether lab code may include it: the
// C language's freestanding headers only (with the pieces clang 18 and later split stddef.h and
// stdarg.h into, __stddef_*.h and __stdarg_*.h), not the compiler's intrinsics (their loads and
// stores escape the sim's counting), OpenMP, OpenACC, gcov or sanitizer headers. nullopt for any
// other file.
std::optional<bool> compiler_header_allowed(const fs::path& path) {
  static constexpr std::string_view kFreestanding[] = {
      "float.h",     "iso646.h",    "limits.h",  "stdalign.h",   "stdarg.h",
      "stdbool.h",   "stddef.h",    "stdint.h",  "stdint-gcc.h", "stdnoreturn.h",
      "syslimits.h", "stdatomic.h", "varargs.h", "stdckdint.h"};
  const std::vector<fs::path> parts(path.begin(), path.end());
  for (std::size_t i = 2; i + 1 < parts.size(); ++i) {
    const bool compilers = (parts[i] == "include" || parts[i] == "include-fixed") &&
                           ((i >= 3 && parts[i - 3] == "gcc") || parts[i - 2] == "clang");
    if (compilers) {
      const std::string name = parts.back().string();
      const bool piece =
          (name.starts_with("__stddef_") || name.starts_with("__stdarg_")) && name.ends_with(".h");
      return i + 2 == parts.size() &&
             (piece || std::find(std::begin(kFreestanding), std::end(kFreestanding), name) !=
                           std::end(kFreestanding));
    }
  }
  return std::nullopt;
}

// Why lab code must not include `path`; empty when it may (IncludeRules: an allowlist).
std::string include_problem(const fs::path& path, const IncludeRules& rules) {
  const auto in_tree = [&](const fs::path& dir) { return inside(path, dir.lexically_normal()); };
  if (in_tree(rules.extra_tests_dir)) {
    return "a hidden test";
  }
  if (in_tree(rules.build_dir)) {
    const bool allowed = in_tree(rules.staged_dir) || in_tree(rules.translated_dir);
    return allowed ? "" : "a file of the build that is not the lab's";
  }
  if (in_tree(rules.source_dir)) {
    if (in_tree(rules.lab_dir) || in_tree(rules.staged_dir)) {
      return "";
    }
    const fs::path relative = path.lexically_relative(rules.source_dir.lexically_normal());
    auto part = relative.begin();
    const std::string extension = path.extension().string();
    if (part != relative.end() && *part == "kernels" &&
        (extension == ".hpp" || extension == ".h" || extension == ".cuh")) {
      return "";  // the catalog's headers
    }
    if (part != relative.end() && *part == "framework" && ++part != relative.end() &&
        ++part != relative.end() && *part == "include") {
      return "";  // framework/<module>/include/...
    }
    return "a file of the instructor's tree outside the lab's folder, the framework's public "
           "headers and the catalog's headers";
  }
  for (const fs::path& component : path) {
    if (component == "gtest" || component == "gmock") {
      return "GoogleTest's headers";
    }
  }
  if (const std::optional<bool> allowed = compiler_header_allowed(path)) {
    return *allowed ? ""
                    : "a header of the compiler's own (its intrinsics, OpenMP, ...): lab code "
                      "may include the C language's freestanding headers of that folder only";
  }
  if (std::any_of(rules.system_dirs.begin(), rules.system_dirs.end(),
                  [&](const fs::path& dir) { return in_tree(dir); })) {
    return "";
  }
  return "a file outside the project and the compilers' system include folders";
}

}  // namespace

std::vector<std::string> shell_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(word);
        word.clear();
        in_word = false;
      }
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
    } else if (c == '\'') {
      const std::size_t end = command.find('\'', i + 1);
      if (end == std::string_view::npos) {
        throw std::runtime_error("unterminated ' in a command: " + std::string(command));
      }
      word += command.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos) {
          ++i;
        }
        word += command[i];
      }
      if (i >= command.size()) {
        throw std::runtime_error("unterminated \" in a command: " + std::string(command));
      }
    } else {
      word += c;
    }
  }
  if (in_word) {
    words.push_back(word);
  }
  return words;
}

std::vector<std::string> included_files(std::string_view preprocessed) {
  std::vector<std::string> files;
  for (std::string_view line : split_lines(preprocessed)) {
    // `# <line> "<file>" <flags>`: flag 1 enters an included file; a #line directive and the main
    // file's marker have none.
    if (!line.starts_with("# ") || line.size() < 3 ||
        std::isdigit(static_cast<unsigned char>(line[2])) == 0) {
      continue;
    }
    const std::size_t quote = line.find('"');
    if (quote == std::string_view::npos) {
      continue;
    }
    std::string name;
    std::size_t i = quote + 1;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;  // GCC escapes a backslash or a quote in a name
      }
      name += line[i];
    }
    if (i == line.size()) {
      continue;  // no closing quote
    }
    bool entered = false;
    for (std::string_view flags = line.substr(i + 1); !flags.empty();) {
      flags = trim(flags);
      const std::string_view flag = flags.substr(0, flags.find(' '));
      entered = entered || flag == "1";
      flags.remove_prefix(flag.size());
    }
    // The compiler's own pseudo-files ("<built-in>", "<command line>"), which clang enters.
    const bool pseudo = name.starts_with('<') && name.ends_with('>');
    if (entered && !pseudo && std::find(files.begin(), files.end(), name) == files.end()) {
      files.push_back(std::move(name));
    }
  }
  return files;
}

std::vector<std::string> forced_includes(std::string_view command) {
  const std::vector<std::string> words = shell_words(command);
  std::vector<std::string> files;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "-include") {
      continue;
    }
    std::size_t next = i + 1;
    if (words[next] == "-Xclang" && next + 1 < words.size()) {
      ++next;  // clang's spelling: -Xclang -include -Xclang FILE
    }
    files.push_back(words[next]);
    i = next;
  }
  return files;
}

std::vector<std::string> isystem_folders(std::string_view command) {
  const std::vector<std::string> words = shell_words(command);
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-isystem" && i + 1 < words.size()) {
      folders.push_back(words[++i]);
    } else if (words[i].starts_with("-isystem") && words[i].size() > 8) {
      folders.push_back(words[i].substr(8));
    }
  }
  return folders;
}

std::optional<fs::path> staged_origin(std::string_view text) {
  constexpr std::string_view kDirective = "#line 1 \"";
  if (!text.starts_with(kDirective)) {
    return std::nullopt;
  }
  std::string name;
  for (std::size_t i = kDirective.size(); i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '"') {
      return fs::path(name);
    }
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
    }
    name += text[i];
  }
  return std::nullopt;  // no closing quote on the first line
}

std::vector<std::string> check_includes(const std::string& file,
                                        const std::vector<std::string>& dependencies,
                                        const IncludeRules& rules) {
  std::vector<std::string> findings;
  for (const std::string& dependency : dependencies) {
    const fs::path path = fs::path(dependency).lexically_normal();
    const std::string problem = include_problem(path, rules);
    if (problem.empty()) {
      continue;
    }
    const fs::path relative = path.lexically_relative(rules.source_dir.lexically_normal());
    const std::string shown = inside(path, rules.source_dir.lexically_normal())
                                  ? relative.generic_string()
                                  : path.generic_string();
    findings.push_back(file + ": includes " + shown + " (" + problem +
                       "): lab code may include its own folder, the framework's public headers, "
                       "the catalog's headers (kernels/) and system headers");
  }
  return findings;
}

// ---- the student's own tokens ---------------------------------------------------------------

namespace {

// Attributes lab code may write (with or without GCC's surrounding underscores, and with or
// without a namespace such as gnu::): what a CUDA C++ lab needs to say about its functions, types
// and data. Not section (code that runs before the lockdown), no_sanitize and its kin, optimize
// or target (they take a kernel out of the sim's counting and checks), alias, weak, weakref or
// ifunc (other names for other code).
constexpr std::string_view kAllowedAttributes[] = {
    "nodiscard", "maybe_unused", "likely", "unlikely", "fallthrough", "noreturn", "deprecated",
    "no_unique_address", "carries_dependency", "assume", "always_inline", "noinline", "unused",
    "aligned", "packed", "hot", "cold", "pure", "const", "flatten", "warn_unused_result", "nonnull",
    "returns_nonnull", "format", "format_arg", "sentinel", "malloc", "alloc_size", "assume_aligned",
    "may_alias", "vector_size", "nothrow", "noclone", "noipa", "leaf",
    // CUDA's qualifiers as nvcc -E spells them
    "host", "device", "global", "shared", "constant", "managed", "launch_bounds", "maxnreg",
    "cluster_dims", "grid_constant"};

// Pragmas lab code may write: loop unrolling and the compilers' diagnostics.
constexpr std::string_view kAllowedPragmas[] = {"unroll",
                                                "nounroll",
                                                "GCC unroll",
                                                "GCC ivdep",
                                                "GCC diagnostic",
                                                "nv_diag_suppress",
                                                "nv_diag_default",
                                                "nv_diag_warning",
                                                "diag_suppress",
                                                "diag_default",
                                                "once"};

struct Token {
  std::string text;  ///< an identifier, "0" for a number, a quote for a literal, else one char
  int line = 0;      ///< in the student's file
};

bool is_identifier_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Where the raw string literal whose opening quote is at `quote` ends (past its closing quote; the
// end of `text` when it is not closed), when `prefix` (the identifier just before the quote) makes
// it one: R, LR, uR, UR or u8R. nullopt for any other prefix.
std::optional<std::size_t> raw_string_end(std::string_view text, std::size_t quote,
                                          std::string_view prefix) {
  if (quote >= text.size() || text[quote] != '"' ||
      (prefix != "R" && prefix != "LR" && prefix != "uR" && prefix != "UR" && prefix != "u8R")) {
    return std::nullopt;
  }
  // R"delimiter( ... )delimiter", over any number of lines.
  const std::size_t open = text.find('(', quote + 1);
  if (open == std::string_view::npos) {
    return text.size();
  }
  const std::string close = ")" + std::string(text.substr(quote + 1, open - quote - 1)) + "\"";
  const std::size_t end = text.find(close, open);
  return end == std::string_view::npos ? text.size() : end + close.size();
}

// The tokens of the student's lines (`text`, lines joined with '\n'; `lines[k]` the file's line
// number of the k-th): literals and numbers reduced to one token each.
std::vector<Token> tokenize(std::string_view text, const std::vector<int>& lines) {
  std::vector<Token> tokens;
  std::size_t row = 0;
  const auto line = [&] { return row < lines.size() ? lines[row] : 0; };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++row;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (is_identifier_start(c)) {
      const std::size_t start = i;
      while (i < text.size() && is_identifier_char(text[i])) {
        ++i;
      }
      const std::string_view word = text.substr(start, i - start);
      const bool quoted = i < text.size() && (text[i] == '"' || text[i] == '\'');
      if (const std::optional<std::size_t> stop = raw_string_end(text, i, word)) {
        tokens.push_back({"\"", line()});
        for (std::size_t k = i; k < *stop; ++k) {
          row += text[k] == '\n' ? 1 : 0;
        }
        i = *stop;
      } else if (!(quoted && (word == "L" || word == "u" || word == "U" || word == "u8"))) {
        tokens.push_back({std::string(word), line()});
      }  // else an encoding prefix: its literal comes next
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      while (i < text.size() &&
             (is_identifier_char(text[i]) || text[i] == '.' || text[i] == '\'')) {
        ++i;
      }
      tokens.push_back({"0", line()});
    } else if (c == '"' || c == '\'') {
      // Ends at its closing quote, or unterminated at the end of its line (the newline is left
      // for the next line's count).
      ++i;
      while (i < text.size() && text[i] != c && text[i] != '\n') {
        i += text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n' ? 2 : 1;
      }
      i += i < text.size() && text[i] == c ? 1 : 0;
      tokens.push_back({std::string(1, c), line()});
    } else {
      tokens.push_back({std::string(1, c), line()});
      ++i;
    }
  }
  return tokens;
}

// An attribute's name without GCC's surrounding double underscores ("__noinline__": noinline).
std::string attribute_name(std::string name) {
  if (name.size() > 4 && name.starts_with("__") && name.ends_with("__")) {
    name = name.substr(2, name.size() - 4);
  }
  return name;
}

bool allowed_attribute(const std::string& name) {
  return std::find(std::begin(kAllowedAttributes), std::end(kAllowedAttributes),
                   attribute_name(name)) != std::end(kAllowedAttributes);
}

// The compiler built-ins lab code may name itself (after "__builtin_"): hints, constants, bit and
// overflow arithmetic, varargs, type queries, and the maths of <cmath> (kMathFunctions, with f
// and l). Not the target's (__builtin_ia32_...: the sim's counting does not see their loads and
// stores), nor memory, prefetch, frame, return-address or call-forwarding built-ins.
bool allowed_builtin(std::string_view name) {
  static constexpr std::string_view kBuiltins[] = {"expect",
                                                   "expect_with_probability",
                                                   "unreachable",
                                                   "trap",
                                                   "assume_aligned",
                                                   "constant_p",
                                                   "is_constant_evaluated",
                                                   "offsetof",
                                                   "addressof",
                                                   "launder",
                                                   "bit_cast",
                                                   "va_start",
                                                   "va_end",
                                                   "va_arg",
                                                   "va_copy",
                                                   "va_list",
                                                   "huge_val",
                                                   "huge_valf",
                                                   "huge_vall",
                                                   "inf",
                                                   "inff",
                                                   "infl",
                                                   "nans",
                                                   "nansf",
                                                   "isnan",
                                                   "isinf",
                                                   "isinf_sign",
                                                   "isfinite",
                                                   "isnormal",
                                                   "signbit",
                                                   "signbitf",
                                                   "signbitl",
                                                   "fpclassify",
                                                   "isgreater",
                                                   "isgreaterequal",
                                                   "isless",
                                                   "islessequal",
                                                   "islessgreater",
                                                   "isunordered",
                                                   "abs",
                                                   "labs",
                                                   "llabs",
                                                   "add_overflow",
                                                   "sub_overflow",
                                                   "mul_overflow",
                                                   "FILE",
                                                   "LINE",
                                                   "FUNCTION",
                                                   "COLUMN",
                                                   "source_location",
                                                   "bswap16",
                                                   "bswap32",
                                                   "bswap64"};
  static constexpr std::string_view kBitFunctions[] = {"clz",    "ctz", "popcount",
                                                       "parity", "ffs", "clrsb"};
  if (std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins)) {
    return true;
  }
  for (const std::string_view bits : kBitFunctions) {  // clz, clzl, clzll, ...
    if (name == bits || (name.starts_with(bits) &&
                         (name.substr(bits.size()) == "l" || name.substr(bits.size()) == "ll"))) {
      return true;
    }
  }
  for (const std::string_view math : kMathFunctions) {  // sqrt, sqrtf, sqrtl, nan, nanf, ...
    if (name == math || (name.size() == math.size() + 1 && name.starts_with(math) &&
                         (name.back() == 'f' || name.back() == 'l'))) {
      return true;
    }
  }
  return false;
}

// From `at` (just past the opening brackets), the names of a comma-separated attribute list
// (an attribute's arguments in parentheses skipped), up to `close` at depth 0; `at` ends on it.
std::vector<const Token*> attribute_names(const std::vector<Token>& tokens, std::size_t& at,
                                          char close) {
  std::vector<const Token*> names;
  bool expect_name = true;
  int depth = 0;
  for (; at < tokens.size(); ++at) {
    const std::string& t = tokens[at].text;
    if (depth == 0 && t.size() == 1 && t[0] == close) {
      return names;
    }
    if (t == "(") {
      ++depth;
    } else if (t == ")") {
      --depth;
    } else if (depth == 0 && t == ",") {
      expect_name = true;
    } else if (depth == 0 && t == ":") {
      expect_name = true;  // gnu::name: the name follows the namespace
      if (!names.empty()) {
        names.pop_back();
      }
    } else if (depth == 0 && expect_name && is_identifier_start(t[0]) && t != "using") {
      names.push_back(&tokens[at]);
      expect_name = false;
    }
  }
  return names;
}

}  // namespace

std::vector<SourceDirective> source_directives(std::string_view source) {
  // Backslash-newlines spliced first (translation phase 2), each character keeping its line.
  std::string text;
  std::vector<int> line_of;
  int line = 1;
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\\' && source.substr(i + 1, 1) == "\n") {
      ++line;
      ++i;
      continue;
    }
    if (source[i] == '\\' && source.substr(i + 1, 2) == "\r\n") {
      ++line;
      i += 2;
      continue;
    }
    text += source[i];
    line_of.push_back(line);
    line += source[i] == '\n' ? 1 : 0;
  }
  std::vector<SourceDirective> directives;
  const std::size_t n = text.size();
  const auto at = [&](std::size_t i) { return i < n ? text[i] : '\0'; };
  // Skips the comment at `i` (there is one); true when it held a newline.
  const auto skip_comment = [&](std::size_t& i) {
    if (at(i + 1) == '/') {
      while (i < n && text[i] != '\n') {
        ++i;
      }
      return false;
    }
    const std::size_t end = text.find("*/", i + 2);
    const std::size_t stop = end == std::string::npos ? n : end + 2;
    const bool newline = text.find('\n', i) < stop;
    i = stop;
    return newline;
  };
  bool line_start = true;  // only blanks and comments so far on this line
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (c == '/' && (at(i + 1) == '/' || at(i + 1) == '*')) {
      line_start = skip_comment(i) || line_start;
    } else if (line_start && (c == '#' || (c == '%' && at(i + 1) == ':'))) {
      // A directive: its name is the next token on the line (blanks and comments between).
      const int directive_line = line_of[i];
      i += c == '#' ? 1 : 2;
      while (i < n && text[i] != '\n') {
        if (text[i] == ' ' || text[i] == '\t') {
          ++i;
        } else if (text[i] == '/' && at(i + 1) == '*' && text.find('\n', i) > text.find("*/", i)) {
          skip_comment(i);
        } else {
          break;
        }
      }
      std::size_t end = i;
      while (end < n && is_identifier_char(text[end])) {
        ++end;
      }
      directives.push_back({directive_line, text.substr(i, end - i)});
      i = end;
      line_start = false;
    } else if (is_identifier_start(c)) {
      const std::size_t start = i;
      while (i < n && is_identifier_char(text[i])) {
        ++i;
      }
      line_start = false;
      if (const std::optional<std::size_t> stop =
              raw_string_end(text, i, std::string_view(text).substr(start, i - start))) {
        i = *stop;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
               (c == '.' && std::isdigit(static_cast<unsigned char>(at(i + 1))) != 0)) {
      // A number, digit separators (1'000) included.
      ++i;
      while (i < n && (is_identifier_char(text[i]) || text[i] == '.' ||
                       (text[i] == '\'' && is_identifier_char(at(i + 1))))) {
        ++i;
      }
      line_start = false;
    } else if (c == '"' || c == '\'') {
      // A literal ends at its closing quote, or unterminated at the end of its line (GCC takes
      // `#warning don't` with a warning): the newline then starts the next line as usual.
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        i += text[i] == '\\' && at(i + 1) != '\n' ? 2 : 1;
      }
      i += at(i) == c ? 1 : 0;
      line_start = false;
    } else {
      ++i;
      line_start = false;
    }
  }
  return directives;
}

std::vector<std::string> check_line_directives(const std::string& file, std::string_view source) {
  // What staging put first (grading.hpp's stage_student_file) is not the student's: without it,
  // the lines are the student's own.
  if (staged_origin(source)) {
    const std::size_t newline = source.find('\n');
    source.remove_prefix(newline == std::string_view::npos ? source.size() : newline + 1);
  }
  std::vector<std::string> findings;
  for (const SourceDirective& directive : source_directives(source)) {
    if (directive.name == "line" ||
        (!directive.name.empty() && std::isdigit(static_cast<unsigned char>(directive.name[0])))) {
      findings.push_back(file + ":" + std::to_string(directive.line) + ": " +
                         (directive.name == "line" ? "a #line directive"
                                                   : "a line marker (# " + directive.name + ")") +
                         ": lab code may not rename its lines (the checks find the student's code "
                         "by the compiler's line markers)");
    }
  }
  return findings;
}

std::vector<std::string> check_preprocessed(const std::string& file, std::string_view preprocessed,
                                            const std::vector<std::filesystem::path>& own_files) {
  // The student's lines, found by the line markers: GCC's `# 42 "file" flags` and `#line 42
  // "file"`. Pragmas stay as `#pragma` lines.
  std::string text;
  std::vector<int> lines;
  std::vector<std::pair<int, std::string>> found;  // by line
  const auto add = [&](int line, const std::string& what) {
    const std::pair<int, std::string> finding{line,
                                              file + ":" + std::to_string(line) + ": " + what};
    if (std::find(found.begin(), found.end(), finding) == found.end()) {
      found.push_back(finding);
    }
  };
  bool own = false;
  bool own_text = false;  // a line of the student's has been seen
  int line = 0;
  for (std::string_view raw : split_lines(preprocessed)) {
    const std::string_view trimmed = trim(raw);
    if (trimmed.starts_with('#')) {
      std::string_view rest = trim(trimmed.substr(1));
      if (rest.starts_with("line")) {
        rest = trim(rest.substr(4));
      }
      if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front())) != 0) {
        const std::size_t quote = rest.find('"');
        const std::size_t end = quote == std::string_view::npos ? quote : rest.find('"', quote + 1);
        const int directive_line = line;
        line = std::atoi(std::string(rest.substr(0, rest.find(' '))).c_str());
        if (end != std::string_view::npos) {
          const fs::path marked =
              fs::path(rest.substr(quote + 1, end - quote - 1)).lexically_normal();
          const bool named_own =
              std::find(own_files.begin(), own_files.end(), marked) != own_files.end();
          const std::string_view flags = rest.substr(end + 1);
          const bool include_edge = flags.find('1') != std::string_view::npos ||
                                    flags.find('2') != std::string_view::npos;
          if (own && own_text && !include_edge && !named_own) {
            // The student's lines renamed (a #line directive or a line marker in their file,
            // which check_line_directives refuses too): the lines after it are still theirs.
            add(directive_line, "a line directive naming " + marked.string().substr(0, 80) +
                                    ": lab code may not rename its lines");
            line = directive_line + 1;
          } else {
            own = named_own;
          }
        }
        continue;
      }
      if (own && rest.starts_with("pragma")) {
        const std::string pragma(trim(rest.substr(6)));
        const bool allowed = std::any_of(
            std::begin(kAllowedPragmas), std::end(kAllowedPragmas), [&](std::string_view p) {
              return pragma.starts_with(p) &&
                     (pragma.size() == p.size() || !is_identifier_char(pragma[p.size()]));
            });
        if (!allowed) {
          add(line, "#pragma " + pragma.substr(0, 60) +
                        ": a pragma lab code may not use (it may unroll loops and manage "
                        "warnings)");
        }
      }
      ++line;
      continue;
    }
    if (own) {
      text.append(raw);
      text += '\n';
      lines.push_back(line);
      own_text = own_text || !trimmed.empty();
    }
    ++line;
  }
  const std::vector<Token> tokens = tokenize(text, lines);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i].text;
    if (t.starts_with("__builtin_") && !allowed_builtin(std::string_view(t).substr(10))) {
      add(tokens[i].line, t.substr(0, 60) +
                              ": a compiler built-in lab code may not use (it may use hints, "
                              "constants, bit arithmetic and maths)");
    } else if (t == "asm" || t == "__asm" || t == "__asm__") {
      add(tokens[i].line, "inline assembly (" + t +
                              "): lab code is C++ and CUDA C++ only (assembly can make "
                              "system calls and embed any file of the machine)");
    } else if (t == "__declspec") {
      add(tokens[i].line, "__declspec: an attribute lab code may not use");
    } else {
      // An attribute list, GCC's __attribute__((...)) or C++'s [[...]]: each name allowed.
      const bool gnu = (t == "__attribute__" || t == "__attribute") && i + 2 < tokens.size() &&
                       tokens[i + 1].text == "(" && tokens[i + 2].text == "(";
      const bool standard = t == "[" && i + 1 < tokens.size() && tokens[i + 1].text == "[";
      if (!gnu && !standard) {
        continue;
      }
      std::size_t at = i + (gnu ? 3 : 2);
      for (const Token* name : attribute_names(tokens, at, gnu ? ')' : ']')) {
        if (!allowed_attribute(name->text)) {
          add(name->line, (gnu ? "__attribute__((" : "[[") + name->text + (gnu ? "))" : "]]") +
                              ": an attribute lab code may not use (the sim's counting and "
                              "checks, and the grader's, must see all of its code)");
        }
      }
      i = at;
    }
  }
  // By line, then in the order found: a total order, so no stable sort is needed (libstdc++ 12's
  // stable_sort trips clang 19's deprecation warnings).
  std::vector<std::size_t> order(found.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::ranges::sort(order, {}, [&](std::size_t k) { return std::pair(found[k].first, k); });
  std::vector<std::string> findings;
  for (const std::size_t k : order) {
    findings.push_back(std::move(found[k].second));
  }
  return findings;
}

std::vector<std::string> check_library_sources(const std::string& library_target,
                                               const IncludeRules& rules) {
  const fs::path database = rules.build_dir / "compile_commands.json";
  const std::optional<std::string> text = read_file(database);
  if (!text) {
    throw std::runtime_error("cannot read " + database.string() +
                             " (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)");
  }
  const nlohmann::json entries = parse_json(*text, database.string());
  const std::string marker = "/" + library_target + ".dir/";
  IncludeRules library_rules = rules;
  library_rules.translated_dir = rules.build_dir / "sim_sources" / library_target;
  std::vector<std::string> findings;
  int index = 0;
  for (const nlohmann::json& entry : entries) {
    if (!entry.is_object() || !entry.contains("command") || !entry.contains("file")) {
      continue;
    }
    std::vector<std::string> words = shell_words(entry.at("command").get<std::string>());
    const auto output = std::find(words.begin(), words.end(), "-o");
    if (output == words.end() || output + 1 == words.end() ||
        (output + 1)->find(marker) == std::string::npos) {
      continue;
    }
    const fs::path directory = entry.value("directory", std::string());
    const fs::path source = entry.at("file").get<std::string>();
    if (const fs::path folder = source.parent_path();
        folder.filename() == library_target + ".dir" &&
        folder.parent_path().filename() == "CMakeFiles") {
      continue;  // CMake's own source for the target (the precompiled header's), not a student's
    }
    const fs::path stem =
        rules.build_dir / "grading" / "deps" / (library_target + "." + std::to_string(index++));
    const fs::path preprocessed_file = stem.string() + ".ii";
    fs::create_directories(preprocessed_file.parent_path());
    // The command with -E instead of its output: its line markers name every file it includes,
    // and its text is what the compiler sees (nvcc cannot list dependencies while preprocessing).
    words.erase(output, output + 2);
    ProcessSpec spec;
    spec.argv = words;
    spec.argv.insert(spec.argv.end(), {"-E", "-o", preprocessed_file.string()});
    spec.timeout_s = 300;
    const ProcessResult result = run_process(spec);
    const std::optional<std::string> preprocessed = read_file(preprocessed_file);
    if (!result.started || result.exit_code != 0 || !preprocessed) {
      throw std::runtime_error("cannot preprocess " + entry.at("file").get<std::string>() + ": " +
                               (result.started ? result.output : result.start_error));
    }
    std::string file = source.filename().string();
    if (file.ends_with(".cu.cpp")) {
      file.resize(file.size() - 4);  // the sim's translation of a .cu file
    }
    // Not the student's includes: the file the staged copy was made from (its #line 1 names it,
    // and the line markers with it), and what the build's command forces in (the precompiled
    // header, cmake/GpulabLabs.cmake).
    // The student's own file, under every name the line markers may give it: the compiled
    // source, the staged copy its first line names (the sim's translation names the staged .cu),
    // and the submitted file the staged copy names.
    std::vector<fs::path> own = {(directory / source).lexically_normal()};
    for (std::size_t k = 0; k < 2; ++k) {
      // The name in the file's first #line directive (the translation's comes after a comment
      // and an include).
      const std::optional<std::string> named = read_file(own.back());
      const std::size_t at = named ? named->find("#line 1 \"") : std::string::npos;
      const std::optional<fs::path> origin =
          at != std::string::npos && at < 1024 ? staged_origin(named->substr(at)) : std::nullopt;
      if (!origin) {
        break;
      }
      own.push_back(origin->lexically_normal());
    }
    for (std::string& finding : check_preprocessed(file, *preprocessed, own)) {
      findings.push_back(std::move(finding));
    }
    std::vector<fs::path> not_included = own;
    for (const std::string& forced : forced_includes(entry.at("command").get<std::string>())) {
      // GCC enters the forced header (not its .gch). clang, given CMake's precompiled header
      // (-include-pch FILE.pch), enters the source CMake built it from, FILE.cxx, then the
      // header; the .pch is named for safety.
      const fs::path path = (directory / forced).lexically_normal();
      not_included.insert(not_included.end(), {path, fs::path(path.string() + ".pch"),
                                               fs::path(path.string() + ".cxx")});
    }
    std::vector<std::string> absolute;
    for (const std::string& dependency : included_files(*preprocessed)) {
      const fs::path path = (directory / dependency).lexically_normal();
      if (std::find(not_included.begin(), not_included.end(), path) == not_included.end()) {
        absolute.push_back(path.string());
      }
    }
    IncludeRules file_rules = library_rules;
    for (const std::string& folder : isystem_folders(entry.at("command").get<std::string>())) {
      file_rules.system_dirs.push_back((directory / folder).lexically_normal());
    }
    for (const std::string& finding : check_includes(file, absolute, file_rules)) {
      findings.push_back(finding);
    }
  }
  return findings;
}

}  // namespace gpulab
