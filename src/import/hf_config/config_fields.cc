// The unread-field check of the config reader (see config_fields.h).
#include "import/hf_config/config_fields.h"

#include <algorithm>

namespace opscope::import::hf {
namespace {

bool IsQuiet(std::string_view field) {
  if (field.ends_with("_token_id") || field.ends_with("_token_index") ||
      field.ends_with("_token") || field.ends_with("_token_ids")) {
    return true;
  }
  return std::find(std::begin(kQuietFields), std::end(kQuietFields), field) !=
         std::end(kQuietFields);
}

const NotedField* FindNoted(std::string_view field) {
  for (const NotedField& n : kNotedFields) {
    if (n.field == field) return &n;
  }
  return nullptr;
}

}  // namespace

bool LooksLikeShapeField(std::string_view field) {
  // Words of a field name that size, count or place parts of a model, or switch weights on.
  static constexpr std::string_view kWords[] = {
      "size",    "sizes",  "dim",      "dims",   "num",      "n",        "rank",    "ranks",
      "head",    "heads",  "expert",   "experts", "layer",   "layers",   "pattern", "latent",
      "ratio",   "ratios", "types",    "intermediate", "width", "mult",  "group",   "groups",
      "kernel",  "interval", "freq",   "step",   "window",   "topk",     "vocab",   "hidden",
      "lora",    "state",  "conv",     "proj",   "shared",   "block",    "blocks",  "channels",
      "embd",    "ffn",    "mlp",      "moe",    "count",    "period",   "offset",  "expand",
      "bias",    "norm",   "qk",       "kv",     "gate",     "gated",    "mamba",   "ssm",
      "linear",  "attn",   "attention", "sparse", "index",   "compress", "hc",      "mtp",
      "nextn",   "chunk",  "sliding",  "features", "k",      "top",      "tie",     "tied"};
  size_t begin = 0;
  while (begin <= field.size()) {
    size_t end = field.find('_', begin);
    if (end == std::string_view::npos) end = field.size();
    const std::string_view word = field.substr(begin, end - begin);
    if (std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords)) return true;
    begin = end + 1;
  }
  return false;
}

Result<void> CheckUnreadFields(const ConfigObject& object, std::string_view model_type,
                               std::vector<std::string>& assumptions) {
  // `top_k` is PretrainedConfig's legacy sampling setting (50 in old dumps) unless a family
  // counts its routed experts with it: quiet only when the reader took the expert count from
  // num_experts_per_tok (or an alias of it), so an expert count is never ignored.
  const bool experts_counted_elsewhere = object.WasRead("num_experts_per_tok");
  for (const std::string& key : object.Keys()) {
    if (object.WasRead(key) || IsQuiet(key)) continue;
    if (key == "top_k" && experts_counted_elsewhere) continue;
    if (!object.HasValue(key)) continue;  // null: None in Python, an absent field
    if (const NotedField* noted = FindNoted(key)) {
      // A null tower ("audio_config": null, Gemma-4 26B / 31B) is no tower: nothing left out.
      if (object.HasValue(key)) assumptions.emplace_back(noted->why);
      continue;
    }
    if (LooksLikeShapeField(key)) {
      return std::unexpected(object.FieldError(
          key, "not read by the reader for model_type '" + std::string(model_type) +
                   "', and its name says it changes the model's shapes (a size, count, pattern "
                   "or switch); opscope does not cost a model it would get wrong"));
    }
    assumptions.push_back("config field '" + object.Path(key) +
                          "' not read (no known effect on shapes)");
  }
  return {};
}

}  // namespace opscope::import::hf
