// The chart's layout (plot.hpp): its primitives, legend, fitted axes and ticks (parts.hpp).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "plot/parts.hpp"

namespace gpulab::viewer::plot::detail {

float LegendItem::width() const {
  return (kind == Kind::text ? 0.0F : kLegendSwatch + kPad) + text_size(text).x;
}

ImVec2 text_size(const std::string& text) {
  return ImGui::CalcTextSize(text.c_str());
}

ImU32 text_colour(float alpha) {
  return faded(ImGui::GetColorU32(ImGuiCol_Text), alpha);
}

bool usable(const Axis& axis, double value) {
  return std::isfinite(value) && (!axis.log || value > 0);
}

std::string tick_label(const Tick& tick, double scale) {
  if (scale == 1 || scale == 0) {
    return tick.label;
  }
  return short_number(tick.value / scale);
}

std::string elide(const std::string& text, float width) {
  if (text_size(text).x <= width) {
    return text;
  }
  std::string out = text;
  while (out.size() > 1 && text_size(out + "...").x > width) {
    out.pop_back();
    while (out.size() > 1 && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
      out.pop_back();  // never cut a UTF-8 sequence in half
    }
  }
  return out + "...";
}

Rect backed_text(ImDrawList* draw, ImVec2 pos, ImU32 colour, const std::string& text) {
  const ImVec2 size = text_size(text);
  const Rect r{pos, ImVec2(pos.x + size.x, pos.y + size.y)};
  draw->AddRectFilled(ImVec2(r.min.x - 2, r.min.y), ImVec2(r.max.x + 2, r.max.y),
                      faded(ImGui::GetColorU32(ImGuiCol_WindowBg), 0.8F), 2.0F);
  draw->AddText(pos, colour, text.c_str());
  return r;
}

bool clip_segment(const Rect& r, double& x0, double& y0, double& x1, double& y1) {
  const double dx = x1 - x0;
  const double dy = y1 - y0;
  // Inside every edge: p[i] * t <= q[i] for the segment's parameter t in 0..1.
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - static_cast<double>(r.min.x), static_cast<double>(r.max.x) - x0,
                       y0 - static_cast<double>(r.min.y), static_cast<double>(r.max.y) - y0};
  double t0 = 0;
  double t1 = 1;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) {
        return false;  // parallel to this edge and outside it
      }
    } else if (p[i] < 0) {
      t0 = std::max(t0, q[i] / p[i]);
    } else {
      t1 = std::min(t1, q[i] / p[i]);
    }
  }
  if (t0 > t1) {
    return false;
  }
  x1 = x0 + t1 * dx;
  y1 = y0 + t1 * dy;
  x0 += t0 * dx;
  y0 += t0 * dy;
  return true;
}

void line_between(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 colour, float thickness,
                  bool dashed) {
  if (!dashed) {
    draw->AddLine(a, b, colour, thickness);
    return;
  }
  constexpr float kDash = 6.0F;
  constexpr float kGap = 4.0F;
  const float length = std::hypot(b.x - a.x, b.y - a.y);
  const ImVec2 unit((b.x - a.x) / std::max(length, 1e-6F), (b.y - a.y) / std::max(length, 1e-6F));
  for (float s = 0; s < length; s += kDash + kGap) {
    const float e = std::min(s + kDash, length);
    draw->AddLine(ImVec2(a.x + unit.x * s, a.y + unit.y * s),
                  ImVec2(a.x + unit.x * e, a.y + unit.y * e), colour, thickness);
  }
}

void marker(ImDrawList* draw, ImVec2 c, Marker shape, float r, ImU32 colour, bool hollow) {
  constexpr float kOutline = 1.5F;
  if (shape == Marker::circle) {
    if (hollow) {
      draw->AddCircle(c, r, colour, 12, kOutline);
    } else {
      draw->AddCircleFilled(c, r, colour, 12);
    }
    return;
  }
  // The other shapes are regular polygons a little larger than the circle, so that they look
  // about as heavy: a square (corners on the diagonals), a triangle and a diamond (pointing up).
  constexpr float kPi = std::numbers::pi_v<float>;
  const int corners = shape == Marker::triangle ? 3 : 4;
  const float first = shape == Marker::square ? kPi / 4 : -kPi / 2;
  ImVec2 points[4];
  for (int i = 0; i < corners; ++i) {
    const float angle = first + 2 * kPi * static_cast<float>(i) / static_cast<float>(corners);
    points[i] = ImVec2(c.x + 1.2F * r * std::cos(angle), c.y + 1.2F * r * std::sin(angle));
  }
  if (hollow) {
    draw->AddPolyline(points, corners, colour, ImDrawFlags_Closed, kOutline);
  } else {
    draw->AddConvexPolyFilled(points, corners, colour);
  }
}

std::vector<LegendItem> legend_items(const Chart& chart) {
  std::vector<LegendItem> items;
  if (chart.bars) {
    for (const BarGroup& group : chart.bars->groups) {
      if (!group.name.empty()) {
        items.push_back({LegendItem::Kind::box, group.colour, group.name});
      }
    }
  }
  for (const Columns& columns : chart.columns) {
    if (!columns.name.empty()) {
      items.push_back({LegendItem::Kind::box, columns.colour, columns.name});
    }
  }
  for (const Blocks& blocks : chart.blocks) {
    if (!blocks.name.empty()) {
      items.push_back({LegendItem::Kind::box, blocks.colour, blocks.name});
    }
  }
  for (const Series& series : chart.series) {
    if (!series.name.empty()) {
      const bool markers = series.style == Style::points || series.style == Style::line_points;
      items.push_back({markers ? LegendItem::Kind::points : LegendItem::Kind::line, series.colour,
                       series.name, series.marker, series.hollow, series.dashed});
    }
  }
  for (const LegendNote& note : chart.notes) {
    items.push_back({LegendItem::Kind::text, note.colour, note.text});
  }
  return items;
}

static void draw_legend_item(ImDrawList* draw, ImVec2 pos, const LegendItem& item) {
  const float mid = pos.y + ImGui::GetTextLineHeight() * 0.5F;
  const float x = pos.x;
  switch (item.kind) {
    case LegendItem::Kind::line:
      line_between(draw, ImVec2(x, mid), ImVec2(x + kLegendSwatch, mid), item.colour, 2.0F,
                   item.dashed);
      break;
    case LegendItem::Kind::points:
      marker(draw, ImVec2(x + kLegendSwatch * 0.5F, mid), item.shape, 4.0F, item.colour,
             item.hollow);
      break;
    case LegendItem::Kind::box:
      draw->AddRectFilled(ImVec2(x + 3, mid - 5), ImVec2(x + kLegendSwatch - 3, mid + 5),
                          item.colour, 1.0F);
      break;
    case LegendItem::Kind::text:
      draw->AddText(pos, item.colour, item.text.c_str());
      return;
  }
  draw->AddText(ImVec2(x + kLegendSwatch + kPad, pos.y), text_colour(), item.text.c_str());
}

int layout_header(ImDrawList* draw, ImVec2 origin, float width, const std::string& title,
                  const std::vector<LegendItem>& items) {
  const float line = ImGui::GetTextLineHeight();
  int rows = 0;
  float x = origin.x;
  if (!title.empty()) {
    if (draw != nullptr) {
      draw->AddText(origin, text_colour(), title.c_str());
    }
    x += text_size(title).x + kLegendGap * 2;
    rows = 1;
  }
  for (const LegendItem& item : items) {
    const float w = item.width();
    if (rows == 0) {
      rows = 1;
    } else if (x > origin.x && x + w > origin.x + width) {
      ++rows;  // wrap
      x = origin.x;
    }
    if (draw != nullptr) {
      draw_legend_item(draw, ImVec2(x, origin.y + static_cast<float>(rows - 1) * line), item);
    }
    x += w + kLegendGap;
  }
  return rows;
}

// The spec's fixed range when it is usable on the spec's scale (the spec's `log` decides the
// scale), else an axis fitted to `values`.
static Axis fitted(const AxisSpec& spec, std::span<const double> values) {
  if (spec.range && spec.range->max > spec.range->min && (!spec.log || spec.range->min > 0)) {
    return Axis{spec.range->min, spec.range->max, spec.log};
  }
  return fit_axis(values, spec.log, spec.include_zero);
}

Resolved resolve_axes(const Chart& chart) {
  std::vector<double> xs;
  std::vector<double> ys;
  for (const Series& series : chart.series) {
    const std::size_t n = std::min(series.x.size(), series.y.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isfinite(series.x[i]) && std::isfinite(series.y[i])) {
        xs.push_back(series.x[i]);
        ys.push_back(series.y[i]);
      }
    }
  }
  for (const Columns& columns : chart.columns) {
    if (columns.heights.empty() || !(columns.width > 0)) {
      continue;
    }
    xs.push_back(columns.left);
    xs.push_back(columns.left + columns.width * static_cast<double>(columns.heights.size()));
    std::copy_if(columns.heights.begin(), columns.heights.end(), std::back_inserter(ys),
                 [](double h) { return std::isfinite(h); });
  }
  for (const Blocks& blocks : chart.blocks) {
    for (const Blocks::Block& b : blocks.blocks) {
      if (std::isfinite(b.x0) && std::isfinite(b.x1) && std::isfinite(b.y0) &&
          std::isfinite(b.y1)) {
        xs.insert(xs.end(), {b.x0, b.x1});
        ys.insert(ys.end(), {b.y0, b.y1});
      }
    }
  }
  const bool bars = chart.bars && !chart.bars->categories.empty();
  if (bars) {
    std::vector<double>& values = chart.bars->horizontal ? xs : ys;
    for (const BarGroup& group : chart.bars->groups) {
      std::copy_if(group.values.begin(), group.values.end(), std::back_inserter(values),
                   [](double v) { return std::isfinite(v); });
    }
  }
  for (const RefLine& line : chart.lines) {
    (line.vertical ? xs : ys).push_back(line.value);
  }
  Resolved resolved{fitted(chart.x, xs), fitted(chart.y, ys)};
  if (bars) {
    const Axis category{-0.5, static_cast<double>(chart.bars->categories.size()) - 0.5, false};
    (chart.bars->horizontal ? resolved.y : resolved.x) = category;
    (chart.bars->horizontal ? resolved.categories_on_y : resolved.categories_on_x) = true;
  }
  return resolved;
}

std::vector<Tick> ticks_for(const AxisSpec& spec, const Axis& axis, int max_labels) {
  if (spec.ticks.empty()) {
    std::vector<Tick> ticks = axis_ticks(axis, std::max(2, max_labels));
    if (spec.integer) {
      // Counts: a tick at 2.5 runs means nothing.
      std::erase_if(ticks, [](const Tick& tick) { return tick.value != std::round(tick.value); });
    }
    return ticks;
  }
  std::vector<Tick> ticks;
  const double lo = std::min(axis.min, axis.max);
  const double hi = std::max(axis.min, axis.max);
  const double slack = (hi - lo) * 1e-9;
  for (const Tick& tick : spec.ticks) {
    if (tick.value >= lo - slack && tick.value <= hi + slack) {
      ticks.push_back(tick);
    }
  }
  return ticks;
}

std::vector<Tick> category_ticks(const Bars& bars) {
  std::vector<Tick> ticks;
  const std::size_t n = bars.categories.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double position =
        bars.horizontal ? static_cast<double>(n - 1 - i) : static_cast<double>(i);
    ticks.push_back({position, bars.categories[i], true});
  }
  return ticks;
}

bool has_data(const Chart& chart, const Resolved& axes) {
  for (const Series& series : chart.series) {
    const std::size_t n = std::min(series.x.size(), series.y.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (usable(axes.x, series.x[i]) && usable(axes.y, series.y[i])) {
        return true;
      }
    }
  }
  for (const Columns& columns : chart.columns) {
    if (!columns.heights.empty() && columns.width > 0) {
      return true;
    }
  }
  for (const Blocks& blocks : chart.blocks) {
    if (!blocks.blocks.empty()) {
      return true;
    }
  }
  if (chart.bars && !chart.bars->categories.empty()) {
    const Axis& values = chart.bars->horizontal ? axes.x : axes.y;
    for (const BarGroup& group : chart.bars->groups) {
      if (std::any_of(group.values.begin(), group.values.end(),
                      [&](double v) { return usable(values, v); })) {
        return true;
      }
    }
  }
  return false;
}

float widest_label(const std::vector<Tick>& ticks, double scale) {
  float widest = 0;
  for (const Tick& tick : ticks) {
    if (tick.major) {
      widest = std::max(widest, text_size(tick_label(tick, scale)).x);
    }
  }
  return widest;
}

}  // namespace gpulab::viewer::plot::detail
