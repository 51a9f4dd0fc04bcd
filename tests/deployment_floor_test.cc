// Issue 14: the fused floor of a multi-device deployment is a true lower bound — its
// collectives at the cheapest algorithm a real engine has (one-shot / NVLS all-reduce), never
// above the estimate, which keeps the ring. Checked on the deployments whose measured runs beat
// the old (ring-charged) floor: Llama-3.1-70B and DeepSeek-R1 at TP=8 on B200, and on others.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The JSON report of `opscope llm ARGS --format json` (stdout; empty when the run failed).
std::string LlmJson(const std::string& args) {
  const std::string cmd =
      std::string(OPSCOPE_BINARY) + " llm " + args + " --format json 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
    if (::pclose(p) != 0) out.clear();
  }
  return out;
}

TEST(DeploymentFloor, NeverAboveTheEstimate) {
  for (const char* args : {"llama-3.1-70b --device b200 --tp 8 --batch 1",
                           "llama-3.1-70b --device b200 --tp 8 --batch 64",
                           "deepseek-r1 --device b200 --tp 8 --batch 1",
                           "deepseek-r1 --device b200 --tp 8 --batch 32",
                           "deepseek-v3 --device h200 --tp 8 --ep 8 --batch 64",
                           "llama-3.1-70b --tp 4 --pp 2 --batch 16 --device h200",
                           "qwen3-30b-a3b --ep 4 --batch 8 --phase prefill --prompt 2048"}) {
    const std::string json = LlmJson(args);
    ASSERT_FALSE(json.empty()) << args;
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(json);
    const double floor_s = doc["totals"]["fused_floor_s"].get_double();
    const double time_s = doc["totals"]["time_s"].get_double();
    EXPECT_GT(floor_s, 0) << args;
    EXPECT_LE(floor_s, time_s) << args;  // the busiest device: floor ≤ estimate
  }
}

}  // namespace
