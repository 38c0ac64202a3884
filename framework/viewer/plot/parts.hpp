// What the chart's drawing (plot.cpp) and its layout (layout.cpp) share, internal to the
// plotting module: the spacing, rectangles, legend entries, fitted axes, and the primitives both
// draw with.
#pragma once

#include <imgui.h>

#include <span>
#include <string>
#include <vector>

#include "gpulab/viewer/plot/plot.hpp"

namespace gpulab::viewer::plot::detail {

constexpr float kPad = 4.0F;          // space between the parts of a chart
constexpr float kHoverRadius = 7.0F;  // how near the mouse must be to a point for its tooltip
constexpr float kLegendSwatch = 18.0F;
constexpr float kLegendGap = 12.0F;

struct Rect {
  ImVec2 min;
  ImVec2 max;

  [[nodiscard]] float width() const { return max.x - min.x; }
  [[nodiscard]] float height() const { return max.y - min.y; }
  [[nodiscard]] bool contains(ImVec2 p) const {
    return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y;
  }
  [[nodiscard]] bool contains(const Rect& r) const { return contains(r.min) && contains(r.max); }
  [[nodiscard]] bool overlaps(const Rect& r) const {
    return min.x < r.max.x && r.min.x < max.x && min.y < r.max.y && r.min.y < max.y;
  }
  [[nodiscard]] Rect grown(float by) const {
    return {ImVec2(min.x - by, min.y - by), ImVec2(max.x + by, max.y + by)};
  }
};

// One legend entry: what its swatch looks like and its text.
struct LegendItem {
  enum class Kind { line, points, box, text } kind = Kind::text;
  ImU32 colour = IM_COL32_WHITE;
  std::string text;
  Marker shape = Marker::circle;
  bool hollow = false;
  bool dashed = false;

  [[nodiscard]] float width() const;
};

// The chart's axes once fitted to its data.
struct Resolved {
  Axis x;
  Axis y;
  // With bars: which axis holds the categories (the other holds the values).
  bool categories_on_x = false;
  bool categories_on_y = false;
};

/// The size of `text` in the current font.
[[nodiscard]] ImVec2 text_size(const std::string& text);
/// ImGui's text colour, faded to `alpha`.
[[nodiscard]] ImU32 text_colour(float alpha = 1.0F);
/// Whether `value` can be drawn on `axis` (finite; positive on a log axis).
[[nodiscard]] bool usable(const Axis& axis, double value);
/// The label of a tick, in the axis's display unit (its value divided by `scale`).
[[nodiscard]] std::string tick_label(const Tick& tick, double scale);
/// `text` shortened with "..." to fit `width` pixels (at least its first character).
[[nodiscard]] std::string elide(const std::string& text, float width);
/// A line of text on a dark backing, so it stays readable over grid lines and data. Returns the
/// rectangle of the text.
Rect backed_text(ImDrawList* draw, ImVec2 pos, ImU32 colour, const std::string& text);
/// Cuts the segment (x0, y0)-(x1, y1) to `r` (Liang-Barsky), in doubles. False when nothing of
/// it is inside.
bool clip_segment(const Rect& r, double& x0, double& y0, double& x1, double& y1);
/// A straight line, or a dashed one.
void line_between(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 colour, float thickness, bool dashed);
/// A point's marker of radius `r` centred on `c`.
void marker(ImDrawList* draw, ImVec2 c, Marker shape, float r, ImU32 colour, bool hollow);
/// The legend's entries: bar groups, columns, blocks, named series, then notes.
[[nodiscard]] std::vector<LegendItem> legend_items(const Chart& chart);
/// Places the title and legend items in rows across `width`, starting at `origin`. Returns the
/// rows used; with `draw` null it only measures.
int layout_header(ImDrawList* draw, ImVec2 origin, float width, const std::string& title,
                  const std::vector<LegendItem>& items);
/// The chart's axes fitted to its data (or to the specs' fixed ranges).
[[nodiscard]] Resolved resolve_axes(const Chart& chart);
/// Ticks for an axis: the spec's fixed ticks inside the range, else axis_ticks().
[[nodiscard]] std::vector<Tick> ticks_for(const AxisSpec& spec, const Axis& axis, int max_labels);
/// Tick labels of the category axis: the category names at 0..n-1 (top to bottom when the
/// categories run down the y axis).
[[nodiscard]] std::vector<Tick> category_ticks(const Bars& bars);
/// Whether anything of `chart` can be drawn on `axes`.
[[nodiscard]] bool has_data(const Chart& chart, const Resolved& axes);
/// The widest major tick label, in pixels.
[[nodiscard]] float widest_label(const std::vector<Tick>& ticks, double scale);

}  // namespace gpulab::viewer::plot::detail
