// The viewer's colours with a meaning: one per kind of number, used the same way in every panel
// and chart so that a reader learns them once. The charts (plot.hpp) draw with them and the panels
// colour text with them (panels/widgets.hpp).
#pragma once

#include <imgui.h>

namespace gpulab::viewer::colours {

inline const ImVec4 kMeasured{0.55F, 0.85F, 0.55F, 1.0F};     ///< green: measured here
inline const ImVec4 kModeled{0.55F, 0.75F, 1.0F, 1.0F};       ///< blue: computed from a spec
inline const ImVec4 kEstimated{1.0F, 0.78F, 0.35F, 1.0F};     ///< amber: an estimate
inline const ImVec4 kUnavailable{0.65F, 0.65F, 0.65F, 1.0F};  ///< grey: no number
inline const ImVec4 kError{1.0F, 0.45F, 0.45F, 1.0F};         ///< red: something failed

}  // namespace gpulab::viewer::colours
