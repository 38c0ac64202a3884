#include "gpulab/core/lab.hpp"

#include <cstddef>
#include <string>

namespace gpulab {

void not_implemented(std::string_view lab, std::string_view function, std::source_location where) {
  // The path relative to the source tree reads better than the absolute build path.
  std::string file = where.file_name();
  for (const char* root : {"/labs/", "/solutions/"}) {
    if (const std::size_t at = file.rfind(root); at != std::string::npos) {
      file = file.substr(at + 1);
      break;
    }
  }
  throw NotImplemented(std::string(lab) + ": " + std::string(function) +
                       " is not implemented yet (fill in the TODO(" + std::string(lab) +
                       ") region at " + file + ":" + std::to_string(where.line()) + ")");
}

namespace {

struct Line {
  std::size_t number;  // 1-based
  std::string_view text;
};

enum class Kind { text, begin, end };

struct Piece {
  Kind kind;
  Line line;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 1;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    lines.push_back({number++, text.substr(0, eol)});
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
  }
  return lines;
}

Kind kind_of(std::string_view line, const std::string& begin_tag, const std::string& end_tag) {
  if (line.find(begin_tag) != std::string_view::npos) {
    return Kind::begin;
  }
  if (line.find(end_tag) != std::string_view::npos) {
    return Kind::end;
  }
  return Kind::text;
}

// The lines outside regions plus the BEGIN/END markers; region bodies are dropped. Unbalanced
// markers are reported into `errors`.
std::vector<Piece> outside(std::string_view text, std::string_view lab, const char* which,
                           std::vector<std::string>& errors) {
  const std::string begin_tag = "TODO(" + std::string(lab) + ") BEGIN";
  const std::string end_tag = "TODO(" + std::string(lab) + ") END";
  std::vector<Piece> pieces;
  bool inside = false;
  std::size_t opened_at = 0;
  for (const Line& line : split_lines(text)) {
    const Kind kind = kind_of(line.text, begin_tag, end_tag);
    if (kind == Kind::begin) {
      if (inside) {
        errors.push_back("line " + std::to_string(line.number) + " of the " + which +
                         ": TODO region opened inside the one opened at line " +
                         std::to_string(opened_at));
      }
      inside = true;
      opened_at = line.number;
      pieces.push_back({kind, line});
    } else if (kind == Kind::end) {
      if (!inside) {
        errors.push_back("line " + std::to_string(line.number) + " of the " + which +
                         ": TODO region closed but never opened");
      }
      inside = false;
      pieces.push_back({kind, line});
    } else if (!inside) {
      pieces.push_back({kind, line});
    }
  }
  if (inside) {
    errors.push_back("line " + std::to_string(opened_at) + " of the " + which +
                     ": TODO region never closed");
  }
  return pieces;
}

std::string quote(std::string_view text) {
  constexpr std::size_t kMax = 70;
  std::string shown(text.substr(0, kMax));
  if (text.size() > kMax) {
    shown += "...";
  }
  return "\"" + shown + "\"";
}

}  // namespace

std::vector<std::string> compare_outside_todo(std::string_view lab_text,
                                              std::string_view solution_text,
                                              std::string_view lab) {
  std::vector<std::string> errors;
  const std::vector<Piece> a = outside(lab_text, lab, "lab", errors);
  const std::vector<Piece> b = outside(solution_text, lab, "solution", errors);
  if (!errors.empty()) {
    return errors;
  }
  std::size_t i = 0;
  for (; i < a.size() && i < b.size(); ++i) {
    if (a[i].line.text != b[i].line.text) {
      errors.push_back("line " + std::to_string(a[i].line.number) + " of the lab / line " +
                       std::to_string(b[i].line.number) + " of the solution: " +
                       quote(a[i].line.text) + " vs " + quote(b[i].line.text));
      return errors;  // later lines are shifted; one difference is enough to act on
    }
  }
  if (i < a.size()) {
    errors.push_back("line " + std::to_string(a[i].line.number) +
                     " of the lab is missing from the solution: " + quote(a[i].line.text));
  } else if (i < b.size()) {
    errors.push_back("line " + std::to_string(b[i].line.number) +
                     " of the solution is missing from the lab: " + quote(b[i].line.text));
  }
  return errors;
}

}  // namespace gpulab
