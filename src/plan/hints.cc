// Launch hints per engine (see hints.h): one table row per engine, each with the function that
// writes one side (an aggregated replica or a disaggregated worker pool) of a point.
//   vLLM:      --tensor-parallel-size T·D (attention data parallel as --data-parallel-size D with
//              --enable-expert-parallel on experts), --pipeline-parallel-size P, --max-num-seqs B
//   SGLang:    --tp T·D --dp D --enable-dp-attention, --ep-size E, --pp-size P,
//              --max-running-requests B; disaggregated: --disaggregation-mode prefill|decode
//   TRT-LLM:   tp_size T·D, pp_size P, moe_expert_parallel_size E, enable_attention_dp,
//              max_batch_size B
//   llama.cpp: one device per server (-np B parallel sequences, -c their total context),
//              layer split across devices (--split-mode layer) for pipeline stages
#include "plan/hints.h"

#include <array>

namespace opscope::plan {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string Vllm(const Side& s, const std::string& model, int64_t context, const char* role) {
  std::string h = "vllm serve " + model;
  if (s.dp_attention > 1) {
    h += " --tensor-parallel-size " + Str(s.tp) + " --data-parallel-size " + Str(s.dp_attention);
  } else if (s.tp > 1) {
    h += " --tensor-parallel-size " + Str(s.tp);
  }
  if (s.ep > 1) h += " --enable-expert-parallel";
  if (s.pp > 1) h += " --pipeline-parallel-size " + Str(s.pp);
  h += " --max-num-seqs " + Str(s.batch / s.dp_attention) + " --max-model-len " + Str(context);
  if (role[0] != '\0') {
    h += std::string(" --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"") +
         role + "\"}'";
  }
  return h;
}

std::string Sglang(const Side& s, const std::string& model, int64_t context, const char* role) {
  std::string h = "python -m sglang.launch_server --model-path " + model;
  if (s.tp * s.dp_attention > 1) h += " --tp " + Str(s.tp * s.dp_attention);
  if (s.dp_attention > 1) h += " --dp " + Str(s.dp_attention) + " --enable-dp-attention";
  if (s.ep > 1) h += " --ep-size " + Str(s.ep);
  if (s.pp > 1) h += " --pp-size " + Str(s.pp);
  h += " --max-running-requests " + Str(s.batch) + " --context-length " + Str(context);
  if (role[0] != '\0') h += std::string(" --disaggregation-mode ") + role;
  return h;
}

std::string Trtllm(const Side& s, const std::string& model, int64_t context, const char* role) {
  std::string h = "trtllm-serve " + model + " --tp_size " + Str(s.tp * s.dp_attention);
  if (s.pp > 1) h += " --pp_size " + Str(s.pp);
  if (s.ep > 1) h += " --ep_size " + Str(s.ep);
  h += " --max_batch_size " + Str(s.batch) + " --max_seq_len " + Str(context);
  if (s.dp_attention > 1) h += " (extra_llm_api_options: enable_attention_dp: true)";
  if (role[0] != '\0') h += std::string(" (disaggregated ") + role + " server)";
  return h;
}

std::string LlamaCpp(const Side& s, const std::string& model, int64_t context, const char*) {
  std::string h = "llama-server -m " + model + " -np " + Str(s.batch) + " -c " +
                  Str(context * s.batch);
  if (s.devices > 1) h += " --split-mode " + std::string(s.tp > 1 ? "row" : "layer");
  return h;
}

struct HintEngine {
  std::string_view name;
  std::string (*side)(const Side&, const std::string& model, int64_t context, const char* role);
};

constexpr std::array<HintEngine, 4> kEngines = {{
    {"vllm", Vllm},
    {"sglang", Sglang},
    {"trtllm", Trtllm},
    {"llama.cpp", LlamaCpp},
}};

const HintEngine* Find(std::string_view name) {
  for (const HintEngine& e : kEngines) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string LlmArgs(const Side& s, const std::optional<std::string>& weights) {
  std::string a;
  if (s.tp > 1) a += " --tp " + Str(s.tp);
  if (s.ep > 1) a += " --ep " + Str(s.ep);
  if (s.pp > 1) a += " --pp " + Str(s.pp);
  if (s.dp_attention > 1 || s.ep > s.tp) a += " --dp-attention " + Str(s.dp_attention);
  if (weights) a += " --weights " + *weights;
  return a + " --batch " + Str(s.batch);
}

}  // namespace

std::string HintEngineNames() {
  std::string names;
  for (const HintEngine& e : kEngines) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

bool KnownHintEngine(std::string_view engine) { return Find(engine) != nullptr; }

std::string LaunchHint(std::string_view engine, const PlanPoint& p, const std::string& model,
                       int64_t context) {
  const HintEngine* e = Find(engine);
  if (e == nullptr) return "";
  if (p.mode == Mode::kAgg) {
    std::string h = e->side(p.agg, model, context, "");
    if (p.agg.count > 1) h += "  (x" + Str(p.agg.count) + " replicas behind a load balancer)";
    return h;
  }
  return "prefill x" + Str(p.prefill.count) + ": " +
         e->side(p.prefill, model, context, engine == "vllm" ? "kv_producer" : "prefill") +
         "  |  decode x" + Str(p.decode.count) + ": " +
         e->side(p.decode, model, context, engine == "vllm" ? "kv_consumer" : "decode");
}

std::string ReproduceCommand(const PlanPoint& p, const std::string& model,
                             const std::string& device, int64_t isl, int64_t osl,
                             const std::string& engine, const std::string& modes) {
  const std::string head = "opscope llm " + model + " --device " + device;
  const std::string request = " --phase prefill --prompt " + Str(isl) + " --gen-len " + Str(osl) +
                              " --engine " + engine + modes;
  if (p.mode == Mode::kAgg) return head + LlmArgs(p.agg, p.weights) + request;
  if (p.requests_in_flight > 0) {
    // Predicted: one run of the whole deployment (--batch: its requests in flight).
    Side whole = p.decode;
    whole.batch = p.requests_in_flight;
    return head + LlmArgs(whole, p.weights) + request + " --disagg " + Str(p.prefill.count) + ":" +
           Str(p.decode.count) + " --prefill-tp " + Str(p.prefill.tp) + " --decode-tp " +
           Str(p.decode.tp);
  }
  return head + LlmArgs(p.prefill, p.weights) + request + "  (prefill workers: ttft_s)  ;  " +
         head + LlmArgs(p.decode, p.weights) + request + "  (decode workers: tpot_s)";
}

}  // namespace opscope::plan
