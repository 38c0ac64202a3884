#include "gpulab/core/console.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace gpulab {
namespace {

std::string header_text(const Column& column) {
  return column.unit.empty() ? column.header : column.header + " (" + column.unit + ")";
}

// Display width of UTF-8 text: counts code points, not bytes, so "µs" and "²" align.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void pad(std::string& line, std::string_view cell, std::size_t width, Align align) {
  const std::size_t fill = width - std::min(width, display_width(cell));
  if (align == Align::right) {
    line.append(fill, ' ');
  }
  line.append(cell);
  if (align == Align::left) {
    line.append(fill, ' ');
  }
}

std::string format_duration(std::chrono::steady_clock::duration elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(seconds / 60),
                static_cast<long long>(seconds % 60));
  return text;
}

}  // namespace

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {
  if (columns_.empty()) {
    throw std::invalid_argument("Table needs at least one column");
  }
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("Table row has " + std::to_string(cells.size()) +
                                " cells, the table has " + std::to_string(columns_.size()) +
                                " columns");
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) {
    widths.push_back(display_width(header_text(column)));
  }
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  }
  auto render_line = [&](auto&& cell_of) {
    std::string line;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) {
        line += "  ";
      }
      pad(line, cell_of(i), widths[i], columns_[i].align);
    }
    // Trailing spaces of a left-aligned last column carry no information.
    line.erase(line.find_last_not_of(' ') + 1);
    return line + '\n';
  };
  std::string text = render_line([&](std::size_t i) { return header_text(columns_[i]); });
  std::size_t rule = 2 * (columns_.size() - 1);
  for (std::size_t width : widths) {
    rule += width;
  }
  text += std::string(rule, '-') + '\n';
  for (const auto& row : rows_) {
    text += render_line([&](std::size_t i) { return row[i]; });
  }
  return text;
}

std::ostream& operator<<(std::ostream& out, const Table& table) {
  return out << table.render();
}

std::string format_fixed(double value, int decimals) {
  if (std::isnan(value)) {
    return "n/a";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(std::clamp(decimals, 0, 17));
  text << value;
  return text.str();
}

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  std::size_t unit = 0;
  while (std::abs(bytes) >= 1000.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1000.0;
    ++unit;
  }
  return format_fixed(bytes, unit == 0 ? 0 : 1) + " " + kUnits[unit];
}

std::string format_bytes_kib(std::uint64_t bytes) {
  const bool whole = bytes % 1024 == 0;
  return std::to_string(bytes) + " B (" +
         format_fixed(static_cast<double>(bytes) / 1024.0, whole ? 0 : 1) + " KiB)";
}

bool is_terminal(std::FILE* stream) {
  return stream != nullptr && isatty(fileno(stream)) == 1;
}

ProgressBar::ProgressBar(std::string label, std::size_t total, std::FILE* stream)
    : ProgressBar(std::move(label), total, stream, is_terminal(stream)) {}

ProgressBar::ProgressBar(std::string label, std::size_t total, std::FILE* stream, bool interactive,
                         std::chrono::milliseconds quiet)
    : label_(std::move(label)),
      total_(total),
      stream_(stream),
      interactive_(interactive && stream != nullptr),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  finish();
}

std::string ProgressBar::time_left() const {
  if (done_ == 0 || done_ >= total_) {
    return "";
  }
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  const auto left = elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_);
  return ", about " +
         format_duration(std::chrono::duration_cast<std::chrono::steady_clock::duration>(left)) +
         " left";
}

void ProgressBar::doing(std::string what) {
  doing_ = std::move(what);
  if (stream_ == nullptr || finished_) {
    return;
  }
  if (interactive_) {
    draw();
    return;
  }
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed < quiet_) {
    return;
  }
  std::fprintf(stream_, "%s: %zu/%zu done in %s%s; now %s\n", label_.c_str(), done_, total_,
               format_duration(elapsed).c_str(), time_left().c_str(), doing_.c_str());
  std::fflush(stream_);
}

void ProgressBar::advance(std::size_t units) {
  done_ = std::min(total_, done_ + units);
  const auto now = std::chrono::steady_clock::now();
  if (done_ == total_ || now - last_draw_ >= std::chrono::milliseconds(50)) {
    last_draw_ = now;
    draw();
  }
}

void ProgressBar::finish() {
  if (finished_) {
    return;
  }
  finished_ = true;
  if (interactive_) {
    doing_.clear();
    draw();
    std::fputc('\n', stream_);
    std::fflush(stream_);
  }
}

void ProgressBar::draw() {
  if (!interactive_) {
    return;
  }
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total_ == 0 ? kWidth : kWidth * done_ / total_;
  std::string bar(filled, '=');
  if (filled < kWidth) {
    bar += '>';
    bar.append(kWidth - filled - 1, ' ');
  }
  // "\r" returns to the start of the line; "\x1b[K" clears what a longer line left behind.
  std::fprintf(stream_, "\r%s [%s] %zu/%zu %s%s%s%s\x1b[K", label_.c_str(), bar.c_str(), done_,
               total_, format_duration(std::chrono::steady_clock::now() - start_).c_str(),
               time_left().c_str(), doing_.empty() ? "" : ": ", doing_.c_str());
  std::fflush(stream_);
}

}  // namespace gpulab
