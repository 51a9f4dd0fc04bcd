// The built-in model presets: real HF config.json files (data/presets/*.json) embedded in the
// binary at build time, selectable by short name (`opscope llm llama-3.1-8b`).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace opscope::import::hf {

struct Preset {
  std::string_view name;  // the file stem without ".RECONSTRUCTED": "gemma-3-27b-it"
  std::string_view file;  // the file under data/presets/
  std::string_view json;  // the config text, verbatim
  bool reconstructed;     // rebuilt from published figures, not the original file
};

// Every preset, sorted by name.
std::span<const Preset> BuiltinPresets();

// The preset a name means, or nullptr: the exact name, else matched case-insensitively
// ("Llama-3.1-8B"), with a Hugging Face organisation dropped ("meta-llama/Llama-3.1-8B"), or
// with '-', '_', '.' folded when that leaves one preset ("llama3.1-8b").
const Preset* FindPreset(std::string_view name);

// "; did you mean 'qwen3-8b'?" for the preset nearest by edit distance, or "".
std::string PresetHint(std::string_view name);

}  // namespace opscope::import::hf
