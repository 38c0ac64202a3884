#include "gpulab/viewer/plot/plot.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/viewer/plot/colours.hpp"
#include "plot/parts.hpp"

namespace gpulab::viewer::plot {

ImU32 measured() {
  return ImGui::ColorConvertFloat4ToU32(colours::kMeasured);
}
ImU32 modeled() {
  return ImGui::ColorConvertFloat4ToU32(colours::kModeled);
}
ImU32 estimated() {
  return ImGui::ColorConvertFloat4ToU32(colours::kEstimated);
}
ImU32 unavailable() {
  return ImGui::ColorConvertFloat4ToU32(colours::kUnavailable);
}
ImU32 error() {
  return ImGui::ColorConvertFloat4ToU32(colours::kError);
}

ImU32 source_colour(std::size_t index) {
  // Distinct from each other and from the meaning colours' green and blue, readable on the dark
  // theme: violet, orange, cyan, pink, olive, light grey.
  static constexpr ImU32 kPalette[] = {
      IM_COL32(200, 150, 255, 255), IM_COL32(255, 160, 90, 255),  IM_COL32(90, 215, 215, 255),
      IM_COL32(255, 130, 190, 255), IM_COL32(200, 200, 110, 255), IM_COL32(200, 200, 200, 255),
  };
  return kPalette[index % std::size(kPalette)];
}

ImU32 faded(ImU32 colour, float alpha) {
  ImVec4 rgba = ImGui::ColorConvertU32ToFloat4(colour);
  rgba.w *= std::clamp(alpha, 0.0F, 1.0F);
  return ImGui::ColorConvertFloat4ToU32(rgba);
}

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): the module's own parts

// Everything needed to turn data into pixels.
//
// Values far outside the axes never reach the draw list as huge coordinates: the mapping is
// done in doubles (finite for any input: axis_fraction bounds the fraction), and everything is
// cut to bounds() - the plot grown by a margin - before it becomes float pixels: positions are
// clamped to it (exact for the axis-aligned rectangles of bars and columns; a point that lands
// on its edge is outside the plot and not drawn), segments are clipped to it (clip_segment), so
// a line keeps its slope. The draw list's clip rect then trims everything at the plot's edge.
struct Frame {
  Rect plot;
  Resolved axes;

  [[nodiscard]] Rect bounds() const { return plot.grown(20); }
  // Unclipped pixel x and y of a value.
  [[nodiscard]] double sx(double x) const {
    return static_cast<double>(plot.min.x) +
           axis_fraction(axes.x, x) * static_cast<double>(plot.width());
  }
  [[nodiscard]] double sy(double y) const {
    return static_cast<double>(plot.max.y) -
           axis_fraction(axes.y, y) * static_cast<double>(plot.height());
  }
  // Pixel x and y of a value, clamped to bounds().
  [[nodiscard]] float px(double x) const {
    const Rect b = bounds();
    return static_cast<float>(
        std::clamp(sx(x), static_cast<double>(b.min.x), static_cast<double>(b.max.x)));
  }
  [[nodiscard]] float py(double y) const {
    const Rect b = bounds();
    return static_cast<float>(
        std::clamp(sy(y), static_cast<double>(b.min.y), static_cast<double>(b.max.y)));
  }
  [[nodiscard]] ImVec2 at(double x, double y) const { return ImVec2(px(x), py(y)); }
  // Where a bar or column starts on a value axis: 0, or the axis minimum when 0 is not on it.
  [[nodiscard]] static double base(const Axis& axis) {
    if (axis.log) {
      return axis.min;
    }
    return std::clamp(0.0, std::min(axis.min, axis.max), std::max(axis.min, axis.max));
  }
};

// What the mouse is over: the nearest point (or the bar/column under it) and its tooltip.
struct Hover {
  bool active = false;
  float distance = std::numeric_limits<float>::max();
  ImVec2 at{};
  bool is_point = false;
  std::string text;
};

std::string default_point_tooltip(const Chart& chart, const Series& series, double x, double y) {
  const auto value = [](const AxisSpec& spec, const char* name, double v) {
    return (spec.label.empty() ? std::string(name) : spec.label) + ": " +
           short_number(v / (spec.scale == 0 ? 1 : spec.scale));
  };
  return (series.name.empty() ? std::string() : series.name + "\n") + value(chart.x, "x", x) +
         "\n" + value(chart.y, "y", y);
}

void draw_series_lines(ImDrawList* draw, const Frame& frame, const Series& series) {
  // The vertices in unclipped pixels: steps get a corner between each pair, a point that cannot
  // be drawn is a NaN (a gap in the line).
  constexpr double kGap = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = std::min(series.x.size(), series.y.size());
  std::vector<std::pair<double, double>> vertices;
  vertices.reserve(series.style == Style::steps ? 2 * n : n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!usable(frame.axes.x, series.x[i]) || !usable(frame.axes.y, series.y[i])) {
      vertices.emplace_back(kGap, kGap);
      continue;
    }
    const double x = frame.sx(series.x[i]);
    if (series.style == Style::steps && !vertices.empty() && !std::isnan(vertices.back().first)) {
      vertices.emplace_back(x, vertices.back().second);
    }
    vertices.emplace_back(x, frame.sy(series.y[i]));
  }
  // Each segment clipped to the frame's bounds; unclipped neighbours join into one polyline.
  const Rect bounds = frame.bounds();
  std::vector<ImVec2> run;
  const auto flush = [&] {
    if (run.size() >= 2) {
      draw->AddPolyline(run.data(), static_cast<int>(run.size()), series.colour, ImDrawFlags_None,
                        series.thickness);
    }
    run.clear();
  };
  for (std::size_t i = 0; i + 1 < vertices.size(); ++i) {
    auto [x0, y0] = vertices[i];
    auto [x1, y1] = vertices[i + 1];
    if (std::isnan(x0) || std::isnan(x1) || !clip_segment(bounds, x0, y0, x1, y1)) {
      flush();
      continue;
    }
    const ImVec2 a(static_cast<float>(x0), static_cast<float>(y0));
    const ImVec2 b(static_cast<float>(x1), static_cast<float>(y1));
    if (series.dashed) {
      line_between(draw, a, b, series.colour, series.thickness, true);
      continue;
    }
    if (run.empty() || run.back().x != a.x || run.back().y != a.y) {
      flush();  // the previous segment was cut short: start a new polyline
      run.push_back(a);
    }
    run.push_back(b);
  }
  flush();
}

// Draws the series' markers (when its style has them), adds the box of each to `taken` (for the
// point labels to keep clear of) and records the point nearest the mouse.
void draw_series_points(ImDrawList* draw, const Chart& chart, const Frame& frame,
                        const Series& series, bool hovered, ImVec2 mouse, Hover& hover,
                        std::vector<Rect>& taken) {
  const bool markers = series.style == Style::points || series.style == Style::line_points;
  const std::size_t n = std::min(series.x.size(), series.y.size());
  const float r = series.radius;
  const Rect visible = frame.plot.grown(r);
  for (std::size_t i = 0; i < n; ++i) {
    if (!usable(frame.axes.x, series.x[i]) || !usable(frame.axes.y, series.y[i])) {
      continue;
    }
    const ImVec2 p = frame.at(series.x[i], series.y[i]);
    if (!visible.contains(p)) {
      continue;
    }
    if (markers) {
      marker(draw, p, series.marker, r, series.colour, series.hollow);
      taken.push_back(Rect{p, p}.grown(r + 2));
    }
    const float d = std::hypot(p.x - mouse.x, p.y - mouse.y);
    if (hovered && d <= kHoverRadius + r && d < hover.distance) {
      hover.active = true;
      hover.distance = d;
      hover.at = p;
      hover.is_point = true;
      hover.text = i < series.tooltips.size() && !series.tooltips[i].empty()
                       ? series.tooltips[i]
                       : default_point_tooltip(chart, series, series.x[i], series.y[i]);
    }
  }
}

// Draws the per-point labels of every series, each at the first spot beside its point (right,
// left, above, below, then diagonally) that is inside the plot and overlaps nothing in `taken` -
// the markers, the reference lines' labels and the labels drawn before it. A label with no such
// spot is left out: its point still has its tooltip, and a chart drawn larger finds room for more.
void draw_point_labels(ImDrawList* draw, const Frame& frame, const Chart& chart,
                       std::vector<Rect>& taken) {
  for (const Series& series : chart.series) {
    const std::size_t n = std::min({series.x.size(), series.y.size(), series.labels.size()});
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& text = series.labels[i];
      const ImVec2 p = frame.at(series.x[i], series.y[i]);
      if (text.empty() || !usable(frame.axes.x, series.x[i]) ||
          !usable(frame.axes.y, series.y[i]) || !frame.plot.contains(p)) {
        continue;
      }
      const ImVec2 size = text_size(text);
      const float gap = series.radius + 3;  // clear of the point's own marker box
      const float left = p.x - gap - size.x;
      const float right = p.x + gap;
      const float above = p.y - gap - size.y;
      const float below = p.y + gap;
      const ImVec2 spots[] = {{right, p.y - size.y * 0.5F},
                              {left, p.y - size.y * 0.5F},
                              {p.x - size.x * 0.5F, above},
                              {p.x - size.x * 0.5F, below},
                              {right, above},
                              {right, below},
                              {left, above},
                              {left, below}};
      for (const ImVec2& spot : spots) {
        const Rect r{spot, ImVec2(spot.x + size.x, spot.y + size.y)};
        if (frame.plot.contains(r) && std::none_of(taken.begin(), taken.end(),
                                                   [&](const Rect& t) { return r.overlaps(t); })) {
          taken.push_back(backed_text(draw, spot, series.colour, text));
          break;
        }
      }
    }
  }
}

void draw_columns(ImDrawList* draw, const Frame& frame, const Columns& columns, bool hovered,
                  ImVec2 mouse, Hover& hover) {
  if (!(columns.width > 0)) {
    return;
  }
  const double base = Frame::base(frame.axes.y);
  const float base_y = frame.py(base);
  for (std::size_t i = 0; i < columns.heights.size(); ++i) {
    const double left = columns.left + columns.width * static_cast<double>(i);
    const double right = left + columns.width;
    const double h = columns.heights[i];
    const float x0 = frame.px(left);
    const float x1 = frame.px(right);
    if (usable(frame.axes.y, h) && h != base) {
      const float top = frame.py(h);
      draw->AddRectFilled(ImVec2(x0 + 0.5F, std::min(top, base_y)),
                          ImVec2(std::max(x1 - 0.5F, x0 + 1.0F), std::max(top, base_y)),
                          faded(columns.colour, 0.8F));
    }
    // The whole height of the plot is the hover target, so an empty or short column is as easy
    // to hover as a tall one.
    if (hovered && !hover.is_point && mouse.x >= x0 && mouse.x < x1) {
      hover.active = true;
      hover.at = ImVec2((x0 + x1) * 0.5F, frame.py(std::isfinite(h) ? h : base));
      hover.text = i < columns.tooltips.size() && !columns.tooltips[i].empty()
                       ? columns.tooltips[i]
                       : short_number(left) + " .. " + short_number(right) + ": " + short_number(h);
    }
  }
}

void draw_blocks(ImDrawList* draw, const Frame& frame, const Blocks& blocks, bool hovered,
                 ImVec2 mouse, Hover& hover) {
  for (const Blocks::Block& b : blocks.blocks) {
    if (!(b.x1 > b.x0) || !(b.y1 > b.y0) || !usable(frame.axes.x, b.x0) ||
        !usable(frame.axes.x, b.x1) || !usable(frame.axes.y, b.y1) || !std::isfinite(b.y0)) {
      continue;
    }
    const ImVec2 min(frame.px(b.x0), frame.py(b.y1));
    const ImVec2 max(
        std::max(frame.px(b.x1), min.x + 1.0F),
        std::max(frame.py(usable(frame.axes.y, b.y0) ? b.y0 : Frame::base(frame.axes.y)),
                 min.y + 1.0F));
    draw->AddRectFilled(min, max, faded(blocks.colour, 0.85F));
    if (hovered && !hover.is_point && mouse.x >= min.x && mouse.x < max.x && mouse.y >= min.y &&
        mouse.y < max.y) {
      hover.active = true;
      hover.at = ImVec2(mouse.x, min.y);
      hover.text = blocks.tooltip.empty() ? blocks.name : blocks.tooltip;
    }
  }
}

void draw_bars(ImDrawList* draw, const Frame& frame, const Bars& bars, bool hovered, ImVec2 mouse,
               Hover& hover) {
  const std::size_t n = bars.categories.size();
  const std::size_t groups = bars.groups.size();
  if (n == 0 || groups == 0) {
    return;
  }
  const Axis& values = bars.horizontal ? frame.axes.x : frame.axes.y;
  const double base = Frame::base(values);
  constexpr double kBand = 0.8;  // of a category's slot; the rest separates categories
  const double bar = kBand / static_cast<double>(groups);
  // Pixel rectangle of an interval along the category axis and one along the value axis.
  const auto rect = [&](double c0, double c1, double v0, double v1) {
    const ImVec2 a = bars.horizontal ? frame.at(v0, c0) : frame.at(c0, v0);
    const ImVec2 b = bars.horizontal ? frame.at(v1, c1) : frame.at(c1, v1);
    return Rect{ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                ImVec2(std::max(a.x, b.x), std::max(a.y, b.y))};
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double slot = bars.horizontal ? static_cast<double>(n - 1 - i) : static_cast<double>(i);
    const Rect band = rect(slot - 0.48, slot + 0.48, values.min, values.max);
    if (bars.highlight == i) {
      draw->AddRectFilled(band.min, band.max, faded(bars.highlight_colour, 0.12F), 3.0F);
      draw->AddRect(band.min, band.max, bars.highlight_colour, 3.0F, 0, 1.5F);
    }
    double longest = base;  // of the category's bars, for the highlight tag
    for (std::size_t g = 0; g < groups; ++g) {
      const BarGroup& group = bars.groups[g];
      // Horizontal bars list the first group on top, as the legend reads.
      const double offset =
          bars.horizontal ? static_cast<double>(groups - 1 - g) : static_cast<double>(g);
      const double c0 = slot - kBand / 2 + offset * bar;
      const double c1 = c0 + bar;
      const double v =
          i < group.values.size() ? group.values[i] : std::numeric_limits<double>::quiet_NaN();
      const bool drawable = usable(values, v);
      const Rect r = rect(c0, c1, base, drawable ? v : base);
      if (drawable) {
        longest = std::max(longest, v);
        // A 1-pixel gap between neighbours keeps the bars of a group apart; at least a pixel of
        // bar shows however short it is.
        const ImVec2 inset = bars.horizontal ? ImVec2(0, 0.5F) : ImVec2(0.5F, 0);
        draw->AddRectFilled(ImVec2(r.min.x + inset.x, r.min.y + inset.y),
                            ImVec2(std::max(r.max.x - inset.x, r.min.x + inset.x + 1),
                                   std::max(r.max.y - inset.y, r.min.y + inset.y + 1)),
                            group.colour, 1.0F);
        if (i < group.labels.size() && !group.labels[i].empty()) {
          const ImVec2 size = text_size(group.labels[i]);
          ImVec2 pos = bars.horizontal ? ImVec2(r.max.x + 3, (r.min.y + r.max.y - size.y) * 0.5F)
                                       : ImVec2((r.min.x + r.max.x - size.x) * 0.5F,
                                                r.min.y - ImGui::GetTextLineHeight());
          if (bars.horizontal && pos.x + size.x > frame.plot.max.x) {
            pos.x = r.max.x - size.x - 3;  // no room past the bar's end: inside it
          }
          // Only where the bar is thick (horizontal) or wide (vertical) enough for the text; a
          // crowded chart keeps its numbers in the tooltips.
          if (bars.horizontal ? r.height() >= size.y - 1 : r.width() >= size.x) {
            backed_text(draw, pos, text_colour(0.9F), group.labels[i]);
          }
        }
      }
      // Hover: the bar's slot across the whole value axis.
      if (hovered && !hover.is_point && rect(c0, c1, values.min, values.max).contains(mouse)) {
        hover.active = true;
        hover.at = bars.horizontal ? ImVec2(r.max.x, (r.min.y + r.max.y) * 0.5F)
                                   : ImVec2((r.min.x + r.max.x) * 0.5F, r.min.y);
        hover.text = i < group.tooltips.size() && !group.tooltips[i].empty()
                         ? group.tooltips[i]
                         : bars.categories[i] + "\n" + group.name + ": " +
                               (std::isfinite(v) ? short_number(v) : std::string("no value"));
      }
    }
    // Vertical bars: the tag at the top of the highlighted band, when the bars leave room there
    // (the category's tick label is coloured either way). Horizontal bars carry it under the
    // category's name instead (draw_y_ticks).
    if (bars.highlight == i && !bars.highlight_tag.empty() && !bars.horizontal) {
      const ImVec2 size = text_size(bars.highlight_tag);
      const ImVec2 pos((band.min.x + band.max.x - size.x) * 0.5F, band.min.y + 2);
      if (pos.y + size.y < frame.py(longest) - 2 && band.width() >= size.x) {
        backed_text(draw, pos, bars.highlight_colour, bars.highlight_tag);
      }
    }
  }
}

// Draws a reference line across the plot and its label: a vertical line's at the top (down
// label_row rows), right of the line or else left of it; a horizontal line's above it at the
// right end, or else below it. The series are drawn over it, so the label hides no point.
// Returns where the label went (an empty rect for none).
Rect draw_ref_line(ImDrawList* draw, const Frame& frame, const RefLine& line) {
  const Rect& p = frame.plot;
  if (!usable(line.vertical ? frame.axes.x : frame.axes.y, line.value)) {
    return {};
  }
  // A label longer than the plot is shortened rather than cut off at the plot's edge.
  const std::string text = elide(line.label, std::max(p.width() - 8, 8.0F));
  const ImVec2 size = text_size(text);
  ImVec2 a;
  ImVec2 b;
  ImVec2 label;
  if (line.vertical) {
    const float x = frame.px(line.value);
    a = ImVec2(x, p.min.y);
    b = ImVec2(x, p.max.y);
    const float right = x + 4;
    label = ImVec2(right + size.x <= p.max.x ? right : std::max(p.min.x + 2, x - 4 - size.x),
                   p.min.y + 2 + static_cast<float>(line.label_row) * size.y);
  } else {
    const float y = frame.py(line.value);
    a = ImVec2(p.min.x, y);
    b = ImVec2(p.max.x, y);
    label = ImVec2(std::max(p.min.x + 2, p.max.x - size.x - 4),
                   y - size.y - 1 >= p.min.y ? y - size.y - 1 : y + 2);
  }
  if (!p.grown(1).contains(a) || !p.grown(1).contains(b)) {
    return {};  // outside the plot (a fixed axis range that leaves it out)
  }
  line_between(draw, a, b, line.colour, 1.5F, line.dashed);
  return text.empty() ? Rect{} : backed_text(draw, label, line.colour, text);
}

// Tick marks, grid lines and labels along the x axis; a label that would overlap the one
// before it is left out.
void draw_x_ticks(ImDrawList* draw, const Frame& frame, const std::vector<Tick>& ticks,
                  double scale, const Bars* categories) {
  const Rect& p = frame.plot;
  float last_right = -std::numeric_limits<float>::max();
  const float slot = p.width() / static_cast<float>(std::max<std::size_t>(ticks.size(), 1));
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const Tick& tick = ticks[i];
    const float x = frame.px(tick.value);
    if (x < p.min.x - 1 || x > p.max.x + 1) {
      continue;
    }
    if (categories == nullptr) {
      draw->AddLine(ImVec2(x, p.min.y), ImVec2(x, p.max.y),
                    text_colour(tick.major ? 0.10F : 0.04F));
    }
    draw->AddLine(ImVec2(x, p.max.y), ImVec2(x, p.max.y + (tick.major ? 4.0F : 2.0F)),
                  text_colour(0.5F));
    if (!tick.major) {
      continue;
    }
    const std::string text =
        categories != nullptr ? elide(tick.label, slot - 4) : tick_label(tick, scale);
    const float w = text_size(text).x;
    const float left = std::clamp(x - w * 0.5F, p.min.x - 12, p.max.x + 12 - w);
    if (left < last_right + 6) {
      continue;
    }
    last_right = left + w;
    const bool highlighted = categories != nullptr && categories->highlight == i;
    draw->AddText(ImVec2(left, p.max.y + 5),
                  highlighted ? categories->highlight_colour : text_colour(0.8F), text.c_str());
  }
}

// The same along the y axis, labels left of the plot.
void draw_y_ticks(ImDrawList* draw, const Frame& frame, const std::vector<Tick>& ticks,
                  double scale, const Bars* categories) {
  const Rect& p = frame.plot;
  const float line = ImGui::GetTextLineHeight();
  const float slot = p.height() / static_cast<float>(std::max<std::size_t>(ticks.size(), 1));
  std::optional<float> last_top;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const Tick& tick = ticks[i];
    const float y = frame.py(tick.value);
    if (y < p.min.y - 1 || y > p.max.y + 1) {
      continue;
    }
    if (categories == nullptr) {
      draw->AddLine(ImVec2(p.min.x, y), ImVec2(p.max.x, y),
                    text_colour(tick.major ? 0.10F : 0.04F));
    }
    draw->AddLine(ImVec2(p.min.x, y), ImVec2(p.min.x - (tick.major ? 4.0F : 2.0F), y),
                  text_colour(0.5F));
    const float top = y - line * 0.5F;
    // Ticks come bottom-up for value axes and top-down for categories; skip overlaps either way.
    if (!tick.major || (last_top && std::abs(top - *last_top) < line)) {
      continue;
    }
    last_top = top;
    const std::string text = tick_label(tick, scale);
    const float w = text_size(text).x;
    if (categories == nullptr || categories->highlight != i) {
      draw->AddText(ImVec2(p.min.x - 6 - w, top), text_colour(0.8F), text.c_str());
      continue;
    }
    // The highlighted category carries its tag on a second line under its name, when the
    // category's slot is two lines tall.
    const std::string& tag = categories->highlight_tag;
    const ImU32 colour = categories->highlight_colour;
    if (!tag.empty() && slot >= 2 * line) {
      draw->AddText(ImVec2(p.min.x - 6 - w, y - line), colour, text.c_str());
      draw->AddText(ImVec2(p.min.x - 6 - text_size(tag).x, y), colour, tag.c_str());
    } else {
      draw->AddText(ImVec2(p.min.x - 6 - w, top), colour, text.c_str());
    }
  }
}

}  // namespace

void draw(const char* id, const Chart& chart, float height) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 1.0F);
  height = std::max(height, 1.0F);
  // One item for the whole chart: the mouse over it is "over the chart" (for tooltips) and a
  // drag on it does not move the window.
  ImGui::InvisibleButton(id, ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float line = ImGui::GetTextLineHeight();

  const std::vector<LegendItem> legend = legend_items(chart);
  const int header_rows = layout_header(nullptr, origin, width, chart.title, legend);
  const bool y_label_row = !chart.y.label.empty();
  const Resolved axes = resolve_axes(chart);
  const bool data = has_data(chart, axes);

  // Vertical layout: header rows, the y-axis label's row, the plot, x tick labels, x label.
  const float top = origin.y + static_cast<float>(header_rows) * line +
                    (y_label_row ? line : 0.0F) + line * 0.5F + kPad;
  const float bottom =
      origin.y + height - line - kPad - (chart.x.label.empty() ? 0.0F : line + 2) - 2;
  list->PushClipRect(origin, ImVec2(origin.x + width, origin.y + height), true);
  layout_header(list, origin, width, chart.title, legend);
  if (bottom - top < 2 * line || width < 8 * line) {
    list->PopClipRect();  // too small for a plot: the header alone
    return;
  }

  // Ticks: y first (their labels set the left margin), then x for the width that is left.
  const Bars* bars = chart.bars ? &*chart.bars : nullptr;
  const int y_labels = std::max(2, static_cast<int>((bottom - top) / (line * 1.8F)));
  const std::vector<Tick> y_ticks =
      axes.categories_on_y ? category_ticks(*bars) : ticks_for(chart.y, axes.y, y_labels);
  const double y_scale = axes.categories_on_y ? 1.0 : chart.y.scale;
  float widest_y = widest_label(y_ticks, y_scale);
  if (axes.categories_on_y && bars->highlight) {
    widest_y = std::max(widest_y, text_size(bars->highlight_tag).x);  // see draw_y_ticks
  }
  const float left_margin = data ? std::max(widest_y + 10, chart.y_label_width) : kPad;
  const Frame frame{
      Rect{ImVec2(origin.x + left_margin, top), ImVec2(origin.x + width - line * 0.75F, bottom)},
      axes};
  const Rect& plot = frame.plot;
  if (plot.width() < 2 * line) {
    list->PopClipRect();
    return;
  }
  const int x_labels = std::max(3, static_cast<int>(plot.width() / (line * 4.5F)));
  const std::vector<Tick> x_ticks =
      axes.categories_on_x ? category_ticks(*bars) : ticks_for(chart.x, axes.x, x_labels);

  // Axis labels: y above the axis, x centred under the plot (kept inside the chart, shortened
  // when wider than it).
  if (y_label_row) {
    list->AddText(ImVec2(origin.x, top - line * 1.5F - kPad * 0.5F), text_colour(0.7F),
                  chart.y.label.c_str());
  }
  if (!chart.x.label.empty()) {
    const std::string text = elide(chart.x.label, width);
    const float w = text_size(text).x;
    const float x = std::clamp((plot.min.x + plot.max.x - w) * 0.5F, origin.x,
                               std::max(origin.x, origin.x + width - w));
    list->AddText(ImVec2(x, plot.max.y + line + kPad + 2), text_colour(0.7F), text.c_str());
  }

  list->AddRectFilled(plot.min, plot.max, faded(ImGui::GetColorU32(ImGuiCol_FrameBg), 0.6F));
  if (!data) {
    list->AddRect(plot.min, plot.max, text_colour(0.25F));
    // The empty text wraps inside the plot, centred as a block.
    const float wrap = plot.width() - 16;
    const ImVec2 size = ImGui::CalcTextSize(chart.empty_text.c_str(), nullptr, false, wrap);
    const ImVec2 pos(plot.min.x + std::max(8.0F, (plot.width() - size.x) * 0.5F),
                     plot.min.y + std::max(4.0F, (plot.height() - size.y) * 0.5F));
    list->AddText(ImGui::GetFont(), ImGui::GetFontSize(), pos, text_colour(0.6F),
                  chart.empty_text.c_str(), nullptr, wrap);
    list->PopClipRect();
    return;
  }

  draw_y_ticks(list, frame, y_ticks, y_scale, axes.categories_on_y ? bars : nullptr);
  draw_x_ticks(list, frame, x_ticks, axes.categories_on_x ? 1.0 : chart.x.scale,
               axes.categories_on_x ? bars : nullptr);

  // The data, trimmed at the plot's edge.
  Hover hover;
  const bool mouse_in_plot = hovered && plot.contains(mouse);
  list->PushClipRect(plot.min, plot.max, true);
  for (const Blocks& blocks : chart.blocks) {
    draw_blocks(list, frame, blocks, mouse_in_plot, mouse, hover);
  }
  for (const Columns& columns : chart.columns) {
    draw_columns(list, frame, columns, mouse_in_plot, mouse, hover);
  }
  if (bars != nullptr) {
    draw_bars(list, frame, *bars, mouse_in_plot, mouse, hover);
  }
  // Reference lines go under the series, so their labels never hide a point; what a label
  // covers, the point labels keep clear of.
  std::vector<Rect> taken;
  for (const RefLine& ref : chart.lines) {
    const Rect label = draw_ref_line(list, frame, ref);
    if (label.width() > 0) {
      taken.push_back(label);
    }
  }
  for (const Series& series : chart.series) {
    if (series.style != Style::points) {
      draw_series_lines(list, frame, series);
    }
  }
  // A point near the mouse wins over the bar or column under it (set above).
  for (const Series& series : chart.series) {
    draw_series_points(list, chart, frame, series, mouse_in_plot, mouse, hover, taken);
  }
  draw_point_labels(list, frame, chart, taken);
  if (hover.active) {
    list->AddCircle(hover.at, hover.is_point ? 7.0F : 4.0F, text_colour(), 16, 2.0F);
  }
  list->PopClipRect();
  list->AddRect(plot.min, plot.max, text_colour(0.35F));
  list->PopClipRect();

  if (hover.active && !hover.text.empty()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(hover.text.c_str());
    ImGui::EndTooltip();
  }
}

}  // namespace gpulab::viewer::plot
