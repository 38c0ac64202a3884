// The code checks of lab code's own tokens: its directives, attributes, pragmas and builtins.
#include "gpulab/grader/code_checks.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "code_checks_shared.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/core/json_reader.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

using code_checks_detail::kMathFunctions;
using code_checks_detail::split_lines;
using code_checks_detail::trim;
namespace fs = std::filesystem;

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
  // What staging put first (staging.hpp's stage_student_file) is not the student's: without it,
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
