// Names as people type them (issue 12, deliverable 7): devices, formats, llama.cpp file types
// and presets matched case-insensitively with the common aliases, "did you mean" for a near
// miss (exit 2), and a directory argument read as a model folder — through the library and
// through the binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "support/spelling.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

const std::string kSource = OPSCOPE_SOURCE_DIR;
const std::string kBinary = OPSCOPE_BINARY;

TEST(Spelling, FoldAndDistance) {
  EXPECT_EQ(FoldName("H100_SXM"), FoldName("h100-sxm"));
  EXPECT_EQ(FoldName("RTX 4090"), "rtx4090");
  EXPECT_EQ(EditDistance("h100-sxn", "h100-sxm"), 1u);  // one substitution
  EXPECT_EQ(EditDistance("", "abc"), 3u);                // three insertions
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);      // the textbook pair
  const std::string_view known[] = {"h100-sxm", "h100-pcie", "h200"};
  EXPECT_EQ(DidYouMean("h100-sxn", known), "; did you mean 'h100-sxm'?");
  EXPECT_EQ(DidYouMean("quantum-abacus", known), "");
}

TEST(PresetNames, CaseOrganisationAndFolding) {
  using import::hf::FindPreset;
  for (const char* typed : {"llama-3.1-8b", "Llama-3.1-8B", "meta-llama/Llama-3.1-8B",
                            "LLAMA-3.1-8B", "llama3.1-8b"}) {
    const import::hf::Preset* p = FindPreset(typed);
    ASSERT_NE(p, nullptr) << typed;
    EXPECT_EQ(p->name, "llama-3.1-8b") << typed;
  }
  EXPECT_EQ(FindPreset("Qwen/Qwen3-30B-A3B")->name, "qwen3-30b-a3b");
  EXPECT_EQ(FindPreset("deepseek-ai/DeepSeek-V3")->name, "deepseek-v3");
  EXPECT_EQ(FindPreset("llama-3.1-8c"), nullptr);
  EXPECT_EQ(import::hf::PresetHint("llama-3.1-8c"), "; did you mean 'llama-3.1-8b'?");
}

TEST(FileTypeNames, CaseInsensitive) {
  using import::hf::GgufFileType;
  EXPECT_EQ(import::hf::ParseGgufFileType("Q4_K_M"), GgufFileType::kQ4KM);
  EXPECT_EQ(import::hf::ParseGgufFileType("q4-k-m"), GgufFileType::kQ4KM);
  EXPECT_EQ(import::hf::ParseGgufFileType("Q8_0"), GgufFileType::kQ8_0);
  EXPECT_EQ(import::hf::ParseGgufFileType("MXFP4_MOE"), GgufFileType::kMxfp4Moe);  // gpt-oss files
  EXPECT_FALSE(import::hf::ParseGgufFileType("q4_k_x").has_value());
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Outcome RunOpscope(const std::vector<std::string>& args) {
  const fs::path tmp = fs::temp_directory_path() / ("opscope_names_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::string cmd = "cd " + Quote(kSource) + " && " + Quote(kBinary);
  for (const std::string& a : args) cmd += " " + Quote(a);
  cmd += " >" + Quote((tmp / "out").string()) + " 2>" + Quote((tmp / "err").string()) + " </dev/null";
  const int raw = std::system(cmd.c_str());
  Outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  o.out = ReadAll(tmp / "out");
  o.err = ReadAll(tmp / "err");
  fs::remove_all(tmp);
  return o;
}

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(NamesCli, DeviceAliasRunsAndSaysSo) {
  const Outcome o = RunOpscope({"llm", "llama-3.1-8b", "--device", "h100"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(Has(o.out, "opscope: llama-3.1-8b on h100-sxm (NVIDIA H100")) << o.out;
  EXPECT_TRUE(Has(o.out, "device 'h100' is h100-sxm (NVIDIA H100")) << o.out;
  const Outcome upper = RunOpscope({"llm", "llama-3.1-8b", "--device", "H100-SXM"});
  ASSERT_EQ(upper.status, 0) << upper.err;
  EXPECT_TRUE(Has(upper.out, "on h100-sxm")) << upper.out;
}

TEST(NamesCli, UnknownNamesSayDidYouMean) {
  const Outcome device = RunOpscope({"llm", "llama-3.1-8b", "--device", "h100-sxn"});
  EXPECT_EQ(device.status, 2);
  EXPECT_TRUE(device.err.starts_with("opscope: error: unknown device 'h100-sxn'; did you mean "
                                     "'h100-sxm'?"))
      << device.err;
  const Outcome weights = RunOpscope({"llm", "llama-3.1-8b", "--weights", "nvfp5"});
  EXPECT_EQ(weights.status, 2);
  EXPECT_TRUE(weights.err.starts_with("opscope: error: option '--weights': unknown format "
                                      "'nvfp5'; did you mean 'nvfp4'?"))
      << weights.err;
  const Outcome file_type = RunOpscope({"llm", "llama-3.1-8b", "--weights", "q4_k_x"});
  EXPECT_EQ(file_type.status, 2);
  EXPECT_TRUE(Has(file_type.err, "did you mean 'q4_k_m'?")) << file_type.err;
  const Outcome model = RunOpscope({"llm", "llama-3.1-8c"});
  EXPECT_EQ(model.status, 2);
  EXPECT_TRUE(Has(model.err, "model 'llama-3.1-8c': neither a built-in preset")) << model.err;
  EXPECT_TRUE(Has(model.err, "did you mean 'llama-3.1-8b'?")) << model.err;
}

TEST(NamesCli, FormatsPresetsAndFileTypesAsTyped) {
  const Outcome fp8 = RunOpscope({"llm", "Llama-3.1-8B", "--weights", "fp8", "--kv-dtype", "FP8"});
  ASSERT_EQ(fp8.status, 0) << fp8.err;
  EXPECT_TRUE(Has(fp8.out, "opscope: llama-3.1-8b on h100-sxm")) << fp8.out;
  EXPECT_TRUE(Has(fp8.out, "recipe           weights fp8_e4m3 (layer matrices) + bf16")) << fp8.out;
  EXPECT_TRUE(Has(fp8.out, "KV cache fp8_e4m3")) << fp8.out;
  const Outcome q4 = RunOpscope({"llm", "meta-llama/Llama-3.1-8B", "--weights", "Q4_K_M", "--device", "M4-Max"});
  ASSERT_EQ(q4.status, 0) << q4.err;
  EXPECT_TRUE(Has(q4.out, "weights q4_k_m (llama.cpp file type)")) << q4.out;
  const Outcome nv = RunOpscope({"llm", "llama-3.1-8b", "--weights", "NVFP4", "--activations", "NVFP4",
                          "--device", "b200"});
  ASSERT_EQ(nv.status, 0) << nv.err;
  EXPECT_TRUE(Has(nv.out, "weights nvfp4 (layer matrices) + bf16, activations nvfp4")) << nv.out;
}

TEST(NamesCli, DirectoryArgumentIsAModelFolder) {
  const Outcome o = RunOpscope({"llm", "tests/fixtures/hf/qwen3-30b-a3b-nvfp4/", "--device", "b200"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(Has(o.out, "opscope: qwen3-30b-a3b-nvfp4 on b200")) << o.out;
  EXPECT_TRUE(Has(o.out, "weights nvfp4 (Linear modules, from hf_quant_config.json) + bf16")) << o.out;
  EXPECT_TRUE(Has(o.out, "KV cache fp8_e4m3")) << o.out;
  // No index: nothing to cross-check; the one warning is the launch overhead (a 3B-active MoE
  // step on a B200 averages well under ~5 us per node).
  EXPECT_TRUE(o.err.starts_with("opscope: warning: ") && Has(o.err, "launch overhead not modelled") &&
              std::count(o.err.begin(), o.err.end(), '\n') == 1)
      << o.err;
  // A config.json given by path reads its folder's hf_quant_config.json too.
  const Outcome file = RunOpscope({"llm", "tests/fixtures/hf/qwen3-30b-a3b-nvfp4/config.json", "--device", "b200"});
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_TRUE(Has(file.out, "weights nvfp4 (Linear modules, from hf_quant_config.json)")) << file.out;
  // The index agrees with a bf16 checkpoint: no warning.
  const Outcome llama = RunOpscope({"llm", "tests/fixtures/hf/llama-3.1-8b"});
  ASSERT_EQ(llama.status, 0) << llama.err;
  EXPECT_EQ(llama.err, "");
  const Outcome missing = RunOpscope({"llm", "tests/fixtures/hf"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(Has(missing.err, "tests/fixtures/hf: no config.json in this folder")) << missing.err;
}

TEST(NamesCli, AnExistingFolderWinsOverAPresetSpelledAlike) {
  // A snapshot folder named like a preset (".../Llama-3.1-8B/") is read as the folder; here
  // it holds Qwen3-8B's config, so the report names the folder and counts Qwen3-8B.
  const fs::path dir = fs::temp_directory_path() / ("opscope_names_dir_" + std::to_string(::getpid())) /
                       "Llama-3.1-8B";
  fs::create_directories(dir);
  fs::copy_file(kSource + "/data/presets/qwen3-8b.json", dir / "config.json",
                fs::copy_options::overwrite_existing);
  const Outcome o = RunOpscope({"llm", dir.string()});
  fs::remove_all(dir.parent_path());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(Has(o.out, "opscope: Llama-3.1-8B on h100-sxm")) << o.out;
  EXPECT_TRUE(Has(o.out, "8.19 G total")) << o.out;  // Qwen3-8B's 8.19 G, not Llama's 8.03 G
}

TEST(NamesCli, IndexDisagreementWarnsOnStderr) {
  const fs::path dir = fs::temp_directory_path() / ("opscope_names_idx_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kSource + "/data/presets/llama-3.1-8b.json", dir / "config.json",
                fs::copy_options::overwrite_existing);
  // 2 GB more than the 16060522496 bytes Llama-3.1-8B's tensors hold.
  std::ofstream(dir / "model.safetensors.index.json") << R"({"metadata": {"total_size": 18060522496}})";
  const Outcome o = RunOpscope({"llm", dir.string()});
  fs::remove_all(dir);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(o.err.starts_with("opscope: warning: ")) << o.err;
  EXPECT_TRUE(Has(o.err, "metadata.total_size is 18060522496 bytes")) << o.err;
  EXPECT_TRUE(Has(o.err, "come to 16060522496 bytes")) << o.err;
}

}  // namespace
}  // namespace opscope
