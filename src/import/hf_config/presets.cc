// Preset lookup over the table generated from data/presets/ (presets_data.cc), by name as
// people type it (see presets.h).
#include "import/hf_config/presets.h"

#include <algorithm>
#include <vector>

#include "support/spelling.h"

namespace opscope::import::hf {

const Preset* FindPreset(std::string_view name) {
  const std::span<const Preset> all = BuiltinPresets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == name; });
  if (it != all.end()) return &*it;
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name = name.substr(slash + 1);  // "meta-llama/Llama-3.1-8B": the repository's own name
  }
  const std::string lower = Lower(name);
  it = std::find_if(all.begin(), all.end(), [&](const Preset& p) { return p.name == lower; });
  if (it != all.end()) return &*it;
  const std::string folded = FoldName(name);
  const Preset* found = nullptr;
  for (const Preset& p : all) {
    if (FoldName(p.name) != folded) continue;
    if (found) return nullptr;  // two presets fold alike: no guess
    found = &p;
  }
  return found;
}

std::string PresetHint(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Preset& p : BuiltinPresets()) names.push_back(p.name);
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
  return DidYouMean(name, names);
}

}  // namespace opscope::import::hf
