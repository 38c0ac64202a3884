// Console output: aligned tables with units in the headers, number formatting, and a progress bar
// for long work that stays quiet when its stream is not a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// Horizontal alignment of a table column.
enum class Align { left, right };

/// One column of a Table: a header, an optional unit shown as "header (unit)", an alignment.
struct Column {
  std::string header;          ///< column title
  std::string unit;            ///< unit shown in the header, e.g. "GB/s"; empty for none
  Align align = Align::right;  ///< numbers right, text left
};

/// A text table with aligned columns. Cells are strings; format numbers with format_fixed().
class Table {
 public:
  explicit Table(std::vector<Column> columns);

  /// Appends a row; throws std::invalid_argument when its cell count differs from the columns.
  void add_row(std::vector<std::string> cells);
  /// Number of rows added so far.
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }
  /// The table as text: header, a rule, one line per row, each ending in '\n'.
  [[nodiscard]] std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Writes Table::render() to the stream.
std::ostream& operator<<(std::ostream& out, const Table& table);

/// Fixed-point formatting with `decimals` digits: format_fixed(3350, 0) == "3350".
/// NaN prints as "n/a", infinities as "inf"/"-inf".
[[nodiscard]] std::string format_fixed(double value, int decimals);

/// A byte count in decimal units with one decimal: 80e9 -> "80.0 GB", 50e6 -> "50.0 MB",
/// 512 -> "512 B".
[[nodiscard]] std::string format_bytes(double bytes);

/// Exact bytes with the KiB the hardware is sized in, for shared memory and register files:
/// 233472 -> "233472 B (228 KiB)"; sizes that are not whole KiB get one decimal.
[[nodiscard]] std::string format_bytes_kib(std::uint64_t bytes);

/// True when the stream is a terminal (isatty on its file descriptor).
[[nodiscard]] bool is_terminal(std::FILE* stream);

/// Progress of long work with an estimate of the time left, on `stream` (stderr by default):
///   on a terminal, one line redrawn in place:
///     "lab04 levels [=====>    ] 2/5 0:12, about 0:20 left: level 3 (flash), seq_len 1024"
///   elsewhere (a log, a pipe), one plain line each time a step starts (doing()), once the work has
///   taken `quiet` (2 s by default), so short runs print nothing:
///     "lab04 levels: 2/5 done in 0:12, about 0:20 left; now level 3 (flash), seq_len 1024"
/// The estimate assumes the units left take as long as the units done; callers weight the units by
/// their work (advance(units)) where steps differ in size.
class ProgressBar {
 public:
  /// total: units of work; stream: where to draw (stderr by default); interactive: override of
  /// the terminal check (tests use it); quiet: how long the plain lines wait.
  ProgressBar(std::string label, std::size_t total, std::FILE* stream = stderr);
  ProgressBar(std::string label, std::size_t total, std::FILE* stream, bool interactive,
              std::chrono::milliseconds quiet = std::chrono::seconds(2));
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Says what the work does from now on ("level 3 (flash), seq_len 1024"): shown on the bar, or
  /// printed as a plain line.
  void doing(std::string what);
  /// Marks `units` more done and redraws (at most every 50 ms, and always at the end).
  void advance(std::size_t units = 1);
  /// Completes the bar and ends its line; called by the destructor if not called before.
  void finish();
  /// Units done so far.
  [[nodiscard]] std::size_t done() const { return done_; }
  /// Whether this bar draws in place (a terminal) rather than printing plain lines.
  [[nodiscard]] bool interactive() const { return interactive_; }

 private:
  void draw();
  // ", about 0:20 left" once something is done, else "".
  [[nodiscard]] std::string time_left() const;

  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::string doing_;
  std::FILE* stream_;
  bool interactive_;
  std::chrono::milliseconds quiet_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace gpulab
