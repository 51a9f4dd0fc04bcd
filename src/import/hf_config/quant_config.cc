// Reading a checkpoint's quantization (see quant_config.h): module-name patterns, the
// per-source readers, and the per-module lookup.
#include "import/hf_config/quant_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <utility>

#include "import/hf_config/config_json.h"

namespace opscope::import::hf {

using format::Format;

#define OPSCOPE_TRY(var, expr)                                      \
  auto var##_result = (expr);                                       \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

// ---------------------------------------------------------------------------------------------
// Module-name patterns.

struct ModulePatterns::Regexes {
  std::vector<std::regex> list;
};

namespace {

// fnmatch without character classes: '*' any run (dots included), '?' one character.
bool GlobMatch(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The ends of `name`'s dotted prefixes, shortest first, the whole name last.
std::vector<size_t> PrefixEnds(std::string_view name) {
  std::vector<size_t> ends;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '.') ends.push_back(i);
  }
  ends.push_back(name.size());
  return ends;
}

}  // namespace

Result<ModulePatterns> ModulePatterns::Make(const std::vector<std::string>& patterns,
                                            bool regex_prefix, const std::string& field) {
  ModulePatterns m;
  auto regexes = std::make_shared<Regexes>();
  for (const std::string& raw : patterns) {
    if (m.count_ == 0) m.first_ = raw;
    ++m.count_;
    if (regex_prefix && raw.starts_with("re:")) {
      try {
        regexes->list.emplace_back(raw.substr(3), std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return MakeError(field + ": pattern '" + raw + "' is not a regular expression opscope reads (" +
                         e.what() + ")");
      }
      continue;
    }
    std::string p = raw;
    while (!p.empty() && p.back() == '.') p.pop_back();  // "layers.0." names the layer
    if (p.find_first_of("*?") != std::string::npos) {
      m.globs_.push_back(std::move(p));
    } else if (!p.empty()) {
      m.literals_.insert(std::move(p));
    }
  }
  if (!regexes->list.empty()) m.regexes_ = std::move(regexes);
  return m;
}

bool ModulePatterns::Matches(std::string_view name) const {
  if (count_ == 0) return false;
  // Plain names: any run of whole components ("mlp.gate", "lm_head", "model.layers.61").
  if (!literals_.empty()) {
    size_t start = 0;
    while (start < name.size()) {
      size_t end = name.find('.', start);
      for (;;) {
        const size_t stop = end == std::string_view::npos ? name.size() : end;
        if (literals_.find(name.substr(start, stop - start)) != literals_.end()) return true;
        if (end == std::string_view::npos) break;
        end = name.find('.', end + 1);
      }
      const size_t next = name.find('.', start);
      if (next == std::string_view::npos) break;
      start = next + 1;
    }
  }
  // Globs: the name or one of its parents, whole.
  if (!globs_.empty()) {
    for (size_t end : PrefixEnds(name)) {
      const std::string_view prefix = name.substr(0, end);
      for (const std::string& g : globs_) {
        if (GlobMatch(g, prefix)) return true;
      }
    }
  }
  // compressed-tensors regexes: the module's own name, anchored at its start (re.match).
  if (regexes_) {
    const std::string s(name);
    for (const std::regex& r : regexes_->list) {
      if (std::regex_search(s, r, std::regex_constants::match_continuous)) return true;
    }
  }
  return false;
}

const QuantScheme* CheckpointQuant::SchemeFor(std::span<const std::string> names,
                                              bool in_scope) const {
  if (rules) {
    for (const QuantRule& rule : *rules) {
      for (const std::string& n : names) {
        if (rule.modules.Matches(n)) return rule.scheme ? &*rule.scheme : nullptr;
      }
    }
  }
  return in_scope && scheme ? &*scheme : nullptr;
}

// ---------------------------------------------------------------------------------------------
// The formats of each source.

namespace {

// ModelOpt's quant_algo values (modelopt/torch/export/model_config.py QUANTIZATION_*), the
// formats their exported tensors hold.
constexpr ModelOptAlgo kModelOptAlgos[] = {
    {"FP8", Format::kFp8E4m3, Format::kFp8E4m3, false},
    {"FP8_PER_CHANNEL_PER_TOKEN", Format::kFp8E4m3Rowwise, Format::kFp8E4m3Rowwise, false},
    {"FP8_BLOCK_SCALES", Format::kFp8E4m3B128x128, Format::kFp8E4m3B128, false},
    {"FP8_PB_WO", Format::kFp8E4m3B128x128, std::nullopt, false},
    {"NVFP4", Format::kNvfp4, Format::kNvfp4, false},
    {"NVFP4_AWQ", Format::kNvfp4, Format::kNvfp4, false},
    {"W4A16_NVFP4", Format::kNvfp4, std::nullopt, false},
    {"W4A8_NVFP4_FP8", Format::kNvfp4, Format::kFp8E4m3, false},
    {"MXFP8", Format::kMxfp8, Format::kMxfp8, false},
    {"MXFP4", Format::kMxfp4, Format::kMxfp4, false},
    {"W4A16_MXFP4", Format::kMxfp4, std::nullopt, false},
    {"W4A8_MXFP4_FP8", Format::kMxfp4, Format::kFp8E4m3, false},
    {"W4A16_AWQ", Format::kInt4G128, std::nullopt, true},
    {"W4A8_AWQ", Format::kInt4G128, Format::kFp8E4m3, true},
    {"W8A8_SQ_PER_CHANNEL", Format::kInt8Rowwise, Format::kInt8, false},
    {"INT8_SQ", Format::kInt8Rowwise, Format::kInt8, false},
};

// int4 groups of g elements with f16 scales (and 4-bit zero points).
std::optional<Format> Int4Groups(int64_t group, bool zero_point) {
  switch (group) {
    case 32: return zero_point ? Format::kInt4G32Zp : Format::kInt4G32;
    case 64: return zero_point ? Format::kInt4G64Zp : Format::kInt4G64;
    case 128: return zero_point ? Format::kInt4G128Zp : Format::kInt4G128;
    default: return std::nullopt;
  }
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The first of `keys` the object holds a list of strings under.
Result<std::pair<std::string, std::vector<std::string>>> FirstList(
    const ConfigObject& o, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    auto list = o.StringList(key);
    if (!list) return std::unexpected(list.error());
    if (*list) return std::pair{o.Path(key), std::move(**list)};
  }
  return std::pair{std::string(), std::vector<std::string>{}};
}

// The checkpoint's own prefix before "layers.N." ("model.", "backbone.",
// "model.language_model."), from the first plain name that shows one.
void DetectModulePrefix(const std::vector<std::string>& names, CheckpointQuant& out) {
  for (const std::string& n : names) {
    if (n.starts_with("re:")) continue;
    const size_t at = n.find("layers.");
    if (at == std::string::npos || at == 0 || n[at - 1] != '.') continue;  // "layers.0." is relative
    const std::string prefix = n.substr(0, at);
    if (prefix.find_first_of("*?") != std::string::npos) continue;
    out.module_prefix = prefix;
    return;
  }
}

// Adds an exclusion rule (the model dtype) for a non-empty list.
Result<void> AddExclusions(std::vector<QuantRule>& rules, CheckpointQuant& out,
                           const std::string& field, const std::vector<std::string>& patterns,
                           bool regex_prefix) {
  if (patterns.empty()) return {};
  DetectModulePrefix(patterns, out);
  OPSCOPE_TRY(modules, ModulePatterns::Make(patterns, regex_prefix, out.source + ": field '" + field + "'"));
  out.excluded += modules.size();
  out.notes.push_back(std::to_string(modules.size()) + " module pattern" +
                      (modules.size() == 1 ? "" : "s") + " in " + field +
                      " keep the model dtype (e.g. '" + modules.first() + "')");
  rules.push_back({std::move(modules), std::nullopt});
  return {};
}

// The step's matrix-input format: the default scheme's, else the one most per-module schemes
// use; a note when schemes disagree.
void ChooseActivations(CheckpointQuant& out) {
  std::map<std::string, size_t> votes;  // format name ("" weight-only) -> patterns
  auto vote = [&](const QuantScheme& s, size_t weight) {
    votes[s.activations ? std::string(format::FormatName(*s.activations)) : ""] += weight;
  };
  if (out.scheme) vote(*out.scheme, SIZE_MAX / 4);
  if (out.rules) {
    for (const QuantRule& r : *out.rules) {
      if (r.scheme) vote(*r.scheme, r.modules.size());
    }
  }
  if (votes.empty()) return;
  auto best = std::max_element(votes.begin(), votes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  out.activations = best->first.empty() ? std::nullopt : format::ParseFormat(best->first);
  if (votes.size() > 1) {
    std::string others;
    for (const auto& [name, n] : votes) {
      if (name == best->first) continue;
      others += (others.empty() ? "" : ", ") + (name.empty() ? std::string("weight-only") : name);
    }
    out.notes.push_back("the step has one matrix-input format: " +
                        (best->first.empty() ? std::string("the model dtype (weight-only)")
                                             : best->first) +
                        " for every matrix op, though some modules are declared with " + others);
  }
}

// ----- fp8 (transformers FineGrainedFP8Config, vLLM Fp8Config) -----

Result<void> ReadFp8(const ConfigObject& qc, CheckpointQuant& out, std::vector<QuantRule>& rules) {
  const std::string where = "'" + qc.Path("quant_method") + "' \"fp8\"";
  OPSCOPE_TRY(fmt, qc.String("fmt"));
  OPSCOPE_TRY(block, qc.IntList("weight_block_size"));
  OPSCOPE_TRY(scheme, qc.String("activation_scheme"));
  const std::string activation = scheme.value_or("dynamic");
  // MiniMax-M2.5 writes the torch dtype's name, float8_e4m3fn: the same e4m3 format.
  if (fmt && *fmt == "float8_e4m3fn") fmt = "e4m3";
  if (fmt.value_or("e4m3") != "e4m3") {
    out.unsupported = where + " with fmt \"" + *fmt + "\" (only e4m3 is modelled)";
    return {};
  }
  if (activation != "dynamic" && activation != "static") {
    out.unsupported = where + " with activation_scheme \"" + activation + "\"";
    return {};
  }
  QuantScheme s;
  if (!block) {
    s = {Format::kFp8E4m3, Format::kFp8E4m3, "fp8 per tensor"};
  } else if (*block == std::vector<int64_t>{128, 128}) {
    s = {Format::kFp8E4m3B128x128,
         activation == "dynamic" ? Format::kFp8E4m3B128 : Format::kFp8E4m3, "fp8 128x128 blocks"};
  } else {
    out.unsupported = where + " with a weight_block_size other than [128, 128]";
    return {};
  }
  out.notes.push_back("activations fp8 " + activation +
                      (activation == "dynamic" && block ? " per 1x128 group (activation_scheme)"
                                                        : " per tensor (activation_scheme)"));
  out.scope = CheckpointQuant::Scope::kLinear;
  out.format = s.weights;
  out.scheme = std::move(s);
  OPSCOPE_TRY(skip, FirstList(qc, {"modules_to_not_convert", "ignored_layers"}));
  return AddExclusions(rules, out, skip.first, skip.second, false);
}

// ----- awq / gptq -----

Result<void> ReadAwqGptq(const ConfigObject& qc, const std::string& method, CheckpointQuant& out,
                         std::vector<QuantRule>& rules) {
  const std::string where = "'" + qc.Path("quant_method") + "' " + Quote(method);
  OPSCOPE_TRY(bits, qc.Int("bits"));
  OPSCOPE_TRY(group, qc.Int("group_size"));
  const bool awq = method == "awq";
  OPSCOPE_TRY(zero, qc.Bool(awq ? "zero_point" : "sym"));
  const bool has_zero = awq ? zero.value_or(true) : !zero.value_or(true);
  const int64_t b = bits.value_or(4), g = group.value_or(128);
  std::optional<Format> f;
  if (b == 4) f = Int4Groups(g, has_zero);
  if (b == 8 && g == 128 && !has_zero && !awq) f = Format::kInt8G128;
  if (!f) {
    out.unsupported = where + " with bits " + std::to_string(b) + ", group_size " +
                      std::to_string(g) + (has_zero ? " and zero points" : "") +
                      " (modelled: 4-bit groups of 32, 64 or 128, gptq 8-bit groups of 128 "
                      "without zero points)";
    return {};
  }
  out.scope = CheckpointQuant::Scope::kLinear;
  out.format = *f;
  out.scheme = QuantScheme{*f, std::nullopt, method + " int" + std::to_string(b) + "/" + std::to_string(g)};
  if (!awq) {
    OPSCOPE_TRY(lm_head, qc.Bool("lm_head"));
    if (lm_head.value_or(false)) {
      // GPTQ's lm_head: true quantizes the output layer too.
      OPSCOPE_TRY(head, ModulePatterns::Make({"lm_head"}, false, where));
      rules.push_back({std::move(head), out.scheme});
      out.notes.push_back("lm_head quantized too (quantization_config.lm_head)");
    }
    if (qc.HasValue("dynamic")) {
      out.notes.push_back("per-module overrides in quantization_config.dynamic are not read: "
                          "every layer matrix in " + std::string(format::FormatName(*f)));
    }
  }
  OPSCOPE_TRY(skip, FirstList(qc, {"modules_to_not_convert"}));
  return AddExclusions(rules, out, skip.first, skip.second, false);
}

// ----- bitsandbytes -----

Result<void> ReadBitsAndBytes(const ConfigObject& qc, CheckpointQuant& out,
                              std::vector<QuantRule>& rules) {
  OPSCOPE_TRY(four, qc.Bool("load_in_4bit"));
  OPSCOPE_TRY(four_, qc.Bool("_load_in_4bit"));
  OPSCOPE_TRY(eight, qc.Bool("load_in_8bit"));
  OPSCOPE_TRY(eight_, qc.Bool("_load_in_8bit"));
  OPSCOPE_TRY(double_quant, qc.Bool("bnb_4bit_use_double_quant"));
  OPSCOPE_TRY(type, qc.String("bnb_4bit_quant_type"));
  QuantScheme s;
  if (four.value_or(false) || four_.value_or(false)) {
    const std::string t = type.value_or("fp4");
    if (t != "nf4" && t != "fp4") {
      out.unsupported = "'" + qc.Path("bnb_4bit_quant_type") + "' " + Quote(t);
      return {};
    }
    s = {double_quant.value_or(false) ? Format::kNf4Dq : Format::kNf4, std::nullopt,
         "bitsandbytes 4-bit " + t};
    out.notes.push_back("bitsandbytes 4-bit " + t + " codes (nf4 and fp4 store the same bytes)" +
                        (double_quant.value_or(false) ? ", double-quantized absmax" : ""));
  } else if (eight.value_or(false) || eight_.value_or(false)) {
    s = {Format::kInt8Rowwise, std::nullopt, "bitsandbytes 8-bit"};
  } else {
    out.unsupported = "'" + qc.Path("quant_method") +
                      "' \"bitsandbytes\" with neither load_in_4bit nor load_in_8bit";
    return {};
  }
  out.scope = CheckpointQuant::Scope::kAllLinear;
  out.format = s.weights;
  out.scheme = std::move(s);
  // transformers keeps the output layer unquantized (get_keys_to_not_convert).
  OPSCOPE_TRY(skip, FirstList(qc, {"llm_int8_skip_modules"}));
  std::vector<std::string> patterns = skip.second;
  if (std::find(patterns.begin(), patterns.end(), "lm_head") == patterns.end()) {
    patterns.push_back("lm_head");
  }
  return AddExclusions(rules, out, skip.first.empty() ? qc.Path("llm_int8_skip_modules") : skip.first,
                       patterns, false);
}

// ----- compressed-tensors (llm-compressor) -----

// The quantization arguments weights and input activations share, with compressed-tensors'
// defaults (8-bit int, per tensor, no groups).
struct CtArgs {
  int64_t bits;
  std::string type;
  std::string strategy;
  int64_t group_size;
};

Result<CtArgs> ReadCtArgs(const ConfigObject& o) {
  OPSCOPE_TRY(bits, o.Int("num_bits"));
  OPSCOPE_TRY(type, o.String("type"));
  OPSCOPE_TRY(strategy, o.String("strategy"));
  OPSCOPE_TRY(group, o.Int("group_size"));
  return CtArgs{bits.value_or(8), type.value_or("int"), strategy.value_or("tensor"),
                group.value_or(0)};
}

// A group's weights arguments -> the stored format; `why` says what is not modelled.
Result<std::optional<Format>> CtWeights(const ConfigObject& w, std::string& why) {
  OPSCOPE_TRY(args, ReadCtArgs(w));
  OPSCOPE_TRY(block, w.IntList("block_structure"));
  OPSCOPE_TRY(symmetric, w.Bool("symmetric"));
  const auto& [b, t, st, g] = args;
  std::optional<Format> f;
  if (t == "float" && b == 8) {
    if (st == "tensor") f = Format::kFp8E4m3;
    if (st == "channel") f = Format::kFp8E4m3Rowwise;
    if (st == "block" && block == std::vector<int64_t>{128, 128}) f = Format::kFp8E4m3B128x128;
  } else if (t == "float" && b == 4 && (st == "tensor_group" || st == "group")) {
    if (g == 16) f = Format::kNvfp4;
    if (g == 32) f = Format::kMxfp4;
  } else if (t == "int" && b == 4 && st == "group") {
    f = Int4Groups(g, !symmetric.value_or(true));
  } else if (t == "int" && b == 8) {
    if (st == "channel") f = Format::kInt8Rowwise;
    if (st == "group" && g == 128 && symmetric.value_or(true)) f = Format::kInt8G128;
  }
  if (!f) {
    why = "weights of " + std::to_string(b) + "-bit " + t + ", strategy " + st +
          (g > 0 ? ", group_size " + std::to_string(g) : std::string()) + " (" + w.Path("") + ")";
  }
  return f;
}

// A group's input_activations arguments -> the matrix-input format.
Result<std::optional<Format>> CtActivations(const ConfigObject& a, std::string& why) {
  OPSCOPE_TRY(args, ReadCtArgs(a));
  const auto& [b, t, st, g] = args;
  std::optional<Format> f;
  if (t == "float" && b == 8) {
    if (st == "tensor") f = Format::kFp8E4m3;
    if (st == "token") f = Format::kFp8E4m3Rowwise;
    if (st == "group" && g == 128) f = Format::kFp8E4m3B128;
  } else if (t == "float" && b == 4 && (st == "tensor_group" || st == "group")) {
    if (g == 16) f = Format::kNvfp4;
    if (g == 32) f = Format::kMxfp4;
  } else if (t == "int" && b == 8) {
    if (st == "tensor") f = Format::kInt8;
    if (st == "token") f = Format::kInt8Rowwise;
  }
  if (!f) {
    why = "input activations of " + std::to_string(b) + "-bit " + t + ", strategy " + st + " (" +
          a.Path("") + ")";
  }
  return f;
}

// KV cache scheme {num_bits, type} (compressed-tensors kv_cache_scheme, modelopt config.json).
Result<void> ReadKvScheme(const ConfigObject& qc, CheckpointQuant& out) {
  OPSCOPE_TRY(kv, qc.Object("kv_cache_scheme"));
  if (!kv) return {};
  OPSCOPE_TRY(bits, kv->Int("num_bits"));
  OPSCOPE_TRY(type, kv->String("type"));
  const int64_t b = bits.value_or(8);
  const std::string t = type.value_or("float");
  if (b == 8 && t == "float") {
    out.kv = Format::kFp8E4m3;
  } else if (b == 8 && t == "int") {
    out.kv = Format::kInt8;
  } else {
    out.notes.push_back("kv_cache_scheme of " + std::to_string(b) + "-bit " + t +
                        " is not modelled: KV cache in the model dtype unless --kv-dtype");
    return {};
  }
  out.notes.push_back("KV cache " + std::string(format::FormatName(*out.kv)) + " from " +
                      qc.Path("kv_cache_scheme") + " (--kv-dtype overrides)");
  return {};
}

// One config_groups entry: its scheme over its targets ("Linear": every Linear module, the
// default scheme; "re:" regexes and module names: a rule). Records what is not modelled.
Result<void> ReadCtGroup(const ConfigObject& groups, const std::string& key, CheckpointQuant& out,
                         std::vector<QuantRule>& rules) {
  OPSCOPE_TRY(group, groups.Object(key));
  if (!group) return {};
  OPSCOPE_TRY(weights, group->Object("weights"));
  OPSCOPE_TRY(acts, group->Object("input_activations"));
  OPSCOPE_TRY(targets, group->StringList("targets"));
  if (!weights) return {};  // activation-only group: no stored weight changes
  std::string why;
  OPSCOPE_TRY(w, CtWeights(*weights, why));
  std::optional<Format> a;
  if (w && acts) {
    OPSCOPE_TRY(af, CtActivations(*acts, why));
    if (!af) w.reset();
    a = af;
  }
  if (!w) {
    out.unsupported = "'" + groups.Path(key) + "': " + why + " is not modelled";
    return {};
  }
  QuantScheme s{*w, a, groups.Path(key)};
  std::vector<std::string> named;
  bool linear = false;
  for (const std::string& t : targets.value_or(std::vector<std::string>{"Linear"})) {
    if (t == "Linear") {
      linear = true;
    } else if (t.starts_with("re:") || t.find('.') != std::string::npos || t == "lm_head") {
      named.push_back(t);
    } else {
      out.unsupported = "'" + group->Path("targets") + "': target \"" + t +
                        "\" (a module class other than Linear) is not modelled";
      return {};
    }
  }
  if (!named.empty()) {
    DetectModulePrefix(named, out);
    OPSCOPE_TRY(modules, ModulePatterns::Make(named, true, out.source + ": field '" +
                                                               group->Path("targets") + "'"));
    rules.push_back({std::move(modules), s});
  }
  if (!out.scheme) out.format = s.weights;
  if (linear && !out.scheme) {
    out.scope = CheckpointQuant::Scope::kAllLinear;
    out.scheme = std::move(s);
  }
  return {};
}

// transform_config (compressed-tensors transforms, e.g. Laguna-XS.2-FP8's Hadamard "R1"): each
// config_groups entry applies a rotation at some locations. weight_input / weight_output
// rotations are merged into the stored weights when the checkpoint is written, so nothing runs
// for them; any other location (input, output, q_attn, k_cache: an online rotation) is not
// modelled and makes the checkpoint's recipe unsupported.
Result<void> ReadTransforms(const ConfigObject& qc, CheckpointQuant& out) {
  OPSCOPE_TRY(transforms, qc.Object("transform_config"));
  if (!transforms) return {};
  OPSCOPE_TRY(groups, transforms->Object("config_groups"));
  if (!groups || groups->Keys().empty()) return {};
  for (const std::string& key : groups->Keys()) {
    OPSCOPE_TRY(group, groups->Object(key));
    if (!group) continue;
    OPSCOPE_TRY(applies, group->ObjectList("apply"));
    for (const ConfigObject& apply : applies.value_or(std::vector<ConfigObject>{})) {
      OPSCOPE_TRY(location, apply.String("location"));
      const std::string where = location.value_or("");
      if (where != "weight_input" && where != "weight_output") {
        out.unsupported = "'" + apply.Path("location") + "' \"" + where +
                          "\" (an online rotation at run time is not modelled)";
        return {};
      }
    }
  }
  out.notes.push_back("transform_config: rotations at weight_input / weight_output only, merged "
                      "into the stored weights (no run-time op)");
  return {};
}

Result<void> ReadCompressedTensors(const ConfigObject& qc, CheckpointQuant& out,
                                   std::vector<QuantRule>& rules) {
  OPSCOPE_TRY(fmt, qc.String("format"));
  if (fmt && (fmt->starts_with("marlin-24") || fmt->find("sparse") != std::string::npos)) {
    out.unsupported = "'" + qc.Path("format") + "' \"" + *fmt +
                      "\" (2:4 sparse weights are not modelled)";
    return {};
  }
  OPSCOPE_TRY(groups, qc.Object("config_groups"));
  if (!groups || groups->Keys().empty()) {
    out.unsupported = "'" + qc.Path("config_groups") + "' is missing or empty";
    return {};
  }
  OPSCOPE_TRY(ignore, qc.StringList("ignore"));
  if (auto ok = AddExclusions(rules, out, qc.Path("ignore"),
                              ignore.value_or(std::vector<std::string>{}), true);
      !ok) {
    return std::unexpected(ok.error());
  }
  for (const std::string& key : groups->Keys()) {
    if (auto ok = ReadCtGroup(*groups, key, out, rules); !ok) return ok;
    if (!out.unsupported.empty()) return {};
  }
  if (auto ok = ReadTransforms(qc, out); !ok) return ok;
  if (!out.unsupported.empty()) return {};
  return ReadKvScheme(qc, out);
}

// ----- modelopt (config.json quant_method "modelopt", hf_quant_config.json) -----

std::optional<ModelOptAlgo> FindAlgo(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const ModelOptAlgo& a : kModelOptAlgos) {
    if (a.name == upper) return a;
  }
  return std::nullopt;
}

// One algorithm (+ group_size) -> a scheme; `why` says what is not modelled.
std::optional<QuantScheme> AlgoScheme(const std::string& algo, std::optional<int64_t> group,
                                      std::string& why) {
  const std::optional<ModelOptAlgo> a = FindAlgo(algo);
  if (!a) {
    std::string known;
    for (const ModelOptAlgo& k : kModelOptAlgos) known += (known.empty() ? "" : ", ") + std::string(k.name);
    why = Quote(algo) + " (modelled: " + known + ", MIXED_PRECISION)";
    return std::nullopt;
  }
  QuantScheme s{a->weights, a->activations, std::string(a->name)};
  if (a->int4_groups) {
    const std::optional<Format> f = Int4Groups(group.value_or(128), false);
    if (!f) {
      why = Quote(algo) + " with group_size " + std::to_string(*group);
      return std::nullopt;
    }
    s.weights = *f;
  } else if (group && a->weights == Format::kNvfp4 && *group != 16) {
    why = Quote(algo) + " with group_size " + std::to_string(*group);
    return std::nullopt;
  }
  return s;
}

// quantized_layers {module: {quant_algo, group_size}} -> one rule per distinct scheme.
Result<void> ReadQuantizedLayers(const ConfigObject& layers, CheckpointQuant& out,
                                 std::vector<QuantRule>& rules) {
  std::map<std::string, std::pair<QuantScheme, std::vector<std::string>>> by_scheme;
  std::vector<std::string> names;
  for (const std::string& module : layers.Keys()) {
    OPSCOPE_TRY(entry, layers.Object(module));
    if (!entry) continue;
    OPSCOPE_TRY(algo, entry->String("quant_algo"));
    OPSCOPE_TRY(group, entry->Int("group_size"));
    if (!algo) return std::unexpected(entry->FieldError("quant_algo", "missing"));
    std::string why;
    std::optional<QuantScheme> s = AlgoScheme(*algo, group, why);
    if (!s) {
      out.unsupported = "'" + entry->Path("quant_algo") + "' " + why + " is not modelled";
      return {};
    }
    const std::string key = s->name + "/" + std::string(format::FormatName(s->weights));
    auto [it, fresh] = by_scheme.try_emplace(key, *s, std::vector<std::string>{});
    it->second.second.push_back(module);
    names.push_back(module);
  }
  DetectModulePrefix(names, out);
  for (auto& [key, entry] : by_scheme) {
    OPSCOPE_TRY(modules, ModulePatterns::Make(entry.second, false,
                                              out.source + ": field '" + layers.Path("") + "'"));
    out.notes.push_back(std::to_string(modules.size()) + " module" +
                        (modules.size() == 1 ? "" : "s") + " in " + entry.first.name + " (" +
                        std::string(format::FormatName(entry.first.weights)) + ", quantized_layers)");
    if (out.format == Format::kBf16) out.format = entry.first.weights;
    rules.push_back({std::move(modules), entry.first});
  }
  return {};
}

// The modelopt fields, shared by both files: `q` holds quant_algo, kv_cache_quant_algo,
// group_size, the exclude list (`exclude_key`) and quantized_layers.
std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// kv_cache_quant_algo (FP8, NVFP4, INT8), else kv_cache_scheme.
Result<void> ReadModelOptKv(const ConfigObject& q, CheckpointQuant& out) {
  OPSCOPE_TRY(kv, q.String("kv_cache_quant_algo"));
  if (!kv) return ReadKvScheme(q, out);
  const std::string upper = Upper(*kv);
  if (upper == "FP8") out.kv = Format::kFp8E4m3;
  if (upper == "NVFP4") out.kv = Format::kNvfp4;
  if (upper == "INT8") out.kv = Format::kInt8;
  if (out.kv) {
    out.notes.push_back("KV cache " + std::string(format::FormatName(*out.kv)) + " from " +
                        q.Path("kv_cache_quant_algo") + " " + Quote(*kv) + " (--kv-dtype overrides)");
  } else {
    out.notes.push_back(q.Path("kv_cache_quant_algo") + " " + Quote(*kv) +
                        " is not modelled: KV cache in the model dtype unless --kv-dtype");
  }
  return {};
}

// MIXED_PRECISION: quantized_layers, or TensorRT-LLM's quant_cfg.json beside the file.
Result<void> ReadMixedPrecision(const ConfigObject& q, std::optional<std::string_view> quant_cfg_text,
                                CheckpointQuant& out, std::vector<QuantRule>& rules) {
  OPSCOPE_TRY(layers, q.Object("quantized_layers"));
  if (layers) return ReadQuantizedLayers(*layers, out, rules);
  if (!quant_cfg_text) {
    out.unsupported = "'" + q.Path("quant_algo") +
                      "' \"MIXED_PRECISION\" without quantized_layers (nor a quant_cfg.json "
                      "beside it)";
    return {};
  }
  OPSCOPE_TRY(doc, ConfigDocument::Parse(*quant_cfg_text, "quant_cfg.json"));
  OPSCOPE_TRY(cfg_layers, doc->root().Object("quantized_layers"));
  if (!cfg_layers) return MakeError("quant_cfg.json: missing field 'quantized_layers'");
  return ReadQuantizedLayers(*cfg_layers, out, rules);
}

Result<void> ReadModelOpt(const ConfigObject& q, std::string_view exclude_key,
                          std::optional<std::string_view> quant_cfg_text, CheckpointQuant& out,
                          std::vector<QuantRule>& rules) {
  OPSCOPE_TRY(algo, q.String("quant_algo"));
  OPSCOPE_TRY(group, q.Int("group_size"));
  OPSCOPE_TRY(exclude, FirstList(q, {exclude_key, "exclude_modules", "ignore"}));
  out.method = "modelopt " + algo.value_or("(no quant_algo)");
  if (auto ok = AddExclusions(rules, out, exclude.first, exclude.second, false); !ok) return ok;
  if (auto ok = ReadModelOptKv(q, out); !ok) return ok;
  if (!algo) {
    if (!out.kv) out.unsupported = "'" + q.Path("quant_algo") + "' is missing";
    return {};  // a KV-only checkpoint: weights in the model dtype
  }
  const std::string upper = Upper(*algo);
  if (upper == "MIXED_PRECISION") return ReadMixedPrecision(q, quant_cfg_text, out, rules);
  std::string why;
  std::optional<QuantScheme> s = AlgoScheme(*algo, group, why);
  if (!s) {
    out.unsupported = "'" + q.Path("quant_algo") + "' " + why + " is not modelled";
    return {};
  }
  if (upper == "NVFP4_AWQ") {
    out.notes.push_back("NVFP4_AWQ's pre_quant_scale (one value per input channel) is not counted");
  }
  out.scope = CheckpointQuant::Scope::kAllLinear;
  out.format = s->weights;
  out.scheme = std::move(s);
  return {};
}

// The object holding quantization_config: the root, else a nested text config.
Result<std::optional<ConfigObject>> FindQuantizationConfig(const ConfigObject& root) {
  for (std::string_view key : {"quantization_config", "compression_config"}) {
    OPSCOPE_TRY(q, root.Object(key));
    if (q) return q;
  }
  for (std::string_view nest : {"text_config", "llm_config", "language_config"}) {
    OPSCOPE_TRY(inner, root.Object(nest));
    if (!inner) continue;
    OPSCOPE_TRY(q, inner->Object("quantization_config"));
    if (q) return q;
  }
  return std::nullopt;
}

void Finish(CheckpointQuant& out, std::vector<QuantRule> rules) {
  if (!rules.empty()) out.rules = std::make_shared<const std::vector<QuantRule>>(std::move(rules));
  if (out.unsupported.empty()) ChooseActivations(out);
}

}  // namespace

std::span<const ModelOptAlgo> ModelOptAlgos() { return kModelOptAlgos; }

Result<void> ReadQuantizationConfig(const ConfigObject& root, CheckpointQuant& out) {
  OPSCOPE_TRY(found, FindQuantizationConfig(root));
  if (!found) return {};
  const ConfigObject& qc = *found;
  OPSCOPE_TRY(method, qc.String("quant_method"));
  out.method = method.value_or("");
  out.source = root.origin();
  std::vector<QuantRule> rules;
  Result<void> ok;
  const std::string& m = out.method;
  if (m == "fp8") {
    ok = ReadFp8(qc, out, rules);
  } else if (m == "mxfp4") {
    // transformers Mxfp4HfQuantizer converts the routed experts only (gpt-oss).
    out.scope = CheckpointQuant::Scope::kRoutedExperts;
    out.format = Format::kMxfp4;
    out.scheme = QuantScheme{Format::kMxfp4, std::nullopt, "mxfp4"};
    OPSCOPE_TRY(skip, FirstList(qc, {"modules_to_not_convert"}));
    ok = AddExclusions(rules, out, skip.first, skip.second, false);
  } else if (m == "awq" || m == "gptq") {
    ok = ReadAwqGptq(qc, m, out, rules);
  } else if (m == "bitsandbytes") {
    ok = ReadBitsAndBytes(qc, out, rules);
  } else if (m == "compressed-tensors") {
    ok = ReadCompressedTensors(qc, out, rules);
  } else if (m == "modelopt") {
    ok = ReadModelOpt(qc, "ignore", std::nullopt, out, rules);
  } else {
    out.unsupported = "'" + qc.Path("quant_method") + "' " + Quote(m) + " is not modelled";
  }
  if (!ok) return std::unexpected(ok.error());
  Finish(out, std::move(rules));
  return {};
}

Result<CheckpointQuant> ReadHfQuantConfig(std::string_view text, const std::string& origin,
                                          std::optional<std::string_view> quant_cfg_text) {
  OPSCOPE_TRY(doc, ConfigDocument::Parse(text, origin));
  const ConfigObject root = doc->root();
  OPSCOPE_TRY(q, root.Object("quantization"));
  if (!q) return MakeError(origin + ": missing field 'quantization' (a ModelOpt hf_quant_config.json)");
  CheckpointQuant out;
  out.source = origin;
  std::vector<QuantRule> rules;
  if (auto ok = ReadModelOpt(*q, "exclude_modules", quant_cfg_text, out, rules); !ok) {
    return std::unexpected(ok.error());
  }
  Finish(out, std::move(rules));
  return out;
}

}  // namespace opscope::import::hf
