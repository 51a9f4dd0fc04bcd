// Predicted serving figures (issue 14): the serving dynamics as closed forms on synthetic step
// clocks (dynamics.h), and the engine-profile prediction of real models through
// ServingPredictor — floor ≤ predicted, monotone in load, `--engine roofline` equal to the
// roofline estimate, the serving modes' option errors, and --isl/--osl as spellings of
// --prompt/--gen-len.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "device/device.h"
#include "import/hf_config/step_graph.h"
#include "llm/dynamics.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "predict/profile.h"
#include "testing/run_binary.h"

namespace opscope::llm {
namespace {

// ---- Dynamics: closed forms ------------------------------------------------------------------

TEST(Dynamics, ExpectedTokensPerStepIsTheAcceptancePrefixSum) {
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(0, 0.7), 1.0);  // no drafts: the verified token
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(3, 1.0), 4.0);  // every draft accepted: N + 1
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(3, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(2, 0.5), 1.0 + 0.5 + 0.25);
}

TEST(Dynamics, ClosedLoopWaitIsMeanValueAnalysis) {
  EXPECT_DOUBLE_EQ(ClosedLoopWait(1, 2.0, 5.0), 0.0);  // alone: no wait
  // Two customers, demand D = 1, think Z = 3: Q(1) = D / (D + Z) = 1/4, R(2) = D (1 + 1/4),
  // wait = R(2) − D = 0.25.
  EXPECT_DOUBLE_EQ(ClosedLoopWait(2, 1.0, 3.0), 0.25);
  // No think time: N customers on one server wait for the N − 1 others, (N − 1)·D.
  EXPECT_NEAR(ClosedLoopWait(5, 2.0, 0.0), 8.0, 1e-12);
}

// Clocks linear in their arguments: decode(s) = 1 ms + 10 us·s; a step with a prompt chunk
// adds 1 us per prompt token and 1 ns per key before it.
StepClock LinearClock() {
  return {[](int64_t seqs) { return 1e-3 + 1e-5 * static_cast<double>(seqs); },
          [](int64_t seqs, int64_t chunk, int64_t offset) {
            return 1e-3 + 1e-5 * static_cast<double>(seqs) + 1e-6 * static_cast<double>(chunk) +
                   1e-9 * static_cast<double>(offset);
          }};
}

TEST(Dynamics, OneRequestIsItsPromptChunksThenItsDecodeSteps) {
  const ServingLoad load{1, 1000, 101, 1.0, false};
  const Composition c = Compose(load, 512);
  EXPECT_EQ(c.prefill_budget, 512);  // alone: the whole budget
  EXPECT_EQ(c.prefill_chunks, 2);    // 512 + 488 tokens
  EXPECT_DOUBLE_EQ(c.decode_seqs, 1.0);
  EXPECT_DOUBLE_EQ(c.chunk_share, 0.0);  // no other prompt interleaves
  const DynamicsFigures f = Aggregated(load, c, LinearClock());
  // TTFT = mixed(0, 512, 0) + mixed(0, 488, 512) = 2·1 ms + 1000 us + 512 ns.
  EXPECT_NEAR(f.ttft_s, 2e-3 + 1000e-6 + 512e-9, 1e-15);
  EXPECT_DOUBLE_EQ(f.queue_s, 0.0);
  // TPOT = decode(1) = 1.01 ms; e2e = TTFT + 100 TPOT; tokens/s = 101 / e2e.
  EXPECT_NEAR(f.tpot_s, 1.01e-3, 1e-15);
  EXPECT_NEAR(f.e2e_s, f.ttft_s + 100 * 1.01e-3, 1e-12);
  EXPECT_NEAR(f.tokens_per_s, 101 / f.e2e_s, 1e-9);
}

TEST(Dynamics, SpeculativeStepsDivideTpotByTheirTokens) {
  const ServingLoad plain{1, 100, 201, 1.0, false}, spec{1, 100, 201, 2.5, false};
  const DynamicsFigures a = Aggregated(plain, Compose(plain, 512), LinearClock());
  const DynamicsFigures b = Aggregated(spec, Compose(spec, 512), LinearClock());
  EXPECT_NEAR(b.tpot_s, a.tpot_s / 2.5, 1e-15);
  EXPECT_NEAR(Compose(spec, 512).decode_steps, 200 / 2.5, 1e-12);
}

TEST(Dynamics, DisaggregatedAddsTheTransferAndNoInterference) {
  const ServingLoad load{1, 1000, 11, 1.0, false};
  const DynamicsFigures f =
      Disaggregated(load, 512, 1, 1, 4e-3, LinearClock(), LinearClock());
  // One request: TTFT = its prefill chunks + the KV transfer; TPOT = decode(1).
  EXPECT_NEAR(f.ttft_s, 2e-3 + 1000e-6 + 512e-9 + 4e-3, 1e-15);
  EXPECT_DOUBLE_EQ(f.kv_transfer_s, 4e-3);
  EXPECT_NEAR(f.tpot_s, 1.01e-3, 1e-15);
  // Eight requests: decode steps carry no prompt chunks, aggregated ones do.
  const ServingLoad eight{8, 1000, 11, 1.0, false};
  const DynamicsFigures agg = Aggregated(eight, Compose(eight, 512), LinearClock());
  const DynamicsFigures dis = Disaggregated(eight, 512, 1, 1, 0, LinearClock(), LinearClock());
  EXPECT_GT(agg.interference_s, 0);
  EXPECT_DOUBLE_EQ(dis.interference_s, 0);
  EXPECT_LT(dis.tpot_s, agg.tpot_s);
}

TEST(Dynamics, MoreRequestsInFlightNeverServeOneFaster) {
  double ttft = 0, tpot = 0;
  for (int64_t c : {1, 2, 4, 8, 16}) {
    const ServingLoad load{c, 2000, 200, 1.0, false};
    const DynamicsFigures f = Aggregated(load, Compose(load, 2048), LinearClock());
    EXPECT_GE(f.ttft_s, ttft) << c;
    EXPECT_GE(f.tpot_s, tpot) << c;
    ttft = f.ttft_s;
    tpot = f.tpot_s;
  }
}

// Overlap scheduling: the step after the running one is formed before an arriving request is
// seen, so with others in flight it waits one whole step more (a = 3/2 instead of 1/2); alone
// (C = 1) nothing runs when it arrives, and nothing changes. Its prefill and TPOT do not move
// beyond the second-order change of the loop's timing.
TEST(Dynamics, OverlapSchedulingWaitsOneStepMoreWithOthersInFlight) {
  for (int64_t c : {1, 4, 16}) {
    const ServingLoad plain{c, 2000, 200, 1.0, false}, overlapped{c, 2000, 200, 1.0, true};
    const Composition cp = Compose(plain, 2048), co = Compose(overlapped, 2048);
    EXPECT_DOUBLE_EQ(cp.arrival_steps, c > 1 ? 0.5 : 0.0) << c;
    EXPECT_DOUBLE_EQ(co.arrival_steps, c > 1 ? 1.5 : 0.0) << c;
    const DynamicsFigures a = Aggregated(plain, cp, LinearClock());
    const DynamicsFigures b = Aggregated(overlapped, co, LinearClock());
    const double extra_steps = b.queue_s / b.step_s - a.queue_s / a.step_s;
    EXPECT_NEAR(extra_steps, c > 1 ? 1.0 : 0.0, 0.02) << c;
    EXPECT_NEAR(b.prefill_s, a.prefill_s, 0.01 * a.prefill_s) << c;
    EXPECT_NEAR(b.tpot_s, a.tpot_s, 0.01 * a.tpot_s) << c;
    // A prefill worker forms its next step ahead only when requests wait, which the closed
    // loop's queue counts: disaggregated serving does not add the step.
    const DynamicsFigures dp = Disaggregated(plain, 512, 1, 1, 0, LinearClock(), LinearClock());
    const DynamicsFigures dov =
        Disaggregated(overlapped, 512, 1, 1, 0, LinearClock(), LinearClock());
    EXPECT_DOUBLE_EQ(dov.ttft_s, dp.ttft_s) << c;
  }
}

// Fixed lengths: the loop runs in groups whose prompts share steps. Two requests of 100-token
// prompts whose step budget holds both: every cycle both arrive together, share one prompt
// step, decode ten steps side by side and finish together — TTFT = mixed(0, 200, 0), TPOT =
// decode(2), whether or not the engine overlaps its scheduling (an idle engine forms its step
// with whatever has arrived).
TEST(Dynamics, FixedLengthsTravelInGroupsThatShareTheirPromptSteps) {
  for (bool overlapped : {false, true}) {
    const ServingLoad load{2, 100, 11, 1.0, overlapped};
    const DynamicsFigures f = FixedLengths(load, 1000, LinearClock());
    const double prompt_step = 1e-3 + 200e-6, decode_step = 1e-3 + 2e-5;
    EXPECT_NEAR(f.ttft_s, prompt_step, 1e-15) << overlapped;
    EXPECT_NEAR(f.prefill_s, prompt_step, 1e-15) << overlapped;
    EXPECT_NEAR(f.queue_s, 0, 1e-15) << overlapped;
    EXPECT_NEAR(f.tpot_s, decode_step, 1e-15) << overlapped;
    EXPECT_NEAR(f.e2e_s, prompt_step + 10 * decode_step, 1e-12) << overlapped;
    EXPECT_NEAR(f.tokens_per_s, 2 * 11 / f.e2e_s, 1e-9) << overlapped;
    EXPECT_DOUBLE_EQ(f.group_size, 2.0) << overlapped;
    EXPECT_DOUBLE_EQ(f.decode_seqs, 2.0) << overlapped;
  }
}

// One request alone is the same request either way: its prompt chunks, then its decode steps.
TEST(Dynamics, FixedLengthsOfOneRequestIsTheSteadyState) {
  const ServingLoad load{1, 1000, 101, 1.0, true};
  const DynamicsFigures fixed = FixedLengths(load, 512, LinearClock());
  const DynamicsFigures steady = Aggregated(load, Compose(load, 512), LinearClock());
  EXPECT_NEAR(fixed.ttft_s, steady.ttft_s, 1e-15);
  EXPECT_NEAR(fixed.tpot_s, steady.tpot_s, 1e-15);
  EXPECT_NEAR(fixed.e2e_s, steady.e2e_s, 1e-12);
  EXPECT_DOUBLE_EQ(fixed.group_size, 1.0);
}

// With others in flight a group's prompts wait for one another's prefill: the TTFT of fixed
// lengths is at least the steady state's own prefill, grows with the requests in flight, and
// groups hold between one request and all of them; the budget bounds a group's prompt tokens.
TEST(Dynamics, FixedLengthGroupsHoldTheirPrefillAndGrowWithLoad) {
  double ttft = 0;
  for (int64_t c : {2, 4, 8, 16, 32}) {
    const ServingLoad load{c, 1000, 200, 1.0, true};
    const DynamicsFigures fixed = FixedLengths(load, 4096, LinearClock());
    const DynamicsFigures steady = Aggregated(load, Compose(load, 4096), LinearClock());
    EXPECT_GE(fixed.ttft_s, steady.prefill_s) << c;
    EXPECT_GE(fixed.ttft_s, ttft) << c;
    EXPECT_GE(fixed.group_size, 1.0) << c;
    EXPECT_LE(fixed.group_size, static_cast<double>(c)) << c;
    EXPECT_GT(fixed.tpot_s, 0) << c;
    ttft = fixed.ttft_s;
  }
  // 32 prompts of 1000 tokens, 4096 a step: groups of at most five (four whole prompts and
  // the one the step's remaining tokens start).
  const DynamicsFigures f = FixedLengths({32, 1000, 200, 1.0, true}, 4096, LinearClock());
  EXPECT_GT(f.group_size, 1.0);
  EXPECT_LE(f.group_size, 5.0);
}

// Prefill-first scheduling (SGLang's): a step with waiting prompts carries no decodes, so a
// wave's prompts all run before any of its decodes, its requests finish on one step and the
// next wave arrives whole — groups of C, where a scheduler that mixes prompts into decode steps
// (vLLM's, TensorRT-LLM's) splits the wave by its budget. Eight 1000-token prompts, 2048 a step.
TEST(Dynamics, PrefillFirstKeepsWholeWaves) {
  for (int64_t c : {2, 4, 8}) {
    ServingLoad load{c, 1000, 50, 1.0, true};
    const DynamicsFigures mixed = FixedLengths(load, 2048, LinearClock());
    load.prefill_first = true;
    const DynamicsFigures first = FixedLengths(load, 2048, LinearClock());
    EXPECT_DOUBLE_EQ(first.group_size, static_cast<double>(c)) << c;
    if (c > 2) {
      EXPECT_LT(mixed.group_size, static_cast<double>(c)) << c;
    }
    // The last prompt of a wave waits for all the others: mean TTFT at least half the wave's
    // prefill, (C·I / budget) steps of at least 1 ms + 1 us a token.
    const double prompts = static_cast<double>(c);
    const double wave_s = std::ceil(prompts * 1000 / 2048) * 1e-3 + prompts * 1000e-6;
    EXPECT_GE(first.ttft_s, 0.5 * wave_s) << c;
  }
}

// ---- Predictions of real models ---------------------------------------------------------------

struct Case {
  Request request;
  std::optional<std::string> engine;
};

Request Make(const std::string& model, const std::string& device, int64_t tp = 1,
             int64_t ep = 1) {
  Request r;
  r.model = model;
  r.device = device;
  r.degrees.tp = tp;
  r.degrees.ep = ep;
  r.workload.batch = 4;
  r.workload.context = 1024;
  r.workload.gen_len = 128;
  return r;
}

std::vector<Case> Cases() {
  return {{Make("llama-3.1-8b", "h100-sxm"), "vllm"},
          {Make("llama-3.1-8b", "h100-sxm"), "trtllm"},
          {Make("llama-3.1-8b", "h100-sxm"), "sglang"},
          {Make("llama-3.1-8b", "h100-sxm"), "roofline"},
          {Make("llama-3.1-70b", "b200", 8), std::nullopt},
          {Make("deepseek-v3", "h200", 8, 8), "sglang"},
          {Make("qwen3-30b-a3b", "h200", 1, 1), "vllm"},
          {Make("llama-3.1-8b", "m2-ultra"), std::nullopt},
          // Collective-bound decode (four small all-reduces a layer at TP 8) with a bf16 KV
          // cache the floor lowers: the floor's collectives stay at the cheapest algorithm.
          {Make(std::string(OPSCOPE_SOURCE_DIR) + "/tests/data/configs_2026/MiniMax-M2.5", "b200", 8, 8),
           "sglang"}};
}

TEST(Predicted, NeverBelowTheFusedFloor) {
  for (const Case& c : Cases()) {
    auto run = RunLlm(c.request);
    ASSERT_TRUE(run) << c.request.model << ": " << run.error().message;
    auto p = ServingPredictor::Make(run->serving, c.request.degrees, c.engine);
    ASSERT_TRUE(p) << p.error().message;
    auto f = p->Predict(c.request.workload);
    ASSERT_TRUE(f) << f.error().message;
    const std::string what = c.request.model + " on " + c.request.device + " with " + f->engine;
    ASSERT_TRUE(f->ttft_floor_s && f->tpot_floor_s && f->ttft_s && f->tpot_s) << what;
    EXPECT_LE(*f->ttft_floor_s, *f->ttft_s) << what;
    EXPECT_LE(*f->tpot_floor_s, *f->tpot_s) << what;
    EXPECT_LE(run->evaluation.figures.per_device.step_floor_s.value_or(0), f->step_time_s * (1 + 1e-12)) << what;
  }
}

TEST(Predicted, RooflineEngineIsTheRooflineEstimate) {
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  auto p = ServingPredictor::Make(run->serving, {}, "roofline");
  ASSERT_TRUE(p);
  Workload step = Make("llama-3.1-8b", "h100-sxm").workload;
  step.gen_len.reset();
  auto f = p->Predict(step);
  ASSERT_TRUE(f);
  // The transparent profile times every node at its roofline and adds no overheads.
  EXPECT_NEAR(f->step_time_s, run->evaluation.figures.step_time_s,
              1e-9 * run->evaluation.figures.step_time_s);
}

// The basis printed beside a prediction is the device's own: a family member's parameters were
// fitted on another device (A10G on the A100's, B300 on the B200's), so it says "derived".
TEST(Predicted, FamilyMembersSayTheirParametersAreDerived) {
  for (const auto& [device, basis] : std::vector<std::pair<std::string, std::string>>{
           {"a100-80g", "fitted"}, {"a10g", "derived"}, {"b300", "derived"},
           {"mi300x", "public"}, {"mi325x", "derived"}}) {
    auto run = RunLlm(Make("llama-3.1-8b", device));
    ASSERT_TRUE(run) << device << ": " << run.error().message;
    auto p = ServingPredictor::Make(run->serving, {}, std::string("vllm"));
    ASSERT_TRUE(p) << device << ": " << p.error().message;
    auto f = p->Predict(Make("llama-3.1-8b", device).workload);
    ASSERT_TRUE(f) << device;
    EXPECT_EQ(f->basis, basis) << device;
    for (const KernelClassError& e : f->kernel_errors) EXPECT_EQ(e.basis, basis) << device;
  }
}

// H200 is H100's GH100 with faster HBM: where the shipped profiles pool a kernel group the
// two tables measure too sparsely to fit alone (fit_family; SGLang's and TensorRT-LLM's 4-bit
// weight MoE kernels, 17–19 calls a device), the two devices share its parameters, and a
// memory-bound decode step of a model whose step those kernels fill is never slower on H200.
// (Fitted alone, SGLang's had put H200's at 29 % of its bandwidth and H100's at 85 %:
// gpt-oss-120b decoded 37 % slower on H200.)
TEST(Predicted, PooledKernelsNeverDecodeSlowerOnH200) {
  for (const std::string engine : {"sglang", "trtllm"}) {
    auto profile = predict::ResolveEngineProfile(engine);
    ASSERT_TRUE(profile) << profile.error().message;
    const auto params = [&](const char* id) {
      return (**predict::FindDeviceProfile(*profile, *device::FindBuiltinDevice(id)))
          .Find(predict::KernelClass::kGroupedGemm, "w4a16");
    };
    ASSERT_NE(params("h100-sxm"), nullptr) << engine;
    ASSERT_NE(params("h200"), nullptr) << engine;
    EXPECT_EQ(params("h100-sxm")->bandwidth_efficiency, params("h200")->bandwidth_efficiency)
        << engine;
    EXPECT_EQ(params("h100-sxm")->fit.samples, params("h200")->fit.samples) << engine;
    for (const char* model : {"gpt-oss-120b", "kimi-k2.5"}) {
      const int64_t tp = std::string(model) == "kimi-k2.5" ? 8 : 1;
      for (int64_t batch : {1, 8, 32}) {
        double step_s[2] = {0, 0};
        for (int i = 0; i < 2; ++i) {
          Request r = Make(model, i == 0 ? "h100-sxm" : "h200", tp);
          r.workload.batch = batch;
          r.workload.gen_len.reset();
          auto run = RunLlm(r);
          ASSERT_TRUE(run) << model << ": " << run.error().message;
          auto p = ServingPredictor::Make(run->serving, r.degrees, engine);
          ASSERT_TRUE(p) << p.error().message;
          auto f = p->Predict(r.workload);
          ASSERT_TRUE(f) << f.error().message;
          step_s[i] = f->step_time_s;
        }
        EXPECT_LE(step_s[1], step_s[0]) << engine << " " << model << " batch " << batch;
      }
    }
  }
}

TEST(Predicted, MonotoneInConcurrencyAndPrompt) {
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  auto p = ServingPredictor::Make(run->serving, {}, "vllm");
  ASSERT_TRUE(p);
  double tpot = 0, ttft = 0;
  for (int64_t c : {1, 2, 4, 8, 16}) {
    Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
    w.batch = c;
    auto f = p->Predict(w);
    ASSERT_TRUE(f);
    EXPECT_GE(*f->tpot_s, tpot) << c;
    tpot = *f->tpot_s;
  }
  for (int64_t prompt : {128, 1024, 4096, 16384}) {
    Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
    w.batch = 1;
    w.context = prompt;
    auto f = p->Predict(w);
    ASSERT_TRUE(f);
    EXPECT_GT(*f->ttft_s, ttft) << prompt;
    ttft = *f->ttft_s;
  }
}

// A built-in profile with some fields changed, written where --engine can load it.
std::string ProfileFile(const std::string& name,
                        const std::function<void(predict::EngineProfile&)>& change) {
  predict::EngineProfile p = **predict::FindBuiltinProfile("sglang");
  change(p);
  const auto path = std::filesystem::temp_directory_path() /
                    ("opscope_ttft_" + name + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << predict::EngineProfileJson(p);
  return path.string();
}

// The request path (overheads.request_s) is paid once per request before its first token:
// TTFT and the request's latency grow by exactly request_s, TPOT and the floors do not move,
// and the closed loop's throughput is C·O / e2e.
TEST(Predicted, RequestPathAddsToTtftOnceAndNeverToTheFloor) {
  const std::string without =
      ProfileFile("no_request", [](predict::EngineProfile& p) { p.overheads.request_s = 0; });
  const std::string with =
      ProfileFile("request", [](predict::EngineProfile& p) { p.overheads.request_s = 0.05; });
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  auto a = ServingPredictor::Make(run->serving, {}, without);
  auto b = ServingPredictor::Make(run->serving, {}, with);
  ASSERT_TRUE(a && b);
  for (int64_t c : {1, 4, 16}) {
    Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
    w.batch = c;
    auto fa = a->Predict(w);
    auto fb = b->Predict(w);
    ASSERT_TRUE(fa && fb);
    EXPECT_NEAR(*fb->ttft_s - *fa->ttft_s, 0.05, 1e-12) << c;
    EXPECT_NEAR(*fb->e2e_s - *fa->e2e_s, 0.05, 1e-12) << c;
    EXPECT_DOUBLE_EQ(*fb->tpot_s, *fa->tpot_s) << c;
    EXPECT_DOUBLE_EQ(*fb->ttft_floor_s, *fa->ttft_floor_s) << c;
    EXPECT_DOUBLE_EQ(*fb->tpot_floor_s, *fa->tpot_floor_s) << c;
    EXPECT_DOUBLE_EQ(fb->dynamics->figures.request_s, 0.05) << c;
    EXPECT_NEAR(fb->tokens_per_s, static_cast<double>(c * *w.gen_len) / *fb->e2e_s,
                1e-9 * fb->tokens_per_s)
        << c;
  }
  std::filesystem::remove(without);
  std::filesystem::remove(with);
}

// Steps with prompt tokens run eagerly (defaults.prefill_cuda_graphs false): the CPU's issue
// time can only lengthen them, so TTFT never drops below the same profile with graphs; TTFT
// stays monotone in the prompt, and the floor is the kernels' alone.
TEST(Predicted, EagerPrefillLengthensTtftAndLeavesTheFloor) {
  const std::string graphs = ProfileFile(
      "graphs", [](predict::EngineProfile& p) { p.defaults.prefill_cuda_graphs = true; });
  const std::string eager = ProfileFile("eager", [](predict::EngineProfile& p) {
    p.defaults.prefill_cuda_graphs = false;
    p.overheads.launch_s = 45e-6;
  });
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  auto g = ServingPredictor::Make(run->serving, {}, graphs);
  auto e = ServingPredictor::Make(run->serving, {}, eager);
  ASSERT_TRUE(g && e);
  double last_ttft = 0;
  for (int64_t prompt : {16, 128, 1024, 4096, 16384}) {
    Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
    w.batch = 1;
    w.context = prompt;
    auto fg = g->Predict(w);
    auto fe = e->Predict(w);
    ASSERT_TRUE(fg && fe);
    EXPECT_GE(*fe->ttft_s, *fg->ttft_s) << prompt;
    EXPECT_DOUBLE_EQ(*fe->ttft_floor_s, *fg->ttft_floor_s) << prompt;
    EXPECT_LE(*fe->ttft_floor_s, *fe->ttft_s) << prompt;
    EXPECT_GE(*fe->ttft_s, last_ttft) << prompt;
    last_ttft = *fe->ttft_s;
  }
  // A short prompt is CPU-bound: 45 us per kernel of its eager step, far above its kernels.
  Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
  w.batch = 1;
  w.context = 16;
  EXPECT_GT(*e->Predict(w)->ttft_s, 1.5 * *g->Predict(w)->ttft_s);
  std::filesystem::remove(graphs);
  std::filesystem::remove(eager);
}

TEST(Predicted, ServingModesErrorsNameTheirOption) {
  EXPECT_FALSE(ParseDisagg("2"));
  EXPECT_FALSE(ParseDisagg("0:1"));
  EXPECT_NE(ParseDisagg("x:y").error().message.find("--disagg"), std::string::npos);
  auto d = ParseDisagg("2:3");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->prefill_workers, 2);
  EXPECT_EQ(d->decode_workers, 3);
  EXPECT_NE(ParseSpeculative("eagle:3", 0.5).error().message.find("--speculative"),
            std::string::npos);
  EXPECT_NE(ParseSpeculative("mtp:3", 1.5).error().message.find("--acceptance"),
            std::string::npos);
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  EXPECT_NE(ServingPredictor::Make(run->serving, {}, "no-such-engine").error().message.find(
                "--engine"),
            std::string::npos);
  auto p = ServingPredictor::Make(run->serving, {}, "vllm");
  ASSERT_TRUE(p);
  ServingModes modes;
  modes.speculative = Speculative{3, 0.7, std::nullopt};
  auto f = p->Predict(Make("llama-3.1-8b", "h100-sxm").workload, modes);
  ASSERT_FALSE(f);  // Llama has no MTP module
  EXPECT_NE(f.error().message.find("--speculative"), std::string::npos);
  // --lengths: varied or fixed; fixed only aggregated, and only for a whole request.
  PredictTexts texts;
  texts.lengths = "fix";
  EXPECT_NE(ParsePredictOptions(texts).error().message.find("option '--lengths'"),
            std::string::npos);
  texts.lengths = "fixed";
  texts.disagg = "1:1";
  EXPECT_NE(ParsePredictOptions(texts).error().message.find("not with --disagg"),
            std::string::npos);
  texts.disagg.reset();
  auto fixed = ParsePredictOptions(texts);
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_TRUE(fixed->fixed_lengths);
  Workload step = Make("llama-3.1-8b", "h100-sxm").workload;
  step.gen_len.reset();
  auto no_request = p->Predict(step, *fixed);
  ASSERT_FALSE(no_request);
  EXPECT_NE(no_request.error().message.find("option '--lengths'"), std::string::npos);
}

// --lengths fixed on a real model: the prediction says so, its groups hold between one request
// and all of them, and its TTFT, holding a group's prefill, is never below one prompt's own.
TEST(Predicted, FixedLengthsOnARealModel) {
  auto run = RunLlm(Make("llama-3.1-8b", "h100-sxm"));
  ASSERT_TRUE(run);
  for (const char* engine : {"vllm", "sglang", "trtllm"}) {
    auto p = ServingPredictor::Make(run->serving, {}, std::string(engine));
    ASSERT_TRUE(p) << p.error().message;
    Workload w = Make("llama-3.1-8b", "h100-sxm").workload;
    w.batch = 16;
    ServingModes fixed;
    fixed.fixed_lengths = true;
    auto a = p->Predict(w);
    auto b = p->Predict(w, fixed);
    ASSERT_TRUE(a && b) << engine;
    ASSERT_TRUE(b->dynamics) << engine;
    EXPECT_EQ(a->dynamics->lengths, "varied") << engine;
    EXPECT_EQ(b->dynamics->lengths, "fixed") << engine;
    EXPECT_GE(b->dynamics->figures.group_size, 1.0) << engine;
    EXPECT_LE(b->dynamics->figures.group_size, 16.0) << engine;
    EXPECT_GE(*b->ttft_s, *b->ttft_floor_s) << engine;
    EXPECT_GE(*b->tpot_s, *b->tpot_floor_s) << engine;
    EXPECT_GE(*b->ttft_s, a->dynamics->figures.prefill_s) << engine;
  }
}

TEST(Predicted, SpeculativeAndDisaggregatedOnDeepSeek) {
  Request r = Make("deepseek-v3", "h200", 8, 8);
  r.workload.batch = 8;
  auto run = RunLlm(r);
  ASSERT_TRUE(run);
  auto p = ServingPredictor::Make(run->serving, r.degrees, "sglang");
  ASSERT_TRUE(p);
  auto plain = p->Predict(r.workload);
  ASSERT_TRUE(plain);
  ServingModes spec;
  spec.speculative = Speculative{1, 0.8, std::nullopt};
  auto mtp = p->Predict(r.workload, spec);
  ASSERT_TRUE(mtp) << mtp.error().message;
  EXPECT_DOUBLE_EQ(mtp->dynamics->tokens_per_step, 1.8);
  EXPECT_EQ(mtp->dynamics->speculative, "mtp:1");
  EXPECT_EQ(plain->dynamics->speculative, "");
  EXPECT_LT(*mtp->tpot_s, *plain->tpot_s);  // a verify step of 2 rows is cheaper than 1.8 steps
  ServingModes disagg;
  disagg.disagg = Disagg{1, 1, std::nullopt, std::nullopt};
  auto dis = p->Predict(r.workload, disagg);
  ASSERT_TRUE(dis) << dis.error().message;
  EXPECT_EQ(dis->dynamics->mode, "disaggregated");
  EXPECT_GT(dis->dynamics->figures.kv_transfer_s, 0);
  EXPECT_LE(*dis->tpot_s, *plain->tpot_s);  // no prompt chunks interleaved with decode
}

// --speculative draft:N --draft-model M: N draft tokens a step from a separate model, deployed
// at the target's tensor parallelism: a first pass over the N + 1 positions the verify step
// scored (the same kernels as that model's own verify step), then N − 1 one-token passes at its
// decode kernels (as `opscope llm DRAFT --tp T` predicts them). So with two models drafting for
// each other at acceptance 0 the verify and first-pass terms cancel crosswise and the TPOTs
// differ by exactly (N − 1) times the difference of their decode kernels; the drafter's time
// (dynamics.draft_s) is the whole TPOT difference of two drafts for one target; and the step
// yields Σ R^i tokens: acceptance 1 divides TPOT by N + 1.
TEST(Predicted, ADraftModelCostsItsOwnDecodeKernelsPerDraftToken) {
  Request target = Make("qwen3-32b", "h200", 2);
  target.workload.batch = 1;
  target.workload.prompt = 1024;
  target.workload.context = 1024;
  target.workload.gen_len = 256;
  auto run = RunLlm(target);
  ASSERT_TRUE(run) << run.error().message;
  auto p = ServingPredictor::Make(run->serving, target.degrees, "vllm");
  ASSERT_TRUE(p);
  const auto tpot = [&](const std::string& draft, double acceptance) {
    ServingModes modes;
    modes.speculative = Speculative{3, acceptance, draft};
    auto f = p->Predict(target.workload, modes);
    EXPECT_TRUE(f) << f.error().message;
    return f ? *f->tpot_s : 0.0;
  };
  // The draft's decode kernels: one sequence at the mean decode context 1024 + 255/2.
  const auto kernels = [&](const std::string& draft) {
    Request d = Make(draft, "h200", 2);
    d.workload.batch = 1;
    d.workload.context = 1024 + 255 / 2;
    d.workload.gen_len.reset();
    auto r = RunLlm(d);
    EXPECT_TRUE(r) << r.error().message;
    auto dp = ServingPredictor::Make(r->serving, d.degrees, "vllm");
    auto f = dp->Predict(d.workload, {}, 0);
    EXPECT_TRUE(f) << f.error().message;
    double sum = 0;
    for (double t : f->node_time_s) sum += t;
    return sum;
  };
  const auto drafting = [&](const std::string& draft) {
    ServingModes modes;
    modes.speculative = Speculative{3, 0, draft};
    auto f = p->Predict(target.workload, modes);
    EXPECT_TRUE(f) << f.error().message;
    return f ? f->dynamics->draft_s : 0.0;
  };
  const double small = tpot("qwen3-8b", 0), large = tpot("qwen3-30b-a3b", 0);
  EXPECT_NEAR(large - small, drafting("qwen3-30b-a3b") - drafting("qwen3-8b"), 1e-9);
  // One model drafting for the other, each a target at tp 2 on H200 for one such request.
  const auto cross = [&](const std::string& target_name, const std::string& draft) {
    Request t = Make(target_name, "h200", 2);
    t.workload = target.workload;
    auto r = RunLlm(t);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return 0.0;
    auto tp = ServingPredictor::Make(r->serving, t.degrees, "vllm");
    ServingModes modes;
    modes.speculative = Speculative{3, 0, draft};
    auto f = tp->Predict(t.workload, modes);
    EXPECT_TRUE(f) << f.error().message;
    return f ? *f->tpot_s : 0.0;
  };
  EXPECT_NEAR(cross("qwen3-8b", "qwen3-30b-a3b") - cross("qwen3-30b-a3b", "qwen3-8b"),
              2 * (kernels("qwen3-30b-a3b") - kernels("qwen3-8b")), 1e-9);
  EXPECT_NEAR(tpot("qwen3-8b", 1) * 4, small, 1e-12);
  EXPECT_LT(tpot("qwen3-8b", 0.9), tpot("qwen3-8b", 0.5));
  // A draft never predicts faster than the floor of N + 1 tokens a step.
  ServingModes modes;
  modes.speculative = Speculative{3, 1.0, std::string("qwen3-8b")};
  auto best = p->Predict(target.workload, modes);
  ASSERT_TRUE(best);
  EXPECT_GE(*best->tpot_s, *best->tpot_floor_s);
  EXPECT_EQ(best->dynamics->speculative, "draft:3 qwen3-8b");
  EXPECT_TRUE(std::any_of(best->notes.begin(), best->notes.end(), [](const std::string& n) {
    return n.rfind("speculative: draft model qwen3-8b (tp 2), 3 draft tokens", 0) == 0;
  }));
}

// The drafter shares the decoding devices: a draft model's weights and KV (at the target's tp)
// and an MTP module's come off the memory the target's batch may use, so the fit with them is
// floor((mem_util · memory − W_target − W_drafter) / (S_target + S_drafter)) — here against the
// draft's own deployment and the configs' closed forms.
TEST(Predicted, TheDraftersWeightsAndKvShareTheMemoryFit) {
  Request target = Make("llama-3.1-70b", "h200", 4);
  auto run = RunLlm(target);
  ASSERT_TRUE(run) << run.error().message;
  auto p = ServingPredictor::Make(run->serving, target.degrees, "vllm");
  ASSERT_TRUE(p);
  Request draft = Make("llama-3.1-8b", "h200", 4);
  auto draft_run = RunLlm(draft);
  ASSERT_TRUE(draft_run);
  const int64_t context = target.workload.MemoryContext();
  const Serving& t = run->serving;
  const uint64_t w_draft = draft_run->serving.largest_share().weight_bytes;
  // Llama-3.1-8B: 32 layers × K and V × 8 KV heads / tp 4 × head 128 × 2 bytes per token.
  const uint64_t s_draft = 32ull * 2 * (8 / 4) * 128 * 2 * static_cast<uint64_t>(context);
  const auto fit = [&](uint64_t w, uint64_t s) {
    const double budget = t.device().memory_bytes * target.workload.mem_util -
                          static_cast<double>(t.largest_share().weight_bytes + w);
    return static_cast<uint64_t>(
        std::floor(budget / static_cast<double>(t.StageBytesPerSeq(0, context) + s)));
  };
  ServingModes modes;
  modes.speculative = Speculative{4, 0.7, std::string("llama-3.1-8b")};
  auto f = p->Predict(target.workload, modes);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_TRUE(f->dynamics->drafter_memory);
  const DrafterMemory& m = *f->dynamics->drafter_memory;
  EXPECT_EQ(m.weight_bytes, w_draft);
  EXPECT_EQ(m.bytes_per_seq, s_draft);
  EXPECT_EQ(m.max_batch, fit(w_draft, s_draft));
  EXPECT_LT(m.max_batch, run->evaluation.figures.max_batch);
  EXPECT_EQ(fit(0, 0), run->evaluation.figures.max_batch);  // the target's own fit
  EXPECT_TRUE(m.fits);
  // More requests in flight than the devices hold beside the draft: said, not hidden.
  Workload crowded = target.workload;
  crowded.batch = static_cast<int64_t>(m.max_batch) + 1;
  auto over = p->Predict(crowded, modes);
  ASSERT_TRUE(over);
  EXPECT_FALSE(over->dynamics->drafter_memory->fits);
  // Two decode workers at the same tp hold half of them each, the draft beside each.
  ServingModes two = modes;
  two.disagg = Disagg{1, 2, std::nullopt, std::nullopt};
  auto split = p->Predict(crowded, two);
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(split->dynamics->drafter_memory->max_batch, m.max_batch);
  EXPECT_TRUE(split->dynamics->drafter_memory->fits);

  // DeepSeek-V3's MTP module on 8 H200s: its block at the mean decoder layer's bytes on a
  // device (the device's weights less its vocabulary-split bf16 embedding table and LM head,
  // 2 · 129,280 / 8 · 7,168 · 2 bytes, over 61 layers), its replicated bf16 projection
  // [7168, 14336], and one MLA layer's latent cache per token ((512 + 64) · 2 bytes).
  Request ds = Make("deepseek-v3", "h200", 8);
  auto ds_run = RunLlm(ds);
  ASSERT_TRUE(ds_run) << ds_run.error().message;
  auto dp = ServingPredictor::Make(ds_run->serving, ds.degrees, "sglang");
  ASSERT_TRUE(dp);
  ServingModes mtp;
  mtp.speculative = Speculative{1, 0.8, std::nullopt};
  auto g = dp->Predict(ds.workload, mtp);
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(g->dynamics->drafter_memory);
  const uint64_t tables = 2ull * (129280 / 8) * 7168 * 2;
  const uint64_t layer = (ds_run->serving.largest_share().weight_bytes - tables) / 61;
  EXPECT_EQ(g->dynamics->drafter_memory->weight_bytes, layer + 7168ull * 14336 * 2);
  EXPECT_EQ(g->dynamics->drafter_memory->bytes_per_seq,
            (512 + 64) * 2 * static_cast<uint64_t>(ds.workload.MemoryContext()));
  EXPECT_LT(g->dynamics->drafter_memory->max_batch, ds_run->evaluation.figures.max_batch);
}

// One Llama-3.1-8B request of 1k prompt and 256 output tokens on an H100 (the target the
// drafting tests share).
Request Llama8bOneRequest() {
  Request target = Make("llama-3.1-8b", "h100-sxm");
  target.workload.batch = 1;
  target.workload.context = 1024;
  target.workload.prompt = 1024;
  target.workload.gen_len = 256;
  return target;
}

// An EAGLE-3 head drafting for Llama-3.1-8B (the head's shape: one Llama-3.1-8B layer over
// 2 · 4096, fc [3 · 4096 -> 4096], 32,000 draft tokens; fp16): its weights beside the target's
// are its 424,689,664 parameters × 2 bytes (the embedding is the target's), its KV one layer's.
// A round is a first pass over the N + 1 verified positions (fc in it) and N − 1 one-token
// passes without fc: each draft token beyond the first adds d_head − fc (d_plain for a plain
// draft model), where d is the drafter's one-token decode step; the first pass, over more rows,
// costs more than one token's. At acceptance 0 (one token a step) the TPOTs of the head and a
// plain draft model differ by exactly their draft_s.
TEST(Predicted, AnEagle3HeadDraftsWithItsFcOnceARound) {
  const auto head = std::filesystem::temp_directory_path() /
                    ("opscope_eagle3_" + std::to_string(::getpid()) + ".json");
  std::ofstream(head) << R"({"architectures": ["LlamaForCausalLMEagle3"],
      "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 1,
      "vocab_size": 128256, "draft_vocab_size": 32000, "tie_word_embeddings": false,
      "torch_dtype": "float16"})";
  Request target = Llama8bOneRequest();
  auto run = RunLlm(target);
  ASSERT_TRUE(run) << run.error().message;
  auto p = ServingPredictor::Make(run->serving, target.degrees, "vllm");
  ASSERT_TRUE(p);
  const auto predict = [&](const std::string& draft, double acceptance, int64_t drafts = 3) {
    ServingModes modes;
    modes.speculative = Speculative{drafts, acceptance, draft};
    return p->Predict(target.workload, modes);
  };
  auto f = predict(head.string(), 0.7);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_TRUE(f->dynamics->drafter_memory);
  EXPECT_EQ(f->dynamics->drafter_memory->weight_bytes, 424689664ull * 2);
  EXPECT_EQ(f->dynamics->drafter_memory->bytes_per_seq,
            2ull * 8 * 128 * 2 * static_cast<uint64_t>(target.workload.MemoryContext()));
  EXPECT_TRUE(std::any_of(f->notes.begin(), f->notes.end(), [](const std::string& n) {
    return n.rfind("speculative: EAGLE-3 head ", 0) == 0;
  }));
  // The head's and a plain draft's decode kernels at the mean context, one sequence.
  struct Kernels {
    double step_s = 0, fc_s = 0;
  };
  const auto kernels = [&](const std::string& draft) {
    Request d = Make(draft, "h100-sxm");
    d.workload.batch = 1;
    d.workload.context = 1024 + 255 / 2;
    d.workload.gen_len.reset();
    auto r = RunLlm(d);
    EXPECT_TRUE(r) << r.error().message;
    Kernels k;
    if (!r) return k;
    auto dp = ServingPredictor::Make(r->serving, d.degrees, "vllm");
    auto pred = dp->Predict(d.workload, {}, 0);
    EXPECT_TRUE(pred) << pred.error().message;
    const ir::Graph& g = r->serving.stage(0).graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      k.step_s += pred->node_time_s[i];
      if (g.nodes[i].name == "fc") k.fc_s += pred->node_time_s[i];
    }
    return k;
  };
  const std::string plain_draft = "meta-llama-3-8b-instruct";
  const Kernels e = kernels(head.string()), plain = kernels(plain_draft);
  EXPECT_GT(e.fc_s, 0);
  const auto draft_s = [&](const std::string& draft, int64_t drafts) {
    auto r = predict(draft, 0, drafts);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->dynamics->draft_s : 0.0;
  };
  // Each draft token past the first adds a one-token pass (without fc) and the first pass's
  // growth by one row, which is strictly more and, weight-bound at one sequence, little more.
  for (int64_t n : {2, 3}) {
    const double head_growth =
        draft_s(head.string(), n) - draft_s(head.string(), n - 1) - (e.step_s - e.fc_s);
    EXPECT_GT(head_growth, 0) << n;
    EXPECT_LT(head_growth, 0.05 * (e.step_s - e.fc_s)) << n;
    const double plain_growth =
        draft_s(plain_draft, n) - draft_s(plain_draft, n - 1) - plain.step_s;
    EXPECT_GT(plain_growth, 0) << n;
    EXPECT_LT(plain_growth, 0.05 * plain.step_s) << n;
  }
  EXPECT_GT(draft_s(head.string(), 1), e.step_s);  // the first pass reads 2 rows, fc in it
  EXPECT_GT(draft_s(plain_draft, 1), plain.step_s);
  auto with_head = predict(head.string(), 0), with_plain = predict(plain_draft, 0);
  ASSERT_TRUE(with_head && with_plain);
  EXPECT_NEAR(*with_head->tpot_s - *with_plain->tpot_s,
              with_head->dynamics->draft_s - with_plain->dynamics->draft_s, 1e-9);
  EXPECT_LT(*f->tpot_s, *p->Predict(target.workload)->tpot_s);  // a speedup at acceptance 0.7
  // A head trained on another hidden size is not this target's.
  Request big = Make("llama-3.1-70b", "h100-sxm", 4);
  auto big_run = RunLlm(big);
  ASSERT_TRUE(big_run);
  auto bp = ServingPredictor::Make(big_run->serving, big.degrees, "vllm");
  ServingModes modes;
  modes.speculative = Speculative{3, 0.7, head.string()};
  auto refused = bp->Predict(big.workload, modes);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "option '--draft-model': " + head.string() + " is an EAGLE-3 head over hidden states "
            "of 4096, and llama-3.1-70b's are 8192: a head drafts for the model it was trained "
            "on");
  std::filesystem::remove(head);
}

// The same head saved by speculators (tests/fixtures/hf/speculators-eagle3-llama3.1-8b.json:
// float32 on disk) drafts as the native one: the engines load a draft in the target's 16-bit
// dtype, so its weights beside Llama-3.1-8B are again 424,689,664 parameters × 2 bytes, not × 4,
// and the prediction says so. Its fc is the once-a-round node, and so are the norms a newer
// head puts before fc, not the layer's own input norm.
TEST(Predicted, ASpeculatorsHeadSavedInFloat32DraftsIn16Bits) {
  Request target = Llama8bOneRequest();
  auto run = RunLlm(target);
  ASSERT_TRUE(run) << run.error().message;
  auto p = ServingPredictor::Make(run->serving, target.degrees, "vllm");
  ASSERT_TRUE(p);
  const std::string head =
      std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/speculators-eagle3-llama3.1-8b.json";
  ServingModes modes;
  modes.speculative = Speculative{3, 0.7, head};
  auto f = p->Predict(target.workload, modes);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_TRUE(f->dynamics->drafter_memory);
  EXPECT_EQ(f->dynamics->drafter_memory->weight_bytes, 424689664ull * 2);
  auto opened = OpenDraftModel(head, run->serving.build().model);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->spec.dtype, format::Format::kBf16);
  EXPECT_TRUE(std::any_of(opened->spec.assumptions.begin(), opened->spec.assumptions.end(),
                          [](const std::string& a) {
                            return a.starts_with("model saved in float32, served in bf16 (a "
                                                 "draft model");
                          }));
  EXPECT_TRUE(import::hf::IsEagle3OncePerRound("fc"));
  EXPECT_TRUE(import::hf::IsEagle3OncePerRound("input_norm"));
  EXPECT_TRUE(import::hf::IsEagle3OncePerRound("fc_norm"));
  EXPECT_FALSE(import::hf::IsEagle3OncePerRound("layers.0.input_norm"));
}

// A model with Gemma-4 per-layer embeddings computes every layer's per-layer input on the first
// pipeline stage: split across stages it is refused, naming --pp and why.
TEST(Predicted, PerLayerEmbeddingsAcrossPipelineStagesAreRefusedByName) {
  const auto config = std::filesystem::temp_directory_path() /
                      ("opscope_ple_" + std::to_string(::getpid()) + ".json");
  std::ofstream(config) << R"({"model_type": "gemma4_text", "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 2,
      "num_key_value_heads": 1, "head_dim": 64, "global_head_dim": 128,
      "hidden_size_per_layer_input": 32, "vocab_size_per_layer_input": 1024,
      "vocab_size": 1024, "sliding_window": 64, "dtype": "bfloat16", "layer_types":
      ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]})";
  const opscope::testing::Outcome ok = opscope::testing::RunOpscope(
      opscope::testing::Args("llm " + config.string() + " --device h100-sxm"));
  EXPECT_EQ(ok.status, 0) << ok.err;
  const opscope::testing::Outcome split = opscope::testing::RunOpscope(
      opscope::testing::Args("llm " + config.string() + " --device h100-sxm --pp 2"));
  EXPECT_EQ(split.status, 2);
  EXPECT_NE(split.err.find("option '--pp': a device's share does not fit the recipe"),
            std::string::npos)
      << split.err;
  EXPECT_NE(split.err.find("per-layer embeddings (Gemma-4 E2B / E4B) are not modelled across "
                           "pipeline stages"),
            std::string::npos)
      << split.err;
  std::filesystem::remove(config);
}

// The draft model's errors name --draft-model: a model opscope cannot open, another vocabulary
// (a draft proposes the target's tokens; a table padded within 128 rows is the same one), a
// split the draft cannot take; and the options go together (draft:N with --draft-model, mtp:N
// without).
TEST(Predicted, DraftModelErrorsNameTheOption) {
  Request target = Make("qwen3-32b", "h200", 8);
  auto run = RunLlm(target);
  ASSERT_TRUE(run);
  auto p = ServingPredictor::Make(run->serving, target.degrees, "vllm");
  ASSERT_TRUE(p);
  // A Qwen3 draft of 20 attention heads: not split 8 ways.
  const auto odd = std::filesystem::temp_directory_path() /
                   ("opscope_draft_" + std::to_string(::getpid()) + ".json");
  std::ofstream(odd) << R"({"model_type": "qwen3", "hidden_size": 2560, "num_hidden_layers": 4,
      "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128,
      "intermediate_size": 9728, "vocab_size": 151936, "torch_dtype": "bfloat16"})";
  for (const auto& [draft, needle] : std::vector<std::pair<std::string, std::string>>{
           {"no-such-model", "option '--draft-model': model 'no-such-model'"},
           {"llama-3.1-8b", "option '--draft-model': llama-3.1-8b's vocabulary (128256 tokens) "
                            "is not qwen3-32b's (151936): a draft model proposes the target's "
                            "tokens"},
           {odd.string(), "option '--draft-model': " + odd.string() + " cannot run at the "
                          "target's tp 8: "}}) {
    ServingModes modes;
    modes.speculative = Speculative{2, 0.7, draft};
    auto f = p->Predict(target.workload, modes);
    ASSERT_FALSE(f) << draft;
    EXPECT_EQ(f.error().message.rfind(needle, 0), 0u) << f.error().message;
  }
  // A table padded differently, within llama.cpp's 128 rows, is the same tokenizer.
  std::ofstream(odd) << R"({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 4,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
      "intermediate_size": 3072, "vocab_size": 152064, "torch_dtype": "bfloat16"})";
  ServingModes padded;
  padded.speculative = Speculative{2, 0.7, odd.string()};
  auto f = p->Predict(target.workload, padded);
  EXPECT_TRUE(f) << f.error().message;
  std::filesystem::remove(odd);
  EXPECT_NE(ParseSpeculative("draft:2", 0.7).error().message.find("needs the draft model, "
                                                                 "--draft-model M"),
            std::string::npos);
  EXPECT_NE(ParseSpeculative("mtp:2", 0.7, std::string("qwen3-8b")).error().message.find(
                "option '--draft-model': only with --speculative draft:N"),
            std::string::npos);
  PredictTexts texts;
  texts.draft_model = "qwen3-8b";
  EXPECT_NE(ParsePredictOptions(texts).error().message.find(
                "option '--draft-model': only with --speculative draft:N"),
            std::string::npos);
  texts.speculative = "draft:2";
  texts.acceptance = 0.7;
  auto ok = ParsePredictOptions(texts);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->speculative->draft_model, std::optional<std::string>("qwen3-8b"));
  EXPECT_EQ(ok->speculative->drafts, 2);
}

// ---- The command ------------------------------------------------------------------------------

TEST(Predicted, IslAndOslSpellPromptAndGenLen) {
  const auto a = testing::RunOpscope(testing::Args(
      "llm llama-3.1-8b --batch 2 --isl 512 --osl 64 --engine vllm --format json"));
  const auto b = testing::RunOpscope(testing::Args(
      "llm llama-3.1-8b --batch 2 --prompt 512 --gen-len 64 --engine vllm --format json"));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("\"predicted\":{\"engine\":\"vllm\""), std::string::npos);
}

// ENGINE:NAME swaps in an alternative the profile offers for the classes it covers (TensorRT-
// LLM's TRTLLM-gen MoE on Blackwell): a MoE model's step changes, a dense model's does not, and
// the floor stays below both. Where the alternative has no fitted kernels the request is refused,
// not answered with the defaults under its name.
TEST(Predicted, AnAlternativeImplementationChangesOnlyItsClasses) {
  const auto step = [](const std::string& model, const std::string& engine) {
    Request r = Make(model, "b200", 8);
    r.workload.gen_len.reset();
    auto run = RunLlm(r);
    EXPECT_TRUE(run) << run.error().message;
    auto p = ServingPredictor::Make(run->serving, r.degrees, engine);
    EXPECT_TRUE(p) << p.error().message;
    auto f = p->Predict(r.workload);
    EXPECT_TRUE(f) << f.error().message;
    EXPECT_LE(run->evaluation.figures.per_device.step_floor_s.value_or(0),
              f->step_time_s * (1 + 1e-12))
        << model << " " << engine;
    return f->step_time_s;
  };
  EXPECT_NE(step("deepseek-v3", "trtllm"), step("deepseek-v3", "trtllm:trtllm_gen"));
  EXPECT_EQ(step("llama-3.1-8b", "trtllm"), step("llama-3.1-8b", "trtllm:trtllm_gen"));

  auto run = RunLlm(Make("deepseek-v3", "h200", 8));
  ASSERT_TRUE(run);
  auto elsewhere = ServingPredictor::Make(run->serving, {}, "trtllm:trtllm_gen");
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().message,
            "option '--engine': trtllm's 'trtllm_gen' kernels are fitted for b200, gb200, not "
            "for h200");
  auto unknown = ServingPredictor::Make(run->serving, {}, "trtllm:nosuch");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "option '--engine': engine 'trtllm' has no kernel implementation 'nosuch' (it "
            "offers: trtllm_gen)");
}

TEST(Predicted, CommandErrorsAreOneLineWithStatus2) {
  for (const char* args :
       {"llm llama-3.1-8b --engine nosuch", "llm llama-3.1-8b --engine vllm:nosuch",
        "llm deepseek-v3 --device h200 --tp 8 --engine trtllm:trtllm_gen",
        "llm llama-3.1-8b --gen-len 8 --speculative mtp:2",
        "llm llama-3.1-8b --prefill-tp 2", "llm llama-3.1-8b --gen-len 8 --disagg 1",
        // a request mode without a request (no --gen-len) is refused, not silently ignored
        "llm llama-3.1-8b --disagg 1:1", "llm deepseek-v3 --device h200 --tp 8 --speculative mtp:1 --acceptance 0.8"}) {
    const auto r = testing::RunOpscope(testing::Args(args));
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("opscope: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": " << r.err;
  }
  const auto r = testing::RunOpscope(testing::Args("llm llama-3.1-8b --disagg 1:1"));
  EXPECT_NE(r.err.find("option '--disagg': predicts a whole request"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--gen-len"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace opscope::llm

namespace opscope::llm {
namespace {

// The number after `key` at or after `from` in a JSON text (0 when absent).
double NumberAfter(const std::string& json, size_t from, const std::string& key) {
  const size_t at = json.find(key, from);
  return at == std::string::npos ? 0 : std::stod(json.substr(at + key.size()));
}

// `opscope sweep llm --engine E` predicts each point as `opscope llm --engine E` does: a whole
// request (--gen-len), a pipelined tensor-parallel deployment's decode step, and a prefill.
TEST(Predicted, SweepPointEqualsTheLlmPrediction) {
  for (const char* point :
       {"llama-3.1-8b --batch 8 --context 2048 --gen-len 64 --engine sglang",
        "llama-3.1-70b-instruct --device h200 --tp 2 --pp 2 --batch 5 --context 3000 --engine vllm",
        "qwen3-30b-a3b --device h200 --phase prefill --batch 3 --context 700 --engine trtllm"}) {
    const auto sweep = testing::RunOpscope(
        testing::Args(std::string("sweep llm ") + point + " --format json"));
    const auto llm =
        testing::RunOpscope(testing::Args(std::string("llm ") + point + " --format json"));
    ASSERT_EQ(sweep.status, 0) << point << ": " << sweep.err;
    ASSERT_EQ(llm.status, 0) << point << ": " << llm.err;
    EXPECT_NE(sweep.out.find("\"engine\":\""), std::string::npos) << point;
    const size_t s = sweep.out.find("\"predicted\":{"), l = llm.out.find("\"predicted\":{");
    ASSERT_NE(s, std::string::npos) << point;
    ASSERT_NE(l, std::string::npos) << point;
    // llm.predicted has the request's TPOT with --gen-len, a prefill's TTFT, else the step.
    const std::string text(point);
    const char* third = text.find("--gen-len") != std::string::npos ? "\"tpot_s\":"
                        : text.find("prefill") != std::string::npos ? "\"ttft_s\":"
                                                                    : "\"tokens_per_s\":";
    for (const char* key : {"\"step_time_s\":", "\"tokens_per_s\":", third}) {
      const double a = NumberAfter(sweep.out, s, key), b = NumberAfter(llm.out, l, key);
      EXPECT_GT(a, 0) << point << " " << key;
      EXPECT_DOUBLE_EQ(a, b) << point << " " << key;
    }
  }
}

}  // namespace
}  // namespace opscope::llm
