// A checkpoint's own quantization, as its files declare it: config.json's quantization_config
// (quant_method fp8, compressed-tensors, modelopt, mxfp4, awq, gptq, bitsandbytes) or NVIDIA
// ModelOpt's hf_quant_config.json beside it. The result says, per Hugging Face module name,
// which weight format the checkpoint stores (excluded modules keep the model dtype), the
// format of the activations entering the quantized matrix ops, and the KV cache format.
//
// The sources and what they map to (docs/llm.md "Quantized checkpoints" has the table):
//  * fp8:  weight_block_size [128, 128] -> fp8_e4m3_b128x128 weights, activations per 1x128
//          group (fp8_e4m3_b128) when activation_scheme is dynamic, per tensor when static;
//          no weight_block_size -> per-tensor fp8_e4m3 weights and activations.
//          modules_to_not_convert / ignored_layers keep the model dtype.
//  * compressed-tensors: each config_groups entry's weights / input_activations (num_bits,
//          type, strategy, group_size, block_structure) over its targets ("Linear", "re:"
//          regexes, module names); ignore keeps the model dtype; kv_cache_scheme sets the KV.
//  * modelopt (config.json quant_method "modelopt", or hf_quant_config.json): quant_algo from
//          kModelOptAlgos (FP8, NVFP4, NVFP4_AWQ, W4A8_AWQ, W4A16_NVFP4, MXFP8, ...), or
//          MIXED_PRECISION with a per-module quant_algo in quantized_layers (or in quant_cfg.json
//          beside it, TensorRT-LLM's layout); exclude_modules / ignore keep the model dtype;
//          kv_cache_quant_algo (or kv_cache_scheme) sets the KV.
//  * mxfp4 (gpt-oss): the routed experts in mxfp4, weight-only.
//  * awq / gptq: int4 (or gptq int8) groups of group_size with f16 scales; zero points when
//          asymmetric (awq zero_point, gptq sym false); weight-only.
//  * bitsandbytes: load_in_4bit -> nf4 (nf4_dq with bnb_4bit_use_double_quant), load_in_8bit
//          -> int8_rowwise; every Linear but lm_head and llm_int8_skip_modules; weight-only.
//
// Module names: a pattern is matched against a module and its parents ("model.layers.0.
// self_attn" matches the module "model.layers.0.self_attn.q_proj"). Glob patterns ('*', '?')
// match a whole dotted name; a plain name matches a module whose dotted name contains it as
// whole components ("mlp.gate" matches "model.layers.3.mlp.gate", not "...mlp.gate_proj");
// "re:REGEX" (compressed-tensors) is matched at the start of the name, like Python re.match.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/format.h"
#include "support/error.h"

namespace opscope::import::hf {

class ConfigObject;

// A set of module-name patterns (an exclude list, a group's targets).
class ModulePatterns {
 public:
  // `regex_prefix`: "re:" patterns are regular expressions (compressed-tensors); `field`
  // names the list in errors (a malformed regex).
  static Result<ModulePatterns> Make(const std::vector<std::string>& patterns,
                                     bool regex_prefix, const std::string& field);
  // True when a pattern matches `name` or one of its dotted parents.
  bool Matches(std::string_view name) const;
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The text of the first pattern (examples in messages).
  const std::string& first() const { return first_; }

 private:
  struct Regexes;  // std::regex, kept out of this header
  std::set<std::string, std::less<>> literals_;   // plain names (component runs)
  std::vector<std::string> globs_;                 // '*' / '?' patterns
  std::shared_ptr<const Regexes> regexes_;
  size_t count_ = 0;
  std::string first_;
};

// How a group of weights is stored and run.
struct QuantScheme {
  format::Format weights = format::Format::kBf16;
  std::optional<format::Format> activations;  // matrix inputs; nullopt: weight-only
  std::string name;                           // "NVFP4", "config_groups.group_0", "awq int4/128"
};

// A per-module rule: the modules `modules` names are stored in `scheme` (nullopt: the model
// dtype). Rules are tried in order; the first that names a module decides.
struct QuantRule {
  ModulePatterns modules;
  std::optional<QuantScheme> scheme;
};

struct CheckpointQuant {
  // Which weights the default scheme covers (the rest keep the model dtype).
  enum class Scope : uint8_t {
    kNone,
    kLinear,         // the layers' projections (attention, MLP, experts, GDN/Mamba in/out):
                     // fp8, awq, gptq, --weights; never the LM head or the router
    kAllLinear,      // every Linear module, the LM head included, unless excluded:
                     // compressed-tensors, modelopt, bitsandbytes. Routers and shared-expert
                     // gates only where a rule names them (engines build them unquantized).
    kRoutedExperts,  // mxfp4 (gpt-oss)
  };
  Scope scope = Scope::kNone;
  format::Format format = format::Format::kBf16;  // the bulk weight format (labels)
  std::string method;       // quant_method as written (+ quant_algo for modelopt)
  std::string source;       // "config.json quantization_config", "hf_quant_config.json"
  std::string unsupported;  // non-empty: why the default recipe cannot use it (an error
                            // only when --weights does not override it)
  std::optional<QuantScheme> scheme;          // modules in scope that no rule names
  std::shared_ptr<const std::vector<QuantRule>> rules;  // exclusions and per-module schemes
  std::optional<format::Format> activations;  // the step's matrix-input format
  std::optional<format::Format> kv;           // kv_cache_quant_algo / kv_cache_scheme
  std::string module_prefix = "model.";       // before "layers.N." in the checkpoint's names
  size_t excluded = 0;                        // exclusion patterns (for the recipe line)
  std::vector<std::string> notes;             // where each choice came from (assumptions)

  // The scheme a Linear module is stored in, from the names it may carry (a fused projection
  // carries its parts' names): nullptr for the model dtype. `in_scope`: whether the default
  // scheme covers its role.
  const QuantScheme* SchemeFor(std::span<const std::string> names, bool in_scope) const;
};

// A ModelOpt quant_algo and the formats it stores (one row per algorithm).
struct ModelOptAlgo {
  std::string_view name;
  format::Format weights;
  std::optional<format::Format> activations;  // nullopt: weight-only
  bool int4_groups;                           // weights are int4 groups of group_size
};
std::span<const ModelOptAlgo> ModelOptAlgos();

// Reads config.json's quantization_config (at the top level or in text_config /
// llm_config / language_config), filling `out`. An object it cannot read is an error naming
// the field; a method or layout it does not model is recorded in out.unsupported.
Result<void> ReadQuantizationConfig(const ConfigObject& root, CheckpointQuant& out);

// Reads an hf_quant_config.json document (ModelOpt): {"producer": ..., "quantization": {...}}.
// `quant_cfg_text`: quant_cfg.json from the same folder, read when quant_algo is
// MIXED_PRECISION and the file has no quantized_layers. `origin` names the file in errors.
Result<CheckpointQuant> ReadHfQuantConfig(std::string_view text, const std::string& origin,
                                          std::optional<std::string_view> quant_cfg_text = {});

}  // namespace opscope::import::hf
