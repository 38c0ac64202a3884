// The translator of translate.hpp in two steps: a lexer splits the source into tokens (every byte
// belongs to one, so comments, literals and line splices are never mistaken for code), then one
// pass over the tokens finds `<<<` and `extern __shared__`, records the replacement of a source
// range for each, and the replacements are applied to the untouched rest at the end.
#include "translate.hpp"

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace gpulab::sim {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::size_t npos = std::string_view::npos;

enum class Kind {
  kSpace,         // blanks, newlines and line splices (backslash-newline)
  kDirectiveEnd,  // the newline that ends a preprocessor directive
  kComment,
  kLiteral,     // string or character literal, raw strings included
  kIdentifier,  // identifiers and keywords
  kNumber,      // preprocessing numbers: 42, 1'000, 0x1p-3, 2.f
  kPunct,       // <<<, ::, ->, ## or any other single character
};

struct Token {
  Kind kind;
  std::size_t begin;
  std::size_t end;
  bool in_directive;  // part of a preprocessor directive, from its '#' to the newline ending it
};

// C++20's keywords, each between spaces. None of them can name a kernel (`this` is handled apart).
constexpr std::string_view kKeywords =
    " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t"
    " char8_t class co_await co_return co_yield compl concept const const_cast consteval constexpr"
    " constinit continue decltype default delete do double dynamic_cast else enum explicit export"
    " extern false float for friend goto if inline int long mutable namespace new noexcept not"
    " not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires"
    " return short signed sizeof static static_assert static_cast struct switch template this"
    " thread_local throw true try typedef typeid typename union unsigned using virtual void"
    " volatile wchar_t while xor xor_eq ";

bool is_keyword(std::string_view word) {
  for (std::size_t at = kKeywords.find(word); !word.empty() && at != npos;
       at = kKeywords.find(word, at + 1)) {
    if (kKeywords[at - 1] == ' ' && kKeywords[at + word.size()] == ' ') {
      return true;
    }
  }
  return false;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Bytes of UTF-8 sequences count as identifier characters, as in GCC; so does '$'.
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Length of the line splice (backslash, optional CR, newline) at `i`, or 0 when there is none.
std::size_t splice_length(std::string_view s, std::size_t i) {
  if (i + 1 < s.size() && s[i] == '\\' && s[i + 1] == '\n') {
    return 2;
  }
  if (i + 2 < s.size() && s[i] == '\\' && s[i + 1] == '\r' && s[i + 2] == '\n') {
    return 3;
  }
  return 0;
}

// End of the quoted literal whose opening quote is at `i`. An unterminated one ends before the
// newline; the compiler reports it.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
  const char quote = s[i++];
  while (i < s.size() && s[i] != '\n') {
    if (s[i] == '\\') {
      i += std::max<std::size_t>(2, splice_length(s, i));
    } else if (s[i++] == quote) {
      return i;
    }
  }
  return std::min(i, s.size());
}

// End of the raw string literal whose opening quote (after the R) is at `i`, or kNone when its
// delimiter is malformed (it is then lexed as an ordinary literal, and the compiler complains).
std::size_t skip_raw_string(std::string_view s, std::size_t i) {
  const std::size_t open = s.find('(', i + 1);
  if (open == npos || open - (i + 1) > 16) {
    return kNone;
  }
  const std::string_view delimiter = s.substr(i + 1, open - (i + 1));
  if (delimiter.find_first_of(" \t\v\f\r\n\\)\"") != npos) {
    return kNone;
  }
  const std::string closing = ")" + std::string(delimiter) + "\"";
  const std::size_t close = s.find(closing, open + 1);
  return close == npos ? s.size() : close + closing.size();
}

// End of the // comment at `i`: the end of its line, unless a line splice continues it.
std::size_t skip_line_comment(std::string_view s, std::size_t i) {
  for (std::size_t from = i;;) {
    const std::size_t newline = s.find('\n', from);
    if (newline == npos) {
      return s.size();
    }
    std::size_t before = newline;
    if (before > i && s[before - 1] == '\r') {
      --before;
    }
    if (before <= i + 2 || s[before - 1] != '\\') {
      return newline;
    }
    from = newline + 1;
  }
}

// End of the preprocessing number at `i` (digit separators and exponent signs included).
std::size_t skip_number(std::string_view s, std::size_t i) {
  for (++i; i < s.size();) {
    const char c = s[i];
    if ((c == '+' || c == '-') && std::string_view("eEpP").find(s[i - 1]) != npos) {
      ++i;
    } else if (is_ident_char(c) || c == '.') {
      ++i;
    } else if (c == '\'' && i + 1 < s.size() && is_ident_char(s[i + 1])) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

bool is_literal_prefix(std::string_view word, char quote) {
  if (word == "u8" || word == "u" || word == "U" || word == "L") {
    return true;
  }
  return quote == '"' &&
         (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR");
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> tokens;
  bool line_start = true;  // only blanks and comments since the last newline
  bool directive = false;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t begin = i;
    const char c = s[i];
    Kind kind = Kind::kPunct;
    if (c == '\n' && directive) {
      kind = Kind::kDirectiveEnd;
      ++i;
    } else if (c == '\n' || is_blank(c) || splice_length(s, i) > 0) {
      kind = Kind::kSpace;
      while (i < s.size()) {
        if (s[i] == '\n' && !directive) {
          line_start = true;
          ++i;
        } else if (is_blank(s[i])) {
          ++i;
        } else if (const std::size_t splice = splice_length(s, i); splice > 0) {
          i += splice;
        } else {
          break;
        }
      }
    } else if (s.substr(i, 2) == "//") {
      kind = Kind::kComment;
      i = skip_line_comment(s, i);
    } else if (s.substr(i, 2) == "/*") {
      kind = Kind::kComment;
      const std::size_t close = s.find("*/", i + 2);
      i = close == npos ? s.size() : close + 2;
    } else if (c == '"' || c == '\'') {
      kind = Kind::kLiteral;
      i = skip_quoted(s, i);
    } else if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      kind = Kind::kNumber;
      i = skip_number(s, i);
    } else if (is_ident_char(c)) {
      kind = Kind::kIdentifier;
      while (i < s.size() && is_ident_char(s[i])) {
        ++i;
      }
      const std::string_view word = s.substr(begin, i - begin);
      if (i < s.size() && (s[i] == '"' || s[i] == '\'') && is_literal_prefix(word, s[i])) {
        kind = Kind::kLiteral;
        const std::size_t raw_end = word.back() == 'R' ? skip_raw_string(s, i) : kNone;
        i = raw_end != kNone ? raw_end : skip_quoted(s, i);
      }
    } else {
      for (const std::string_view punct : {"<<<", "::", "->", "##"}) {
        if (s.substr(i, punct.size()) == punct) {
          i += punct.size();
          break;
        }
      }
      i = std::max(i, begin + 1);
      if (c == '#' && line_start) {
        directive = true;
      }
    }
    if (kind != Kind::kSpace && kind != Kind::kComment) {
      line_start = false;
    }
    tokens.push_back({kind, begin, i, directive});
    if (kind == Kind::kDirectiveEnd) {
      directive = false;
      line_start = true;
    }
  }
  return tokens;
}

class Translator {
 public:
  explicit Translator(std::string_view source) : s_(source), tokens_(tokenize(source)) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        line_starts_.push_back(i + 1);
      }
    }
  }

  Translation run() {
    for (std::size_t t = 0; t < tokens_.size();) {
      if (is(t, "<<<")) {
        t = launch(t);
      } else if (is(t, "extern") && is(next(t), "__shared__")) {
        t = dynamic_shared(t);
      } else if (is(t, "#") && tokens_[t].in_directive && is(next(t), "pragma") &&
                 is(next(next(t)), "unroll")) {
        t = unroll(next(next(t)));
      } else {
        ++t;
      }
    }
    Translation result;
    std::size_t copied = 0;
    for (const Edit& edit : edits_) {
      result.text.append(s_.substr(copied, edit.begin - copied));
      result.text.append(edit.text);
      copied = edit.end;
    }
    result.text.append(s_.substr(copied));
    // By position, then text: a total order, so no stable sort is needed (libstdc++ 12's
    // stable_sort trips clang 19's deprecation warnings).
    std::ranges::sort(
        errors_, {}, [](const TranslateError& e) { return std::tie(e.line, e.column, e.message); });
    result.errors = std::move(errors_);
    return result;
  }

 private:
  struct Edit {
    std::size_t begin;
    std::size_t end;
    std::string text;
  };

  std::string_view text(std::size_t t) const {
    return s_.substr(tokens_[t].begin, tokens_[t].end - tokens_[t].begin);
  }

  // Token t (which may be kNone) is the identifier or punctuator `spelling`.
  bool is(std::size_t t, std::string_view spelling) const {
    return t < tokens_.size() &&
           (tokens_[t].kind == Kind::kPunct || tokens_[t].kind == Kind::kIdentifier) &&
           text(t) == spelling;
  }

  bool is_any(std::size_t t, std::initializer_list<std::string_view> spellings) const {
    return std::ranges::any_of(spellings, [&](std::string_view p) { return is(t, p); });
  }

  // The next token after t that is not blank or a comment (a directive's end counts), or kNone.
  std::size_t next(std::size_t t) const {
    for (std::size_t i = t + 1; i < tokens_.size(); ++i) {
      if (tokens_[i].kind != Kind::kSpace && tokens_[i].kind != Kind::kComment) {
        return i;
      }
    }
    return kNone;
  }

  // The previous token before t that is not blank or a comment, or kNone at the start, at the
  // end of a directive, or at the end of the previous replacement.
  std::size_t prev(std::size_t t) const {
    if (t == kNone) {
      return kNone;
    }
    for (std::size_t i = t; i > floor_;) {
      --i;
      if (tokens_[i].kind == Kind::kDirectiveEnd) {
        return kNone;
      }
      if (tokens_[i].kind != Kind::kSpace && tokens_[i].kind != Kind::kComment) {
        return i;
      }
    }
    return kNone;
  }

  // The bracket ((), [] or {}) that matches the one at `from`, scanning forward (step 1) or
  // backward (step -1) without leaving a directive or crossing one; kNone when unbalanced.
  std::size_t match(std::size_t from, int step) const {
    std::string pending;  // the brackets still to close, innermost last
    for (std::size_t i = from; i < tokens_.size() && i >= floor_;
         i += static_cast<std::size_t>(step)) {
      if (tokens_[i].kind == Kind::kDirectiveEnd) {
        return kNone;
      }
      if (tokens_[i].kind != Kind::kPunct || text(i).size() != 1) {
        continue;
      }
      const char c = text(i)[0];
      const std::string_view opens = step > 0 ? "([{" : ")]}";
      const std::string_view closes = step > 0 ? ")]}" : "([{";
      if (const std::size_t k = opens.find(c); k != npos) {
        pending.push_back(closes[k]);
      } else if (closes.find(c) != npos) {
        if (pending.empty() || pending.back() != c) {
          return kNone;
        }
        pending.pop_back();
      }
      if (pending.empty()) {
        return i;
      }
    }
    return kNone;
  }

  // The '<' that opens the template argument list closed by the '>' at `close`, or kNone.
  std::size_t match_angle_backward(std::size_t close) const {
    int depth = 0;
    for (std::size_t i = close + 1; i > floor_;) {
      --i;
      if (tokens_[i].kind == Kind::kDirectiveEnd) {
        return kNone;
      }
      if (is(i, ">")) {
        ++depth;
      } else if (is(i, "<")) {
        if (--depth == 0) {
          return i;
        }
      } else if (is_any(i, {")", "]"})) {
        i = match(i, -1);
        if (i == kNone) {
          return kNone;
        }
      } else if (is_any(i, {"(", "[", "{", "}", ";", "<<<"})) {
        return kNone;
      }
    }
    return kNone;
  }

  // Token t is an identifier that can be (part of) a kernel expression: not a keyword other than
  // `this`, and not the name a #define defines.
  bool is_name(std::size_t t) const {
    if (t >= tokens_.size() || tokens_[t].kind != Kind::kIdentifier) {
      return false;
    }
    if (text(t) == "this") {
      return true;
    }
    if (is_keyword(text(t))) {
      return false;
    }
    const std::size_t before = prev(t);
    return !(is(before, "define") && tokens_[before].in_directive && is(prev(before), "#"));
  }

  // The first token of the (qualified, possibly templated) name whose last token is `last`:
  // `k`, `ns::k`, `::k`, `k<float, 256>`, `A<int>::template k<2>`, or a##b in a macro.
  std::size_t id_start(std::size_t last) const {
    std::size_t start = last;
    if (is(last, ">")) {
      start = prev(match_angle_backward(last));
      if (!is_name(start)) {
        return kNone;
      }
    } else if (!is_name(last)) {
      return kNone;
    }
    std::size_t before = prev(start);
    if (is(before, "template") && is_any(prev(before), {"::", ".", "->"})) {
      start = before;
      before = prev(before);
    }
    if (is(before, "::")) {
      const std::size_t scope = prev(before);
      const std::size_t scope_start = is_name(scope) || is(scope, ">") ? id_start(scope) : kNone;
      return scope_start != kNone ? scope_start : before;  // a leading `::`
    }
    if (is(before, "##") && tokens_[before].in_directive) {
      const std::size_t pasted = id_start(prev(before));
      return pasted != kNone ? pasted : start;
    }
    return start;
  }

  // The first token of the kernel expression whose last token is `last`, or kNone: a name, a
  // member access (`.`, `->`), a subscript, a call or a parenthesized expression, and chains of
  // these.
  std::size_t operand_start(std::size_t last) const {
    if (is(last, "]")) {
      return operand_start(prev(match(last, -1)));  // the object subscripted
    }
    if (is(last, ")")) {
      const std::size_t open = match(last, -1);
      if (open == kNone) {
        return kNone;
      }
      const std::size_t callee = prev(open);
      if (is_name(callee) || is_any(callee, {">", "]"})) {
        const std::size_t call = operand_start(callee);
        if (call != kNone) {
          return call;
        }
      }
      return open;  // a parenthesized expression
    }
    const std::size_t start = id_start(last);
    if (start == kNone) {
      return kNone;
    }
    const std::size_t before = prev(start);
    if (is_any(before, {".", "->"})) {
      const std::size_t object = operand_start(prev(before));
      if (object != kNone) {
        return object;
      }
    }
    return start;
  }

  // The '>' at t starts a `>>>`: three adjacent '>'.
  bool closes_launch(std::size_t t) const {
    return t + 2 < tokens_.size() && is(t + 1, ">") && is(t + 2, ">") &&
           tokens_[t + 1].begin == tokens_[t].end && tokens_[t + 2].begin == tokens_[t + 1].end;
  }

  // `EXPR<<<CFG>>>` with `<<<` at token t; returns the token to go on from.
  std::size_t launch(std::size_t t) {
    const Token& open = tokens_[t];
    const std::size_t expr_last = prev(t);
    const std::size_t expr_first = operand_start(expr_last);
    if (expr_first == kNone) {
      error(open.begin, "expected a kernel before '<<<'");
      return t + 1;
    }
    // The configuration ends at the first `>>>` outside brackets; a ';' or an unbalanced closing
    // bracket first means the `>>>` is missing.
    std::size_t close = kNone;
    int depth = 0;
    for (std::size_t i = t + 1; i < tokens_.size() && close == kNone; ++i) {
      if (tokens_[i].kind == Kind::kDirectiveEnd && open.in_directive) {
        break;
      }
      if (is(i, ">") && depth == 0 && closes_launch(i)) {
        close = i;
      } else if (is_any(i, {"(", "[", "{"})) {
        ++depth;
      } else if (is_any(i, {")", "]", "}"}) && depth-- == 0) {
        break;
      } else if (is(i, ";") && depth == 0) {
        break;
      }
    }
    if (close == kNone) {
      error(open.begin, "unterminated '<<<': expected '>>>'");
      return t + 1;
    }
    const std::size_t last = close + 2;
    const std::size_t args = next(last);
    if (!open.in_directive && !is(args, "(")) {
      error(args == kNone ? tokens_[last].end : tokens_[args].begin,
            "expected '(' with the kernel arguments after '>>>'");
    }

    const std::size_t expr_end = tokens_[expr_last].end;
    const std::string_view kernel =
        s_.substr(tokens_[expr_first].begin, expr_end - tokens_[expr_first].begin);
    const std::string_view gap = s_.substr(expr_end, open.begin - expr_end);
    std::string replacement = "::gpulab::sim::detail::make_launcher(GPULAB_SIM_KERNEL(";
    replacement.append(kernel).append(")");
    if (gap.find_first_not_of(" \t") != npos) {
      replacement.append(gap);  // a newline or a comment: kept, so lines stay where they were
    }
    replacement.append(", \"").append(kernel_name(expr_first, expr_last)).append("\", ");
    replacement.append(s_.substr(open.end, tokens_[close].begin - open.end)).append(")");
    replace(expr_first, last, std::move(replacement));
    return last + 1;
  }

  // The kernel expression as a C string body: blanks, newlines and comments become one space.
  std::string kernel_name(std::size_t first, std::size_t last) const {
    std::string name;
    bool blank = false;
    for (std::size_t i = first; i <= last; ++i) {
      if (tokens_[i].kind == Kind::kSpace || tokens_[i].kind == Kind::kComment) {
        blank = true;
        continue;
      }
      if (blank && !name.empty()) {
        name += ' ';
      }
      blank = false;
      for (const char c : text(i)) {
        if (c == '"' || c == '\\') {
          name += '\\';
        }
        name += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;  // a newline in a literal
      }
    }
    return name;
  }

  // `extern __shared__ TYPE NAME[];` with `extern` at token t; returns the token to go on from.
  std::size_t dynamic_shared(std::size_t t) {
    const std::string form = "expected 'extern __shared__ TYPE NAME[];'";
    const std::size_t shared = next(t);
    const bool directive = tokens_[t].in_directive;
    const auto fail = [&](std::size_t at, const std::string& message) {
      error(at == kNone ? s_.size() : tokens_[at].begin, message);
      return shared + 1;
    };

    // Alignment specifiers before `extern` belong to the declaration (and are dropped with it).
    std::size_t first = t;
    for (std::size_t before = prev(first); is(before, ")"); before = prev(first)) {
      const std::size_t specifier = prev(match(before, -1));
      if (!is_any(specifier, {"__align__", "alignas"})) {
        break;
      }
      first = specifier;
    }

    // TYPE: every token up to NAME[, without the alignment specifiers.
    std::vector<std::size_t> type;
    int angle_depth = 0;
    std::size_t i = next(shared);
    for (; !is(i, "[") || angle_depth > 0; i = next(i)) {
      if (i == kNone || tokens_[i].kind == Kind::kDirectiveEnd) {
        return fail(i, form + ", found the end of the " + (i == kNone ? "file" : "directive"));
      }
      if (is_any(i, {"__align__", "alignas"})) {
        const std::size_t paren = next(i);
        const std::size_t paren_close = is(paren, "(") ? match(paren, 1) : kNone;
        if (paren_close == kNone) {
          return fail(i, "expected '(N)' after '" + std::string(text(i)) + "': " + form);
        }
        i = paren_close;
        continue;
      }
      if (is(i, "(")) {  // decltype(...)
        const std::size_t paren_close = match(i, 1);
        if (paren_close == kNone) {
          return fail(i, form + ": unbalanced '('");
        }
        for (; i != paren_close; i = next(i)) {
          type.push_back(i);
        }
      } else if (is(i, "<")) {
        ++angle_depth;
      } else if (is(i, ">")) {
        --angle_depth;
      } else if (is(i, ",") && angle_depth == 0) {
        return fail(i, form + ": one array per declaration");
      } else if (is_any(i, {";", "=", "{", "}", ")", "]"})) {
        return fail(i, form + ": dynamic shared memory is an array of unknown size");
      }
      type.push_back(i);
    }
    const std::size_t bracket = i;
    if (type.size() < 2 || !is_name(type.back())) {
      return fail(bracket, form + ": a type and a name before '['");
    }
    const std::string name(text(type.back()));
    type.pop_back();
    const std::size_t bracket_close = next(bracket);
    if (!is(bracket_close, "]")) {
      return fail(bracket_close, form +
                                     ": no size in the brackets (the size of dynamic shared "
                                     "memory is the launch's third argument)");
    }
    std::size_t last = bracket_close;
    const std::size_t after = next(bracket_close);
    if (is(after, ";")) {
      last = after;
    } else if (is(after, ",")) {
      return fail(after, form + ": one array per declaration");
    } else if (!directive || (after != kNone && tokens_[after].kind != Kind::kDirectiveEnd)) {
      return fail(after, form + ": ';' after '" + name + "[]'");
    }

    std::string type_text;
    for (std::size_t k = 0; k < type.size(); ++k) {
      if (k > 0 && tokens_[type[k - 1]].end != tokens_[type[k]].begin) {
        type_text += ' ';
      }
      type_text.append(text(type[k]));
    }
    std::string replacement = type_text + "* const " + name +
                              " = ::gpulab::sim::detail::dynamic_shared<" + type_text + ">()" +
                              (last == after ? ";" : "");
    // The declaration's comments and newlines go after it, in their order, so lines stay where
    // they were; in a directive each newline continues the directive.
    for (std::size_t k = first; k <= last; ++k) {
      if (tokens_[k].kind == Kind::kComment) {
        replacement.append(" ").append(text(k));
        continue;
      }
      for (const char c : text(k)) {
        if (c == '\n') {
          replacement += directive ? "\\\n" : "\n";
        }
      }
    }
    replace(first, last, std::move(replacement));
    return last + 1;
  }

  // `#pragma unroll` with `unroll` at token t becomes `#pragma GCC unroll kFullUnrollFactor`, and
  // `#pragma unroll N` for a number N `#pragma GCC unroll N`. Any other count (a template
  // parameter, an expression) stays as it is: GCC 12 takes only a constant it can evaluate where
  // it parses the pragma, and ignores the unknown pragma. Returns the token to go on from.
  std::size_t unroll(std::size_t t) {
    const std::size_t count = next(t);
    if (count == kNone || tokens_[count].kind == Kind::kDirectiveEnd) {
      replace(t, t, "GCC unroll " + std::to_string(kFullUnrollFactor));
    } else if (tokens_[count].kind == Kind::kNumber) {
      const std::size_t after = next(count);
      if (after == kNone || tokens_[after].kind == Kind::kDirectiveEnd) {
        replace(t, t, "GCC unroll");
      }
    }
    return t + 1;
  }

  void replace(std::size_t first, std::size_t last, std::string replacement) {
    edits_.push_back({tokens_[first].begin, tokens_[last].end, std::move(replacement)});
    floor_ = last + 1;
  }

  void error(std::size_t offset, std::string message) {
    const auto line = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const std::size_t line_start = *(line - 1);
    errors_.push_back({static_cast<int>(line - line_starts_.begin()),
                       static_cast<int>(offset - line_start + 1), std::move(message)});
  }

  std::string_view s_;
  std::vector<Token> tokens_;
  std::vector<std::size_t> line_starts_;  // offset of the first byte of each line
  std::vector<Edit> edits_;               // in source order, not overlapping
  std::vector<TranslateError> errors_;
  std::size_t floor_ = 0;  // the first token after the last replacement: scans back stop here
};

}  // namespace

Translation translate_cuda_source(std::string_view source) {
  return Translator(source).run();
}

}  // namespace gpulab::sim
