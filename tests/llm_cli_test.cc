// `opscope llm` run as users run it: the default job, JSON's llm block with DESIGN's names and
// closed-form numbers, --list, prefill and --gen-len, and bad input (exit 2, one line naming the
// file, field or option).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/run_binary.h"

namespace {

namespace fs = std::filesystem;

using opscope::testing::Outcome;

class LlmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() /
           ("opscope_llm_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // `opscope llm ARGS...`.
  Outcome Run(std::vector<std::string> args) {
    args.insert(args.begin(), "llm");
    return opscope::testing::RunOpscope(args);
  }

  void ExpectError(const std::vector<std::string>& args, const std::string& message) {
    const Outcome o = Run(args);
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, "opscope: error: " + message + "\n");
  }

  std::string Write(const std::string& name, const std::string& contents) {
    const fs::path p = tmp_ / name;
    std::ofstream(p) << contents;
    return p.string();
  }

  fs::path tmp_;
};

// Reads one number of the JSON report.
double Number(simdjson::dom::element e, std::string_view a, std::string_view b) {
  double v = -1;
  simdjson::dom::element x;
  if (e[a][b].get(x) == simdjson::SUCCESS) {
    if (x.is_uint64()) return static_cast<double>(uint64_t(x));
    if (x.get_double().get(v) != simdjson::SUCCESS) return -1;
  }
  return v;
}

TEST_F(LlmCli, DefaultJobIsLlamaDecodeOnH100) {
  const Outcome o = Run({"llama-3.1-8b", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["device"]["name"]), "h100-sxm");
  EXPECT_EQ(int64_t(doc["workload"]["n"]), 1);
  EXPECT_EQ(int64_t(doc["workload"]["seqs"]), 1);
  EXPECT_EQ(int64_t(doc["workload"]["ctx"]), 4096);
  EXPECT_EQ(Number(doc, "llm", "params_total"), 8030261248.0);
  EXPECT_EQ(Number(doc, "llm", "weight_bytes"), 16060522496.0);
  EXPECT_EQ(Number(doc, "llm", "kv_bytes_per_token"), 131072.0);
  EXPECT_EQ(Number(doc, "llm", "max_batch"), 104.0);
  // (active − embedding + one row) · 2 weight bytes, plus the KV cache, at 3.35 TB/s.
  EXPECT_EQ(Number(doc, "totals", "bytes_weights"), (8030261248.0 - 525336576.0 + 4096) * 2);
  const double step = Number(doc, "llm", "step_time_s");
  EXPECT_NEAR(step, Number(doc, "totals", "bytes") / 3.35e12, 1e-9);
  EXPECT_NEAR(Number(doc, "llm", "tokens_per_s"), 1 / step, 1e-6);
  EXPECT_TRUE(bool(doc["llm"]["fits"]));
  for (const char* field : {"params_active", "params_embedding", "kv_window_bytes_per_seq",
                            "state_bytes_per_seq"}) {
    EXPECT_GE(Number(doc, "llm", field), 0) << field;
  }
}

TEST_F(LlmCli, PrefillAndWholeRequest) {
  const Outcome o = Run({"qwen3-8b", "--phase", "prefill", "--prompt", "1000", "--batch", "2",
                         "--gen-len", "50", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["workload"]["n"]), 2000);
  EXPECT_EQ(int64_t(doc["workload"]["ctx"]), 0);
  const double step = Number(doc, "llm", "step_time_s");
  EXPECT_EQ(Number(doc, "llm", "ttft_s"), step);
  EXPECT_NEAR(Number(doc, "llm", "tokens_per_s"), 2000 / step, 1e-6);
  const double e2e = Number(doc, "llm", "e2e_s"), tpot = Number(doc, "llm", "tpot_s");
  EXPECT_NEAR(e2e, step + 50 * tpot, 1e-12);
}

// Each collective node reports the bytes its device sends: a tensor-parallel all-reduce of the
// hidden state [B, hidden] in bf16 sends the ring's 2·(N−1)/N of it; other nodes send nothing.
TEST_F(LlmCli, TensorParallelAllReduceSendsTheRingsLinkBytes) {
  constexpr uint64_t kBatch = 3, kHidden = 4096, kLayers = 32;  // llama-3.1-8b
  for (uint64_t tp : {2u, 8u}) {
    const Outcome o = Run({"llama-3.1-8b", "--tp", std::to_string(tp), "--batch",
                           std::to_string(kBatch), "--format", "json"});
    ASSERT_EQ(o.status, 0) << o.err;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
    const uint64_t bytes = kBatch * kHidden * 2;
    uint64_t all_reduces = 0;
    for (simdjson::dom::element n : doc["nodes"].get_array()) {
      const std::string_view op = n["op"].get_string().value();
      const uint64_t link = n["bytes_link"].get_uint64().value();
      if (op == "AllReduce") {
        ++all_reduces;
        EXPECT_EQ(link, 2 * (tp - 1) * bytes / tp) << n["name"].get_string().value();
      } else if (op != "AllGather") {  // the LM head's logits
        EXPECT_EQ(link, 0u) << n["name"].get_string().value();
      }
    }
    EXPECT_EQ(all_reduces, 2 * kLayers + 1);  // attention and MLP per layer, the embedding
  }
}

// --gen-len on a deployment: TTFT plus the decode steps, tpot their mean.
TEST_F(LlmCli, WholeRequestOnADeployment) {
  const Outcome o = Run({"deepseek-v3", "--device", "h200", "--ep", "8", "--pp", "2",
                         "--context", "2048", "--gen-len", "4096", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
  const double ttft = Number(doc, "llm", "ttft_s"), e2e = Number(doc, "llm", "e2e_s");
  const double tpot = Number(doc, "llm", "tpot_s");
  ASSERT_GT(ttft, 0);
  EXPECT_NEAR(e2e, ttft + 4096 * tpot, 1e-9 * e2e);
  // Decode steps grow with the context: the mean lies at or above the first step.
  EXPECT_GE(tpot, Number(doc, "llm", "step_time_s"));
  EXPECT_EQ(Number(doc, "parallel", "devices"), 16.0);
}

TEST_F(LlmCli, ListsEveryPreset) {
  const Outcome o = Run({"--list"});
  ASSERT_EQ(o.status, 0) << o.err;
  for (const char* name : {"llama-3.1-8b", "deepseek-v3", "gemma-3-27b-it", "qwen3.5-397b-a17b",
                           "nemotron-h-8b-base-8k", "mamba-codestral-7b-v0.1"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
}

TEST_F(LlmCli, ConfigFileFromDisk) {
  const std::string path =
      Write("config.json", R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
        "torch_dtype": "float16", "rope_scaling": null, "x": Infinity})");
  const Outcome o = Run({path, "--context", "128", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("\"params_total\":1824000"), std::string::npos);  // 2 layers of 256
}

TEST_F(LlmCli, BadInputNamesTheFileFieldOrOption) {
  ExpectError({"no-such-model"}, "model 'no-such-model': neither a built-in preset (see "
                                 "'opscope llm --list') nor an existing config.json file or "
                                 "model folder");
  ExpectError({"llama-3.1-8b", "--batch", "0"}, "option '--batch': must be positive, got 0");
  ExpectError({"llama-3.1-8b", "--context", "-5"}, "option '--context': must be positive, got -5");
  const Outcome q = Run({"llama-3.1-8b", "--weights", "q4_x"});
  EXPECT_EQ(q.status, 2);
  EXPECT_TRUE(q.err.starts_with("opscope: error: option '--weights': unknown format 'q4_x'")) << q.err;
  EXPECT_NE(q.err.find("q4_k_m"), std::string::npos) << q.err;  // the file types are listed
  const std::string bad_json = Write("bad.json", "{\"model_type\": ");
  const Outcome o = Run({bad_json});
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(o.err.starts_with("opscope: error: " + bad_json + ": not valid JSON")) << o.err;
  const std::string bad_kv = Write("kv.json", R"({"model_type": "llama", "hidden_size": 256,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3,
    "intermediate_size": 512})");
  ExpectError({bad_kv}, bad_kv + ": field 'num_key_value_heads': 3 does not divide "
                        "num_attention_heads 4");
  const std::string unsupported = Write("t5.json", R"({"model_type": "t5", "hidden_size": 8})");
  const Outcome t5 = Run({unsupported});
  EXPECT_EQ(t5.status, 2);
  EXPECT_NE(t5.err.find("field 'model_type': \"t5\" is not supported"), std::string::npos);
  ExpectError({"gpt-oss-20b", "--weights", "fp8_e4m3_b128"},
              "preset 'gpt-oss-20b': weight format fp8_e4m3_b128: tensor "
              "'layers.0.attn.qkv_proj.weight' has rows of 2880 elements, not a multiple of the "
              "format's 128-element block");
}

}  // namespace
