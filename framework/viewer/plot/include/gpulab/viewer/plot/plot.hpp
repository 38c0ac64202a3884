// The viewer's charts: one small plotting module on Dear ImGui draw lists (Debian ships no
// implot). A panel describes a chart as plain data - axes, line and point series, grouped bars,
// histogram columns, reference lines - and draw() lays it out and draws it in one call: the
// title and legend, grid and tick labels, the data clipped to the plot area, and a tooltip for
// the point or bar under the mouse. Describing first and drawing once lets draw() fit the axes
// and size the margins to what is actually there.
//
// The arithmetic (axis ranges, linear/log mapping, ticks, short numbers) lives in
// gpulab/viewer/plot/math.hpp and is unit-tested there; this file only draws.
//
//   plot::Chart chart;
//   chart.title = "bandwidth";
//   chart.x = {.label = "bytes moved (B)", .log = true};
//   chart.y = {.label = "GB/s", .log = true};
//   chart.series.push_back({.name = "measured", .colour = plot::measured(), .x = xs, .y = ys});
//   chart.lines.push_back({.value = 3350, .label = "H100 SXM peak", .colour = plot::modeled()});
//   plot::draw("##bw", chart, 220);
#pragma once

#include <imgui.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/viewer/plot/math.hpp"

namespace gpulab::viewer::plot {

// ---------------------------------------------------------------------------------------------
// Colours: the meaning colours of colours.hpp as draw-list colours, and a palette for sources.
// ---------------------------------------------------------------------------------------------

[[nodiscard]] ImU32 measured();     ///< green: measured here
[[nodiscard]] ImU32 modeled();      ///< blue: computed from a spec
[[nodiscard]] ImU32 estimated();    ///< amber: an estimate
[[nodiscard]] ImU32 unavailable();  ///< grey: no number
[[nodiscard]] ImU32 error();        ///< red: something failed / a limit
/// The i-th colour of a small palette for telling sources apart (wraps around after six).
[[nodiscard]] ImU32 source_colour(std::size_t index);
/// `colour` with its alpha multiplied by `alpha` (0..1).
[[nodiscard]] ImU32 faded(ImU32 colour, float alpha);

// ---------------------------------------------------------------------------------------------
// What a chart shows.
// ---------------------------------------------------------------------------------------------

/// One axis: its label, scale and (optionally) a fixed range or fixed ticks.
struct AxisSpec {
  std::string label{};          ///< name and unit, e.g. "bytes moved (B)"; empty for none
  bool log = false;             ///< log10 scale (values <= 0 are not drawn)
  bool include_zero = false;    ///< a fitted linear axis starts at 0 or below
  std::optional<Axis> range{};  ///< fixed range; empty: fitted to the chart's data (fit_axis)
  double scale = 1;             ///< tick labels show value / scale (1e12: FLOP/s as TFLOP/s)
  bool integer = false;         ///< a count: fitted ticks only at whole numbers
  std::vector<Tick> ticks{};    ///< fixed ticks (e.g. block sizes 32..1024); empty: axis_ticks()
};

/// How a series is drawn.
enum class Style {
  line,         ///< straight segments between points
  steps,        ///< horizontal then vertical segments (a value that holds until the next x)
  points,       ///< markers only
  line_points,  ///< segments and markers
};

/// Marker shapes, to tell series apart beyond colour (the roofline gives each source one).
enum class Marker { circle, square, triangle, diamond };

/// A line or point series. Points whose x or y is not finite (or <= 0 on a log axis) are
/// skipped and break the line.
struct Series {
  std::string name{};                   ///< legend text; empty: not in the legend
  ImU32 colour = IM_COL32_WHITE;        ///< line and marker colour
  std::vector<double> x{};              ///< x values
  std::vector<double> y{};              ///< y values, one per x (extra values are ignored)
  Style style = Style::line;            ///< how the points are joined
  Marker marker = Marker::circle;       ///< marker shape (points, line_points)
  bool hollow = false;                  ///< outline markers (e.g. modeled) instead of filled
  bool dashed = false;                  ///< dashed segments
  float thickness = 2.0F;               ///< line thickness in pixels
  float radius = 4.0F;                  ///< marker radius in pixels
  std::vector<std::string> labels{};    ///< text next to each point where it fits; empty: none
  std::vector<std::string> tooltips{};  ///< hover text per point; empty: the name and x, y
};

/// One group of bars (e.g. "measured"): one value per category.
struct BarGroup {
  std::string name{};                   ///< legend text
  ImU32 colour = IM_COL32_WHITE;        ///< fill colour
  std::vector<double> values{};         ///< per category; NaN: no bar (e.g. not measured)
  std::vector<std::string> labels{};    ///< text at the end of each bar; empty: none
  std::vector<std::string> tooltips{};  ///< hover text per bar; empty: name, category, value
};

/// Grouped bars over named categories: bars of each group side by side within a category.
/// With bars the category axis is drawn from `categories` and the chart's other axis carries
/// the values (y for vertical bars, x for horizontal ones).
struct Bars {
  std::vector<std::string> categories{};   ///< one per bar position, in order
  std::vector<BarGroup> groups{};          ///< side by side within a category
  bool horizontal = false;                 ///< categories down the left, values along x
  std::optional<std::size_t> highlight{};  ///< category drawn outlined, with `highlight_tag`
  std::string highlight_tag{};  ///< e.g. "bottleneck": under the category's name (horizontal
                                ///< bars) or at the top of its band (vertical bars)
  ImU32 highlight_colour = IM_COL32(255, 115, 115, 255);  ///< outline and tag colour
};

/// Adjacent columns on a continuous x axis: a histogram.
struct Columns {
  std::string name{};                   ///< legend text; empty: none
  ImU32 colour = IM_COL32_WHITE;        ///< fill colour
  double left = 0;                      ///< left edge of the first column
  double width = 1;                     ///< width of every column (> 0)
  std::vector<double> heights{};        ///< one per column
  std::vector<std::string> tooltips{};  ///< hover text per column; empty: range and height
};

/// Filled rectangles in data coordinates, all of one colour: one band of a stacked timeline (an
/// allocation, over the spans of time it sits at one height).
struct Blocks {
  struct Block {
    double x0 = 0;  ///< left
    double x1 = 0;  ///< right (> x0)
    double y0 = 0;  ///< bottom
    double y1 = 0;  ///< top (> y0)
  };
  std::string name{};             ///< legend text; empty: not in the legend
  ImU32 colour = IM_COL32_WHITE;  ///< fill colour
  std::vector<Block> blocks{};    ///< the rectangles
  std::string tooltip{};          ///< hover text over any of them; empty: the name
};

/// A horizontal or vertical reference line across the plot (a peak, a ridge, the current point).
struct RefLine {
  double value = 0;               ///< where it crosses its axis
  bool vertical = false;          ///< vertical (at an x value) or horizontal (at a y value)
  std::string label{};            ///< drawn along the line inside the plot; empty: none
  ImU32 colour = IM_COL32_WHITE;  ///< line and label colour
  bool dashed = true;             ///< dashed line
  int label_row = 0;              ///< vertical lines: text row from the top for the label, so
                                  ///< the labels of lines close together do not overlap
};

/// A legend line that is not a series (e.g. "measured: CPU simulation").
struct LegendNote {
  std::string text{};             ///< the text
  ImU32 colour = IM_COL32_WHITE;  ///< its colour
};

/// Everything one chart shows.
struct Chart {
  std::string title{};                 ///< drawn above the plot; empty: none
  AxisSpec x{};                        ///< bottom axis
  AxisSpec y{};                        ///< left axis
  std::vector<Series> series{};        ///< drawn in order, after columns and bars
  std::optional<Bars> bars{};          ///< grouped bars (they define the category axis)
  std::vector<Columns> columns{};      ///< histogram columns
  std::vector<Blocks> blocks{};        ///< filled rectangles, drawn first
  std::vector<RefLine> lines{};        ///< reference lines, drawn over the data
  std::vector<LegendNote> notes{};     ///< extra legend lines
  std::string empty_text = "no data";  ///< shown in the plot when there is nothing to draw
  float y_label_width = 0;  ///< at least this many pixels left of the plot for the y tick
                            ///< labels, so that charts stacked above each other line up
};

/// Lays out and draws `chart` as one item `height` pixels tall across the available width, with
/// a tooltip for the point, bar or column nearest the mouse (within a few pixels). `id` must be
/// unique within the window ("##bandwidth"). Never fails: a chart with nothing drawable shows
/// its empty_text, a region too small for a plot shows nothing.
void draw(const char* id, const Chart& chart, float height);

}  // namespace gpulab::viewer::plot
