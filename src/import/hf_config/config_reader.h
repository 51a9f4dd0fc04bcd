// Typed reads of one config object for the family readers (parse_config.cc and its siblings):
// required fields, fields with the configuration class's default, field aliases
// (config_fields.h), and the messages every importer error needs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "import/hf_config/config_json.h"
#include "import/hf_config/families.h"
#include "import/hf_config/model_spec.h"

namespace opscope::import::hf {

#define OPSCOPE_TRY(var, expr)                                     \
  auto var##_result = (expr);                                      \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

#define OPSCOPE_CHECK(expr)                              \
  do {                                                   \
    if (auto ok_ = (expr); !ok_) return std::unexpected(ok_.error()); \
  } while (0)

class Reader {
 public:
  Reader(ConfigObject object, ModelSpec& spec, const Family& family)
      : o_(std::move(object)), spec_(spec), family_(family) {}

  const ConfigObject& object() const { return o_; }
  const Family& family() const { return family_; }
  ModelSpec& spec() const { return spec_; }

  std::unexpected<Error> Fail(std::string_view key, const std::string& why) const {
    return std::unexpected(o_.FieldError(key, why));
  }

  // The names a field goes by: itself, then its aliases (config_fields.h).
  static std::vector<std::string_view> Names(std::string_view key);

  // An integer field under any of its names; names that disagree are an error. `found` gets
  // the name that held the value (for messages).
  Result<std::optional<int64_t>> Int(std::string_view key, std::string* found = nullptr) const;
  // The same for booleans and strings (no aliases: their names are family-specific).
  Result<std::optional<bool>> Bool(std::string_view key) const { return o_.Bool(key); }
  Result<std::optional<std::string>> String(std::string_view key) const { return o_.String(key); }
  Result<std::optional<std::vector<int64_t>>> IntList(std::string_view key) const {
    return o_.IntList(key);
  }
  Result<std::optional<std::vector<std::string>>> StringList(std::string_view key) const {
    return o_.StringList(key);
  }
  bool Has(std::string_view key) const;

  // A required positive integer: absent or null is an error naming it. `found` as for Int.
  Result<int64_t> Required(std::string_view key, std::string* found = nullptr) const;
  // A positive integer with the config class's default when absent or null. `noted` adds an
  // assumption line when the default is taken.
  Result<int64_t> IntOr(std::string_view key, int64_t fallback, bool noted = false) const;
  // A non-negative integer (0 allowed), default when absent or null.
  Result<int64_t> CountOr(std::string_view key, int64_t fallback) const;
  Result<bool> BoolOr(std::string_view key, bool fallback) const;
  Result<std::string> StringOr(std::string_view key, std::string fallback) const;
  // A sliding window: the class default when absent, none when null (Python's None).
  Result<int64_t> WindowOr(std::string_view key, int64_t fallback) const;

  // num_hidden_layers: required, and bounded, since it sizes the layer list and the step graph
  // (a hostile config must not allocate or build per claimed layer; Llama 3.1 405B has 126,
  // and 1024 layers already take about a second to cost).
  Result<int64_t> Layers() const;
  static constexpr int64_t kMaxLayers = 1024;

  // A per-layer list (layer_types and the like) checked against the layer count.
  Result<std::vector<std::string>> LayerList(std::string_view key, int64_t layers) const;

  // An assumption line when a default stands in for an absent field.
  void Note(std::string line) const { spec_.assumptions.push_back(std::move(line)); }

 private:
  // The object and key of a (possibly dotted) name, if the nested object exists.
  Result<std::optional<std::pair<ConfigObject, std::string>>> Locate(std::string_view name) const;

  ConfigObject o_;
  ModelSpec& spec_;
  const Family& family_;
};

// Shared pieces of the family readers (parse_config.cc).
Result<format::Format> ParseDtype(const ConfigObject& o, std::string_view key,
                                  std::string_view value);
Activation ActivationFor(std::string_view act);
// The MLP activation's name: the family's field (hidden_act, or Gemma's hidden_activation).
Result<std::string> ReadActivation(const Reader& r);
// num_attention_heads, num_key_value_heads (family default), head_dim (family default, else
// hidden_size / num_attention_heads), checked for consistency.
Result<void> ReadAttentionHeads(const Reader& r, bool note_head_dim = true);
Result<void> ReadMoeCounts(const Reader& r, std::string_view inter_key);
Result<void> ReadDenseMlp(const Reader& r, bool bias);
// The MTP modules (num_nextn_predict_layers and its aliases).
Result<void> ReadMtp(const Reader& r);
// layer_types ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
// applied to the mixers: sliding layers get `window`, chunked ones `chunk`, linear ones the
// family's linear mixer (GatedDeltaNet or Kimi Delta Attention, whichever the spec sized).
Result<void> ApplyLayerTypes(const Reader& r, const std::vector<std::string>& types,
                             int64_t window, int64_t chunk);
// MoE placement from the family's rule and the config's fields (families.h MoePlacement).
Result<void> PlaceMoe(const Reader& r, MoePlacement rule, int64_t first_dense_default);
// The MLPs: MoE placement (the family's rule), the routed and shared experts and router of the
// MoE layers, the dense MLP of the others.
Result<void> ReadMlps(const Reader& r);

// Readers of the families outside the decoder reader (parse_hybrid.cc, parse_mla.cc).
Result<void> ReadDecoder(const Reader& r);
Result<void> ReadQwenHybrid(const Reader& r);
Result<void> ReadMla(const Reader& r);
Result<void> ReadMamba1(const Reader& r);
Result<void> ReadMamba2(const Reader& r);
Result<void> ReadNemotronH(const Reader& r);
Result<void> ReadNemotronNas(const Reader& r);
Result<void> ReadJamba(const Reader& r);
Result<void> ReadFalconH1(const Reader& r);
Result<void> ReadGraniteHybrid(const Reader& r);
Result<void> ReadKimiLinear(const Reader& r);
Result<void> ReadDeepseekV4(const Reader& r);
Result<void> ReadGemma4(const Reader& r);
Result<void> ReadMimoV2Flash(const Reader& r);
// `root`: the whole config (minimax_m3_vl's multimodal fields beside text_config).
Result<void> ReadMiniMaxM3(const Reader& r, const ConfigObject& root);
Result<void> ReadLaguna(const Reader& r);
// Shared by the hybrid readers: the attention block of a decoder family (heads, biases, q/k
// norms, windows) without its layer list.
Result<void> ReadAttentionShape(const Reader& r);

}  // namespace opscope::import::hf
