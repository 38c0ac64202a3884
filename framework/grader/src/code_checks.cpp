// The code checks of lab code's objects: the symbols it may reference (an allowlist), and what its
// functions call. Its includes: code_checks_includes.cpp; its tokens: code_checks_tokens.cpp.
#include "gpulab/grader/code_checks.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "code_checks_shared.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

using code_checks_detail::kMathFunctions;
using code_checks_detail::split_lines;
using code_checks_detail::trim;

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

}  // namespace gpulab
