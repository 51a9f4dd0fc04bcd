// The opscope binary, run as users run it: golden reports compared exactly (their numbers
// checked against closed forms), exit statuses 0 / 1 (--strict) / 2, one-line
// "opscope: error:" messages naming the file, option or item, -o writing nothing on error,
// JSON with DESIGN's field names, and `opscope devices --format json` listing every required id.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/run_binary.h"

namespace {

namespace fs = std::filesystem;

const std::string kSource = OPSCOPE_SOURCE_DIR;
const std::string kBinary = OPSCOPE_BINARY;

using opscope::testing::Outcome;
using opscope::testing::ReadAll;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() /
           ("opscope_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // Runs opscope with `args` from the source directory; captures status, stdout, stderr.
  // `env` ("NAME=value"), and another copy of the binary, for the plugin tests.
  Outcome Run(const std::vector<std::string>& args, std::vector<std::string> env = {},
              const std::string& binary = kBinary) {
    opscope::testing::RunOptions options;
    options.binary = binary;
    options.env = std::move(env);
    return opscope::testing::RunOpscope(args, options);
  }

  // Exit 2, nothing on stdout, and exactly one stderr line "opscope: error: ..." containing
  // every part.
  void ExpectUsageError(const std::vector<std::string>& args,
                        std::initializer_list<std::string> parts) {
    const Outcome o = Run(args);
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    EXPECT_EQ(o.status, 2) << joined << "\nstderr: " << o.err;
    EXPECT_EQ(o.out, "") << joined;
    EXPECT_TRUE(o.err.starts_with("opscope: error: ")) << joined << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << joined << "\n" << o.err;
    EXPECT_TRUE(o.err.ends_with("\n")) << o.err;
    for (const std::string& p : parts) {
      EXPECT_NE(o.err.find(p), std::string::npos) << "'" << p << "' missing from: " << o.err;
    }
  }

  std::string Write(const std::string& name, const std::string& contents) {
    const fs::path p = tmp_ / name;
    std::ofstream(p) << contents;
    return p.string();
  }

  fs::path tmp_;
};

const std::vector<std::string> kMlp = {"analyze",  "tests/golden/mlp.json",
                                       "--device", "tests/golden/device.json",
                                       "--dim",    "n=4"};

// Whether stderr is exactly the launch-overhead warning: what a fully costed step of a few tiny
// nodes (well under ~5 us each) says, and nothing else.
bool OnlyLaunchWarning(const std::string& err) {
  return err.starts_with("opscope: warning: ") &&
         err.ends_with(": launch overhead not modelled; real time is dominated by it\n") &&
         std::count(err.begin(), err.end(), '\n') == 1;
}

std::vector<std::string> With(std::vector<std::string> base, std::vector<std::string> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// An integer past 64 bits is refused naming the option (CLI11 alone would saturate it).
TEST_F(CliTest, OutOfRangeIntegersNameTheOption) {
  ExpectUsageError({"llm", "llama-3.1-8b", "--batch", "99999999999999999999"},
                   {"--batch", "'99999999999999999999' is outside the 64-bit integer range"});
  ExpectUsageError({"sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1",
                    "--gen-len", "-99999999999999999999"},
                   {"--gen-len", "outside the 64-bit integer range"});
  ExpectUsageError({"llm", "llama-3.1-8b", "--batch", "1.5"}, {"--batch", "1.5"});
}

// ---- The ONNX importer plugin ----------------------------------------------------------------

// The binary loads opscope-onnx.so from beside itself on the first .onnx file; without it (or
// with a broken one) analyzing ONNX is an error naming the model and the plugin, and nothing
// else changes.
TEST_F(CliTest, OnnxPluginMissingOrBrokenIsAClearError) {
  const fs::path lone = tmp_ / "opscope";
  fs::copy_file(kBinary, lone);
  const std::string model = "tests/fixtures/onnx/einsum.onnx";
  Outcome o = Run({"analyze", model}, {}, lone.string());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_TRUE(o.err.starts_with("opscope: error: " + model + ": the ONNX importer plugin "
                                "opscope-onnx.so is missing")) << o.err;
  EXPECT_NE(o.err.find("OPSCOPE_ONNX_PLUGIN"), std::string::npos) << o.err;
  // Graph JSON needs no plugin.
  o = Run(kMlp, {}, lone.string());
  EXPECT_EQ(o.status, 0) << o.err;

  const std::string junk = Write("junk.so", "not a shared object");
  o = Run({"analyze", model}, {"OPSCOPE_ONNX_PLUGIN=" + junk}, lone.string());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("cannot load the ONNX importer plugin '" + junk + "'"), std::string::npos)
      << o.err;
  // The plugin the build made, named explicitly, works from anywhere.
  const fs::path plugin = fs::path(kBinary).parent_path() / "opscope-onnx.so";
  o = Run({"analyze", model, "--format", "json"}, {"OPSCOPE_ONNX_PLUGIN=" + plugin.string()},
          lone.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(o.out.starts_with("{\"schema_version\":1,")) << o.out.substr(0, 80);
}

// ---- Goldens ---------------------------------------------------------------------------------

TEST_F(CliTest, GoldenReportsMatchExactly) {
  struct Golden {
    std::vector<std::string> args;
    const char* expected;
  } goldens[] = {
      {With(kMlp, {"--format", "json"}), "tests/golden/mlp.expected.json"},
      {kMlp, "tests/golden/mlp.expected.txt"},
      {{"analyze", "tests/golden/matmul.json", "--device", "tests/golden/device.json", "--dim",
        "n=64", "--format", "json"},
       "tests/golden/matmul.expected.json"},
  };
  for (const Golden& g : goldens) {
    const Outcome o = Run(g.args);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_TRUE(OnlyLaunchWarning(o.err)) << o.err;  // the goldens are a few ns-scale nodes
    EXPECT_EQ(o.out, ReadAll(fs::path(kSource) / g.expected)) << g.expected;
  }
}

// The golden's numbers are true, not just stable: each checked against its closed form
// (n = 4, hidden = 256, bf16 activations; device 1 TB/s, bf16 1e14, int8 2e14, fp32 1e13).
TEST_F(CliTest, GoldenNumbersMatchClosedForms) {
  simdjson::dom::parser parser;
  simdjson::padded_string text(ReadAll(fs::path(kSource) / "tests/golden/mlp.expected.json"));
  simdjson::dom::element doc = parser.parse(text).value();
  const uint64_t x = 4 * 256 * 2;                                 // [n, hidden] bf16
  const uint64_t norm_w = 256 * 2;
  const uint64_t gu_w = 1024 * 256 / 2 + 2 * 1024 * 256 / 128;    // int4_g128
  const uint64_t down_w = 256 * 512 * 2;
  const uint64_t gu = 4 * 1024 * 2, a = 4 * 512 * 2;
  const uint64_t read = (x + norm_w) + (x + gu_w) + gu + (a + down_w) + (x + x);
  const uint64_t written = x + gu + a + x + x;
  const uint64_t flops = 3 * 4 * 256                 // RMSNorm: 3 per input element
                         + 2 * 4 * 1024 * 256        // gate_up: 2·rows·out·k
                         + 4 * 512                   // SiluMul: 1 per output element
                         + 2 * 4 * 256 * 512         // down
                         + 4 * 256;                  // residual add
  simdjson::dom::element totals = doc["totals"];
  EXPECT_EQ(totals["bytes_read"].get_uint64().value(), read);
  EXPECT_EQ(totals["bytes_written"].get_uint64().value(), written);
  EXPECT_EQ(totals["bytes_weights"].get_uint64().value(), norm_w + gu_w + down_w);
  EXPECT_EQ(totals["flops"].get_uint64().value(), flops);
  // Every op is memory-bound at 1 TB/s, so the time is bytes / bandwidth.
  EXPECT_DOUBLE_EQ(totals["time_s"].get_double().value(), static_cast<double>(read + written) / 1e12);
  EXPECT_EQ(totals["memory_bound_bytes"].get_uint64().value(), read + written);
  // Floor: weights once + input x + output y, over the bandwidth.
  EXPECT_DOUBLE_EQ(totals["fused_floor_s"].get_double().value(),
                   static_cast<double>(norm_w + gu_w + down_w + x + x) / 1e12);
  EXPECT_EQ(totals["nodes"].get_uint64().value(), 6u);
  EXPECT_EQ(totals["nodes_costed"].get_uint64().value(), 5u);
  simdjson::dom::element gate_up = doc["nodes"].at(1);
  EXPECT_EQ(gate_up["name"].get_string().value(), "gate_up");
  EXPECT_EQ(gate_up["mma_class"].get_string().value(), "bf16");  // W4A16 at bf16
  EXPECT_EQ(doc["not_costed"].at(0)["reason"].get_string().value(),
            "unknown op 'CustomProbe': no cost rule");

  simdjson::padded_string mm(ReadAll(fs::path(kSource) / "tests/golden/matmul.expected.json"));
  simdjson::dom::element m = parser.parse(mm).value();
  EXPECT_EQ(m["totals"]["flops"].get_uint64().value(), 2u * 64 * 32 * 128);  // 2·M·N·K
  EXPECT_EQ(m["totals"]["bytes_read"].get_uint64().value(), (64u * 128 + 128 * 32) * 4);
  EXPECT_EQ(m["totals"]["bytes_written"].get_uint64().value(), 64u * 32 * 4);
  EXPECT_EQ(m["totals"]["bytes_weights"].get_uint64().value(), 128u * 32 * 4);
  EXPECT_EQ(m["nodes"].at(0)["mma_class"].get_string().value(), "fp32");
}

// ---- JSON schema through the binary ----------------------------------------------------------

std::set<std::string> Keys(simdjson::dom::object o) {
  std::set<std::string> keys;
  for (auto field : o) keys.insert(std::string(field.key));
  return keys;
}

TEST_F(CliTest, JsonOutputHasDesignsFieldNames) {
  const Outcome o = Run({"analyze", "examples/llama3_8b_layer.json", "--dim", "n=1", "--format",
                         "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
  simdjson::dom::object root = doc.get_object().value();
  std::set<std::string> top = Keys(root);
  for (const char* k : {"schema_version", "model", "device", "workload", "totals", "nodes",
                        "by_op", "not_costed", "assumptions"}) {
    EXPECT_TRUE(top.count(k)) << k;
  }
  top.erase("no_flop_model");  // DESIGN: ops without a FLOP model are listed
  EXPECT_EQ(top.size(), 9u);
  EXPECT_EQ(Keys(root["totals"].get_object().value()),
            (std::set<std::string>{"bytes_read", "bytes_written", "bytes_weights", "bytes_state",
                                   "bytes", "flops", "intensity", "time_s",
                                   "memory_bound_bytes", "compute_bound_bytes", "fused_floor_s",
                                   "nodes", "nodes_costed",
                                   // additive (issue 12): state split, links, what bounds the step
                                   "bytes_kv_cache", "bytes_recurrent_state", "bytes_link",
                                   "comm_s", "floor_bound"}));
  const simdjson::dom::array node_rows = root["nodes"].get_array().value();
  for (simdjson::dom::element n : node_rows) {
    EXPECT_EQ(Keys(n.get_object().value()),
              (std::set<std::string>{"name", "op", "source_op", "costed", "bytes_read",
                                     "bytes_written", "bytes_weights", "bytes_state", "bytes",
                                     "bytes_link", "flops", "intensity", "mma_class", "time_s", "bound"}));
  }
  const simdjson::dom::array by_op_rows = root["by_op"].get_array().value();
  for (simdjson::dom::element n : by_op_rows) {
    EXPECT_EQ(Keys(n.get_object().value()),
              (std::set<std::string>{"op", "count", "bytes", "bytes_link", "flops", "time_s"}));
  }
  EXPECT_EQ(root["device"]["name"].get_string().value(), "h100-sxm");  // the default device
  EXPECT_GT(root["totals"]["bytes_weights"].get_uint64().value(), 0u);
}

// ---- Exit statuses ---------------------------------------------------------------------------

TEST_F(CliTest, StrictExitsOneWhenSomethingIsNotCosted) {
  const Outcome plain = Run(kMlp);
  EXPECT_EQ(plain.status, 0) << plain.err;
  const Outcome strict = Run(With(kMlp, {"--strict"}));
  EXPECT_EQ(strict.status, 1) << strict.err;
  EXPECT_EQ(strict.out, plain.out);  // the report is still written
  const Outcome complete = Run({"analyze", "tests/golden/matmul.json", "--dim", "n=64",
                                "--strict"});
  EXPECT_EQ(complete.status, 0) << complete.err;
}

TEST_F(CliTest, UnboundDimIsListedNotGuessed) {
  const Outcome o = Run({"analyze", "tests/golden/matmul.json", "--format", "json"});
  EXPECT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(o.out).value();
  simdjson::dom::array nc = doc["not_costed"].get_array().value();
  ASSERT_EQ(nc.size(), 1u);
  EXPECT_NE(std::string(nc.at(0)["reason"].get_string().value()).find("'n'"), std::string::npos);
  EXPECT_FALSE(doc["nodes"].at(0)["costed"].get_bool().value());
  EXPECT_EQ(doc["totals"]["bytes"].get_uint64().value(), 0u);
  EXPECT_EQ(Run({"analyze", "tests/golden/matmul.json", "--strict"}).status, 1);
}

// Fewer than half of the nodes costed: the headline says "partial", stderr warns, and the exit
// status stays 0 (1 only with --strict). matmul.json without --dim n costs 0 of its 1 node.
TEST_F(CliTest, PartialAnalysisSaysSoInTheHeadlineAndOnStderr) {
  const std::string partial = "partial: 0 of 1 nodes costed \u2014 totals are not the model's";
  const Outcome text = Run({"analyze", "tests/golden/matmul.json"});
  EXPECT_EQ(text.status, 0);
  EXPECT_EQ(text.err, "opscope: warning: " + partial + "\n");
  EXPECT_NE(text.out.find("  nodes            1 (0 costed)\n  " + partial + "\n"), std::string::npos)
      << text.out;
  const Outcome html = Run({"analyze", "tests/golden/matmul.json", "--format", "html"});
  EXPECT_NE(html.out.find("<strong>partial: 0 of 1 nodes costed \u2014 totals are not the "
                          "model&#39;s</strong>"),
            std::string::npos);
  const Outcome json = Run({"analyze", "tests/golden/matmul.json", "--format", "json"});
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json.out).value();
  simdjson::dom::array warnings = doc["warnings"].get_array().value();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(std::string(warnings.at(0).get_string().value()), partial);
  EXPECT_EQ(Run({"analyze", "tests/golden/matmul.json", "--strict"}).status, 1);
  // Fully costed: no partial warning; the one warning left is a 1-node step's launch overhead.
  const Outcome full = Run({"analyze", "tests/golden/matmul.json", "--dim", "n=64", "--format", "json"});
  EXPECT_TRUE(OnlyLaunchWarning(full.err)) << full.err;
  EXPECT_EQ(full.out.find("partial"), std::string::npos);
}

// --input decides an If on a graph input; without it the warning names the option to pass.
TEST_F(CliTest, OnnxInputDecidesTheBranchAndNotTakenIsListed) {
  const std::string model = "tests/fixtures/onnx/if_on_input.onnx";
  const std::vector<std::string> dims = {"--dim", "input:0=1", "--dim", "input:1=64", "--dim", "state:1=1"};
  const Outcome without = Run(With(With({"analyze", model}, dims), {"--format", "json"}));
  EXPECT_EQ(without.status, 0) << without.err;
  EXPECT_NE(without.err.find("opscope: warning: If 'If_0' depends on the value of input 'sr' (pass "
                             "--input sr=VALUE); neither branch is costed\n"),
            std::string::npos)
      << without.err;
  const Outcome with = Run(With(With({"analyze", model, "--input", "sr=16000"}, dims), {"--format", "json"}));
  EXPECT_EQ(with.status, 0) << with.err;
  EXPECT_TRUE(OnlyLaunchWarning(with.err)) << with.err;  // nothing about 'sr' any more
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(with.out).value();
  simdjson::dom::element first = doc["not_taken"].at(0).value();
  EXPECT_EQ(std::string(first["name"].get_string().value()), "If_0");
  EXPECT_EQ(std::string(first["branch"].get_string().value()), "else");
  EXPECT_GT(first["nodes"].get_uint64().value(), 0u);
  EXPECT_EQ(doc["totals"]["nodes"].get_uint64().value(), doc["totals"]["nodes_costed"].get_uint64().value());
  ExpectUsageError({"analyze", model, "--input", "rate=1"}, {"'--input rate=1'", "'sr'"});
  ExpectUsageError({"analyze", model, "--input", "sr"}, {"'--input'", "'sr'"});
  ExpectUsageError({"analyze", model, "--dim", "samples=512"},
                   {"'samples'", "'input:0', 'input:1', 'state:1'"});
}

// ---- Bad usage and bad input: exit 2, one line, naming the culprit ---------------------------

TEST_F(CliTest, BadDimOptions) {
  const std::vector<std::string> mm = {"analyze", "tests/golden/matmul.json"};
  ExpectUsageError(With(mm, {"--dim", "n=abc"}), {"n=abc", "'abc'"});
  ExpectUsageError(With(mm, {"--dim", "n"}), {"'n'"});
  ExpectUsageError(With(mm, {"--dim", "=5"}), {"'=5'"});
  ExpectUsageError(With(mm, {"--dim", "n=-1"}), {"'-1'"});
  ExpectUsageError(With(mm, {"--dim", "n=99999999999999999999"}), {"'99999999999999999999'"});
  ExpectUsageError(With(mm, {"--dim", "n=4", "--dim", "n=5"}), {"'n'"});
  ExpectUsageError(With(mm, {"--dim", "m=4"}), {"tests/golden/matmul.json", "'m'"});
  ExpectUsageError(With(mm, {"--dim", "k=4"}), {"tests/golden/matmul.json", "'k'"});
}

TEST_F(CliTest, BadDevices) {
  const std::vector<std::string> mm = {"analyze", "tests/golden/matmul.json", "--dim", "n=1"};
  ExpectUsageError(With(mm, {"--device", "h999-sxm"}), {"'h999-sxm'"});
  const std::string malformed = Write("malformed_device.json", "{\"name\": \"x\", ");
  ExpectUsageError(With(mm, {"--device", malformed}), {malformed});
  const std::string incomplete =
      Write("incomplete_device.json", R"({"name": "half", "memory_bytes": 1e9})");
  ExpectUsageError(With(mm, {"--device", incomplete}), {incomplete, "'dram_bytes_per_s'"});
  const std::string negative = Write("negative_device.json",
                                     R"({"name": "neg", "memory_bytes": 1e9,
                                         "dram_bytes_per_s": -1, "peak_flops_per_s": {},
                                         "source": "x"})");
  ExpectUsageError(With(mm, {"--device", negative}), {negative, "'dram_bytes_per_s'"});
  ExpectUsageError(With(mm, {"--device", (tmp_ / "absent_device.json").string()}),
                   {(tmp_ / "absent_device.json").string()});
}

// A checkpoint whose matrices run at a class the device has no tensor cores for (FP8 on an
// A100) is refused naming the node and the class, with the way engines serve it there
// (weight-only, dequantized to bf16), and the command it names runs.
TEST_F(CliTest, CheckpointPrecisionTheDeviceLacksNamesTheWeightOnlyWay) {
  const std::vector<std::string> fp8 = {
      "llm", "tests/data/configs_2026/Qwen3-32B-FP8-Static-PerTensor", "--device", "a100-80g"};
  ExpectUsageError(fp8, {"runs at fp8", "'a100-80g' has no peak for", "--activations bf16"});
  const Outcome weight_only = Run(With(fp8, {"--activations", "bf16", "--format", "json"}));
  EXPECT_EQ(weight_only.status, 0) << weight_only.err;
  EXPECT_NE(weight_only.out.find("\"weight_bytes\""), std::string::npos);
  // A wider class the device lacks (a GGUF file's f32 router on a TPU without an fp32 matrix
  // peak) stays wide whatever the activations: no such advice.
  const Outcome wide = Run({"llm", "qwen3-30b-a3b", "--device", "tpu-v5e", "--weights", "q8_0"});
  EXPECT_EQ(wide.status, 2);
  EXPECT_NE(wide.err.find("runs at fp32, which device 'tpu-v5e' has no peak for"),
            std::string::npos)
      << wide.err;
  EXPECT_EQ(wide.err.find("--activations"), std::string::npos) << wide.err;
}

TEST_F(CliTest, BadOptionsAndFiles) {
  ExpectUsageError({"analyze", "tests/golden/matmul.json", "--frobnicate"}, {"--frobnicate"});
  ExpectUsageError({"analyze", "tests/golden/matmul.json", "--format", "xml"}, {"xml"});
  ExpectUsageError({}, {});
  ExpectUsageError({"analyze", "tests/golden/no_such_model.json"},
                   {"tests/golden/no_such_model.json"});
  ExpectUsageError({"analyze", "tests/golden"}, {"tests/golden", "directory"});
  ExpectUsageError({"analyze", "tests/golden/device.json"}, {"tests/golden/device.json"});
  const std::string bad = Write("bad_graph.json",
                                R"({"tensors": [{"name": "w_q", "shape": [4], "format": "fp7"}],
                                    "nodes": []})");
  ExpectUsageError({"analyze", bad}, {bad, "'w_q'", "'fp7'"});
  const std::string order = Write("order.json", R"({"tensors": [
      {"name": "x", "shape": [4], "role": "input"}, {"name": "h", "shape": [4]},
      {"name": "y", "shape": [4]}],
    "nodes": [{"name": "second", "op": "Neg", "inputs": ["h"], "outputs": ["y"]},
              {"name": "first", "op": "Neg", "inputs": ["x"], "outputs": ["h"]}]})");
  ExpectUsageError({"analyze", order}, {order, "'second'", "'h'"});
  const std::string truncated = Write("truncated.json", R"({"tensors": [{"name": "x", "sh)");
  ExpectUsageError({"analyze", truncated}, {truncated});
  const std::string block = Write("block.json", R"({"tensors": [
      {"name": "w4", "shape": [2, 24], "format": "nvfp4", "role": "weight"}], "nodes": []})");
  ExpectUsageError({"analyze", block}, {block, "'w4'"});
}

// The message quotes the option or text at fault verbatim: no case mangling ("MODEL", not
// "mODEL"), and an unknown subcommand is named.
TEST_F(CliTest, ErrorsQuoteOptionsAndCommandsVerbatim) {
  ExpectUsageError({"analyze"}, {"MODEL"});
  ExpectUsageError({"transmogrify"}, {"transmogrify"});
}

TEST_F(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(Run({"--help"}).status, 0);
  EXPECT_EQ(Run({"analyze", "--help"}).status, 0);
  const Outcome v = Run({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_TRUE(v.out.starts_with("opscope ")) << v.out;
}

// ---- -o FILE --------------------------------------------------------------------------------

// -o into a device or pipe writes into it (renaming a temporary file over /dev/null would
// replace the device); -o through a symbolic link replaces the target and keeps the link.
TEST_F(CliTest, OutputToPipesAndLinksKeepsThemWhatTheyAre) {
  const fs::path fifo = tmp_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = ReadAll(fifo); });  // blocks until opscope opens the pipe
  const Outcome o = Run(With(kMlp, {"--format", "json", "-o", fifo.string()}));
  // Had opscope not opened it, a writer that closes at once ends the reader's wait.
  if (const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
  reader.join();
  EXPECT_EQ(o.status, 0) << o.err;
  const std::string expected = ReadAll(fs::path(kSource) / "tests/golden/mlp.expected.json");
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(fs::is_fifo(fifo));

  const fs::path target = tmp_ / "target.json", link = tmp_ / "link.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  EXPECT_EQ(Run(With(kMlp, {"--format", "json", "-o", link.string()})).status, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ReadAll(target), expected);
}

TEST_F(CliTest, OutputFileWrittenOnSuccessOnlyAndNeverPartially) {
  const std::string report = (tmp_ / "report.json").string();
  const Outcome ok = Run(With(kMlp, {"--format", "json", "-o", report}));
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "");
  EXPECT_EQ(ReadAll(report), ReadAll(fs::path(kSource) / "tests/golden/mlp.expected.json"));

  // --strict still writes the report, and exits 1.
  const std::string strict = (tmp_ / "strict.json").string();
  EXPECT_EQ(Run(With(kMlp, {"--format", "json", "--strict", "-o", strict})).status, 1);
  EXPECT_TRUE(fs::exists(strict));

  const std::vector<std::vector<std::string>> failing = {
      {"analyze", "tests/golden/mlp.json", "--dim", "n=x"},
      {"analyze", "tests/golden/mlp.json", "--dim", "n=4", "--device", "nope"},
      {"analyze", "tests/golden/missing.json"},
      {"analyze", "tests/golden/mlp.json", "--dim", "zz=4"},
  };
  int i = 0;
  for (const auto& args : failing) {
    const std::string out = (tmp_ / ("fail" + std::to_string(i++) + ".txt")).string();
    const Outcome o = Run(With(args, {"-o", out}));
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_FALSE(fs::exists(out)) << out;
  }
  // An existing file is left untouched by a failing run.
  const Outcome again = Run({"analyze", "tests/golden/missing.json", "-o", report});
  EXPECT_EQ(again.status, 2);
  EXPECT_EQ(ReadAll(report), ReadAll(fs::path(kSource) / "tests/golden/mlp.expected.json"));
  // No temporary files are left behind.
  for (const auto& entry : fs::directory_iterator(tmp_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
  // Writing into a missing directory is an error naming the path.
  const std::string nowhere = (tmp_ / "no" / "such" / "dir" / "r.txt").string();
  const Outcome w = Run(With(kMlp, {"-o", nowhere}));
  EXPECT_EQ(w.status, 2);
  EXPECT_NE(w.err.find(nowhere), std::string::npos) << w.err;
}

// ---- devices -------------------------------------------------------------------------------

TEST_F(CliTest, DevicesJsonListsEveryRequiredId) {
  const Outcome o = Run({"devices", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(o.out).get(doc), simdjson::SUCCESS);
  std::set<std::string> ids;
  const std::set<std::string> allowed = {"name",        "description",
                                         "memory_bytes", "dram_bytes_per_s",
                                         "peak_flops_per_s", "l2_bytes",
                                         "interconnect_bytes_per_s", "network_bytes_per_s",
                                         "interconnect_latency_s", "network_latency_s",
                                         "devices_per_node", "compute_units", "power_w",
                                         "price_usd", "price_source", "source"};
  const std::set<std::string> classes = {"fp64", "fp32", "tf32", "bf16",
                                         "fp16", "fp8",  "int8", "fp4"};
  const simdjson::dom::array device_rows = doc["devices"].get_array().value();
  for (simdjson::dom::element d : device_rows) {
    simdjson::dom::object dev = d.get_object().value();
    const std::string name(dev["name"].get_string().value());
    EXPECT_TRUE(ids.insert(name).second) << "duplicate " << name;
    for (const std::string& k : Keys(dev)) EXPECT_TRUE(allowed.count(k)) << name << ": " << k;
    for (const char* k : {"memory_bytes", "dram_bytes_per_s", "peak_flops_per_s", "source"}) {
      EXPECT_TRUE(Keys(dev).count(k)) << name << " lacks " << k;
    }
    EXPECT_GT(dev["dram_bytes_per_s"].get_double().value(), 0) << name;
    const simdjson::dom::object peaks = dev["peak_flops_per_s"].get_object().value();
    for (auto peak : peaks) {
      EXPECT_TRUE(classes.count(std::string(peak.key))) << name << ": " << peak.key;
      EXPECT_GT(peak.value.get_double().value(), 0) << name;
    }
    EXPECT_FALSE(std::string(dev["source"].get_string().value()).empty()) << name;
  }
  for (const char* id :
       {"a100-40g", "a100-80g", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "h20", "b200",
        "b300", "gb200", "gb10", "l40s", "l4", "a10g", "a40", "rtx-a6000", "rtx-3060",
        "rtx-3090", "rtx-4090", "rtx-5090", "rtx-6000-ada", "rtx-pro-6000", "jetson-agx-orin",
        "mi250x", "mi300x", "mi325x", "mi355x", "gaudi3", "tpu-v4", "tpu-v5e", "tpu-v5p",
        "tpu-v6e", "tpu-v7", "m1", "m1-pro", "m1-max", "m1-ultra", "m2", "m2-pro", "m2-max",
        "m2-ultra", "m3", "m3-pro", "m3-max", "m3-ultra", "m4", "m4-pro", "m4-max"}) {
    EXPECT_TRUE(ids.count(id)) << "missing device " << id;
  }
  const Outcome text = Run({"devices"});
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("h100-sxm"), std::string::npos);
  ExpectUsageError({"devices", "--format", "yaml"}, {"yaml"});
}

// Every built-in device analyses a model (the id is accepted end to end).
TEST_F(CliTest, EveryBuiltinDeviceIdIsAccepted) {
  for (const char* id : {"h100-sxm", "mi300x", "tpu-v5e", "m4-max", "rtx-4090", "gb10"}) {
    const Outcome o = Run({"analyze", "tests/golden/mlp.json", "--dim", "n=8", "--device", id,
                           "--format", "json"});
    EXPECT_EQ(o.status, 0) << id << ": " << o.err;
  }
}

}  // namespace
