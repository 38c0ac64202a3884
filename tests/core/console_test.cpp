// Console output: tables align columns and show units; numbers format predictably; the progress
// bar draws only on terminals.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "gpulab/core/console.hpp"

namespace {

using gpulab::Align;
using gpulab::Table;

TEST(Table, AlignsColumnsAndShowsUnitsInHeaders) {
  Table table({{"kernel", "", Align::left}, {"bandwidth", "GB/s", Align::right}});
  table.add_row({"copy", "3012.5"});
  table.add_row({"vector_add", "12.0"});
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(table.render(),
            "kernel      bandwidth (GB/s)\n"
            "----------------------------\n"
            "copy                  3012.5\n"
            "vector_add              12.0\n");
}

TEST(Table, CountsUtf8CodePointsNotBytes) {
  Table table({{"t", "µs", Align::right}, {"x", "", Align::left}});
  table.add_row({"1", "a"});
  // "t (µs)" is 6 characters wide (7 bytes); the cell is right-aligned to 6.
  EXPECT_EQ(table.render(), "t (µs)  x\n---------\n     1  a\n");
}

TEST(Table, RejectsRowsWithTheWrongCellCount) {
  Table table({{"a", "", Align::left}, {"b", "", Align::left}});
  EXPECT_THROW(table.add_row({"only one"}), std::invalid_argument);
  EXPECT_THROW(Table({}), std::invalid_argument);
}

TEST(Format, FixedHandlesDecimalsAndNonFiniteValues) {
  EXPECT_EQ(gpulab::format_fixed(3350.0, 0), "3350");
  EXPECT_EQ(gpulab::format_fixed(989.44, 1), "989.4");
  EXPECT_EQ(gpulab::format_fixed(std::nan(""), 2), "n/a");
  EXPECT_EQ(gpulab::format_fixed(std::numeric_limits<double>::infinity(), 2), "inf");
  EXPECT_EQ(gpulab::format_fixed(-std::numeric_limits<double>::infinity(), 2), "-inf");
}

TEST(Format, BytesUseDecimalUnits) {
  EXPECT_EQ(gpulab::format_bytes(512), "512 B");
  EXPECT_EQ(gpulab::format_bytes(50e6), "50.0 MB");
  EXPECT_EQ(gpulab::format_bytes(80e9), "80.0 GB");
  EXPECT_EQ(gpulab::format_bytes(1.5e12), "1.5 TB");
}

TEST(Format, BytesKibShowsExactBytesAndKib) {
  EXPECT_EQ(gpulab::format_bytes_kib(233472), "233472 B (228 KiB)");
  EXPECT_EQ(gpulab::format_bytes_kib(1024), "1024 B (1 KiB)");
  EXPECT_EQ(gpulab::format_bytes_kib(1536 + 100), "1636 B (1.6 KiB)");
}

std::string contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  int c = 0;
  while ((c = std::fgetc(file)) != EOF) {
    text += static_cast<char>(c);
  }
  return text;
}

TEST(Console, FilesAndNullAreNotTerminals) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(gpulab::is_terminal(file));
  EXPECT_FALSE(gpulab::is_terminal(nullptr));
  std::fclose(file);
}

TEST(ProgressBar, StaysQuietWhenNotATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    gpulab::ProgressBar bar("work", 10, file);
    EXPECT_FALSE(bar.interactive());
    bar.advance(5);
    bar.advance(5);
    EXPECT_EQ(bar.done(), 10u);
  }
  EXPECT_EQ(contents(file), "");
  std::fclose(file);
}

TEST(ProgressBar, OffATerminalPrintsAPlainLinePerStepOnceTheQuietTimeIsOver) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    gpulab::ProgressBar bar("levels", 10, file, false, std::chrono::milliseconds(0));
    bar.doing("level 0 (unfused)");
    bar.advance(4);
    bar.doing("level 1 (fused softmax)");
    bar.advance(6);
  }
  const std::string text = contents(file);
  EXPECT_NE(text.find("levels: 0/10 done in 0:00; now level 0 (unfused)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("levels: 4/10 done in 0:00, about 0:00 left; now level 1 (fused softmax)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "plain lines only: " << text;
  std::fclose(file);
}

TEST(ProgressBar, OnATerminalShowsWhatItDoesAndTheTimeLeft) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    gpulab::ProgressBar bar("levels", 4, file, true);
    bar.doing("level 0");
    bar.advance();
    bar.doing("level 1");
  }
  const std::string text = contents(file);
  EXPECT_NE(text.find("0/4 0:00: level 0"), std::string::npos) << text;
  EXPECT_NE(text.find("1/4 0:00, about 0:00 left: level 1"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "the bar must stay on one line";
  std::fclose(file);
}

TEST(ProgressBar, DrawsOnOneLineAndEndsItWhenInteractive) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    gpulab::ProgressBar bar("sizes", 4, file, true);
    bar.advance();
    bar.advance(10);  // clamps to the total
    EXPECT_EQ(bar.done(), 4u);
  }
  const std::string text = contents(file);
  EXPECT_NE(text.find("\rsizes [="), std::string::npos) << text;
  EXPECT_NE(text.find("4/4"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "the bar must stay on one line";
  std::fclose(file);
}

}  // namespace
