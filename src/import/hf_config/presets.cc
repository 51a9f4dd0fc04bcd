// Preset lookup over the table generated from data/presets/ (presets_data.cc).
#include "import/hf_config/presets.h"

#include <algorithm>

namespace opscope::import::hf {

const Preset* FindPreset(std::string_view name) {
  const std::span<const Preset> all = BuiltinPresets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace opscope::import::hf
