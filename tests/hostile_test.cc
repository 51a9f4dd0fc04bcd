// The hostile-input corpus (tests/hostile/cases.txt, written by make_hostile.py), run through
// the real binary: every bad input ends with exit 2 and exactly one stderr line
// "opscope: error: ..." naming the file and the item, nothing on stdout, and no report file
// (-o is written through a temporary file and a rename); every run finishes within seconds
// and, outside sanitizer builds, within a 2 GiB address space (absurd counts are refused
// before they size an allocation). A few inputs too large to commit (16 MiB strings, a
// million-deep nesting, 100,000 same-named ONNX nodes) are generated here.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/run_binary.h"

#if defined(__SANITIZE_ADDRESS__)
#define OPSCOPE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPSCOPE_UNDER_ASAN 1
#endif
#endif

namespace {

namespace fs = std::filesystem;

const fs::path kSource = OPSCOPE_SOURCE_DIR;

#ifdef OPSCOPE_UNDER_ASAN
constexpr int kTimeLimitS = 60;  // sanitizers slow everything down
#else
constexpr int kTimeLimitS = 10;
#endif

using opscope::testing::ReadAll;

void WriteAll(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

struct Case {
  std::string file;      // relative to tests/hostile/
  int exit_status = 0;
  std::string fragment;  // must appear in the error line
  std::string args;      // see cases.txt
};

std::vector<Case> LoadCases() {
  std::vector<Case> cases;
  std::istringstream in(ReadAll(kSource / "tests/hostile/cases.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    // FILE | EXIT | FRAGMENT | ARGS; the fragment may itself contain " | " only if quoted
    // nowhere: split at the first two and the last separator.
    const size_t a = line.find(" | ");
    const size_t b = line.find(" | ", a + 3);
    const size_t c = line.rfind(" | ");
    if (a == std::string::npos || b == std::string::npos || c <= b) {
      ADD_FAILURE() << "bad line in cases.txt: " << line;
      continue;
    }
    Case k;
    k.file = Trim(line.substr(0, a));
    k.exit_status = std::stoi(line.substr(a + 3, b - a - 3));
    k.fragment = line.substr(b + 3, c - b - 3);
    if (k.fragment == " ") k.fragment.clear();
    k.fragment = Trim(k.fragment);
    k.args = Trim(line.substr(c + 3));
    cases.push_back(std::move(k));
  }
  return cases;
}

using opscope::testing::Outcome;

// Runs the binary from the source directory with a wall-clock limit and (outside sanitizer
// builds) an address-space limit.
Outcome RunOpscope(const std::vector<std::string>& args) {
  opscope::testing::RunOptions options;
  options.time_limit_s = kTimeLimitS;
#ifndef OPSCOPE_UNDER_ASAN
  options.address_space_bytes = uint64_t{2} << 30;
#endif
  return opscope::testing::RunOpscope(args, options);
}

// The argv of one case, without -o.
std::vector<std::string> CaseArgs(const Case& k) {
  const std::string path = "tests/hostile/" + k.file;
  std::vector<std::string> argv;
  if (k.args == "@ARGS") {
    std::string text = ReadAll(kSource / path);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty()) argv = Split(text, '\n');
    for (std::string& a : argv) {
      if (a == "@GRAPH") a = "tests/golden/matmul.json";
    }
    return argv;
  }
  const std::string top = k.file.substr(0, k.file.find('/'));
  if (top == "graph" || top == "onnx") argv = {"analyze", path};
  if (top == "hf") argv = {"llm", path};
  for (std::string a : Split(k.args, ' ')) {
    if (a.empty()) continue;
    if (a == "@FILE") a = path;
    if (a == "@GRAPH") a = "tests/golden/matmul.json";
    argv.push_back(a);
  }
  return argv;
}

// The checks every run shares: bad input is exit 2 with one error line and no report file.
void CheckOutcome(const Outcome& o, int want_status, const std::string& fragment,
                  const std::string& file_named, const fs::path& report) {
  ASSERT_FALSE(o.timed_out) << "ran longer than " << kTimeLimitS << " s";
  EXPECT_EQ(o.status, want_status) << "stderr: " << o.err.substr(0, 2000);
  if (want_status == 2) {
    EXPECT_EQ(o.err.rfind("opscope: error: ", 0), 0u) << o.err.substr(0, 2000);
    ASSERT_FALSE(o.err.empty());
    EXPECT_EQ(o.err.back(), '\n');
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "more than one line: " << o.err.substr(0, 2000);
    EXPECT_NE(o.err.find(fragment), std::string::npos)
        << "wanted '" << fragment << "' in: " << o.err.substr(0, 2000);
    if (!file_named.empty()) {
      // A device file that parses is named by its device name when the run fails on it.
      const bool named = o.err.find(file_named) != std::string::npos ||
                         (file_named.find("/device/") != std::string::npos &&
                          o.err.find("device 'hostile-gpu'") != std::string::npos);
      EXPECT_TRUE(named) << "the error does not name the file";
    }
    EXPECT_TRUE(o.out.empty()) << o.out.substr(0, 2000);
    EXPECT_FALSE(fs::exists(report)) << "a report was written on error";
  } else {
    // Success prints nothing on stderr but warnings ("partial: ..." when few nodes are costed).
    for (size_t at = 0; at < o.err.size(); at = o.err.find('\n', at) + 1) {
      EXPECT_EQ(o.err.compare(at, 18, "opscope: warning: "), 0) << o.err.substr(0, 2000);
      if (o.err.find('\n', at) == std::string::npos) break;
    }
  }
  // No temporary file is ever left behind.
  for (const auto& entry : fs::directory_iterator(report.parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
        << entry.path();
  }
}

class HostileTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    scratch_ = fs::temp_directory_path() /
               ("opscope_hostile_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_;
};

TEST_P(HostileTest, FailsCleanly) {
  const Case& k = GetParam();
  ASSERT_TRUE(fs::exists(kSource / "tests/hostile" / k.file)) << k.file;
  std::vector<std::string> args = CaseArgs(k);
  const fs::path report = scratch_ / "report" / "out.txt";
  fs::create_directories(report.parent_path());
  bool has_output = false;
  for (const std::string& a : args) has_output = has_output || a == "-o" || a == "--output";
  if (!has_output) {
    args.push_back("-o");
    args.push_back(report.string());
  }
  const Outcome o = RunOpscope(args);
  const std::string file = k.args == "@ARGS" ? "" : "tests/hostile/" + k.file;
  CheckOutcome(o, k.exit_status, k.fragment, file, report);
  if (k.exit_status != 2 && !has_output) {
    // A report was written, and its JSON form is valid JSON (UTF-8 names included).
    EXPECT_TRUE(fs::exists(report));
    std::vector<std::string> json_args = CaseArgs(k);
    json_args.insert(json_args.end(), {"--format", "json"});
    const Outcome j = RunOpscope(json_args);
    ASSERT_EQ(j.status, k.exit_status) << j.err;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(j.out).get(doc), simdjson::SUCCESS) << j.out.substr(0, 2000);
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.file;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostileTest, ::testing::ValuesIn(LoadCases()), CaseName);

TEST(HostileCorpus, CoversEveryInputKind) {
  int graph = 0, device = 0, hf = 0, onnx = 0, cli = 0;
  for (const Case& k : LoadCases()) {
    graph += k.file.starts_with("graph/");
    device += k.file.starts_with("device/");
    hf += k.file.starts_with("hf/");
    onnx += k.file.starts_with("onnx/");
    cli += k.file.starts_with("cli/");
  }
  EXPECT_GE(graph, 50);
  EXPECT_GE(device, 20);
  EXPECT_GE(hf, 20);
  EXPECT_GE(onnx, 20);
  EXPECT_GE(cli, 20);
}

// ---- Generated inputs: too large to commit ------------------------------------------------

class GeneratedTest : public HostileTest {};

// Runs `opscope analyze FILE [extra] -o REPORT` on generated contents.
Outcome AnalyzeGenerated(const fs::path& scratch, const std::string& name,
                         const std::string& contents, std::vector<std::string> extra,
                         const std::string& command = "analyze") {
  const fs::path file = scratch / name;
  WriteAll(file, contents);
  std::vector<std::string> args{command, file.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"-o", (scratch / "report.txt").string()});
  return RunOpscope(args);
}

const char* kTensorsHead = R"({"tensors": [{"name": "x", "shape": [4], "role": "input"})";

TEST_F(GeneratedTest, SixteenMebibyteName) {
  const std::string name(16 << 20, 'n');
  const std::string text = std::string(kTensorsHead) + R"(, {"name": ")" + name +
                           R"(", "shape": [4], "format": "f33"}], "nodes": []})";
  const Outcome o = AnalyzeGenerated(scratch_, "huge_name.json", text, {});
  CheckOutcome(o, 2, "unknown format 'f33'", "huge_name.json", scratch_ / "report.txt");
  EXPECT_LT(o.err.size(), 20u << 20);  // the message stays proportional, at worst
}

TEST_F(GeneratedTest, MillionDeepNesting) {
  const std::string text = std::string(1000000, '[') + std::string(1000000, ']');
  const Outcome o = AnalyzeGenerated(scratch_, "deep.json", text, {});
  // The graph reader stops at the root, which is not an object; device and config files are
  // parsed whole first, and say so in the one describer's words.
  CheckOutcome(o, 2, "deep.json: not an opscope graph (expected a JSON object with 'tensors' and "
                     "'nodes'), got an array", "deep.json", scratch_ / "report.txt");
  constexpr const char* kTooDeep = "deep.json: not valid JSON: nested too deeply";
  const Outcome d = RunOpscope({"analyze", "tests/golden/matmul.json", "--device",
                         (scratch_ / "deep.json").string(), "-o",
                         (scratch_ / "report.txt").string()});
  CheckOutcome(d, 2, kTooDeep, "deep.json", scratch_ / "report.txt");
  const Outcome h = AnalyzeGenerated(scratch_, "deep.json", text, {}, "llm");
  CheckOutcome(h, 2, kTooDeep, "deep.json", scratch_ / "report.txt");
}

TEST_F(GeneratedTest, DeepExpressionInAShape) {
  const std::string expr = std::string(100000, '(') + "n" + std::string(100000, ')');
  const std::string text = std::string(kTensorsHead) + R"(, {"name": "y", "shape": [")" + expr +
                           R"("]}], "nodes": []})";
  const Outcome o = AnalyzeGenerated(scratch_, "deep_expr.json", text, {});
  CheckOutcome(o, 2, "expression longer than 4096 characters", "deep_expr.json",
               scratch_ / "report.txt");
}

TEST_F(GeneratedTest, TwoHundredThousandNodeChainIsLinear) {
  std::string text = R"({"tensors": [{"name": "t0", "shape": ["n", 64], "role": "input"})";
  constexpr int kNodes = 200000;
  for (int i = 1; i <= kNodes; ++i) {
    text += R"(, {"name": "t)" + std::to_string(i) + R"(", "shape": ["n", 64]})";
  }
  text += R"(], "nodes": [)";
  for (int i = 1; i <= kNodes; ++i) {
    text += (i > 1 ? ", " : "") + std::string(R"({"name": "r)") + std::to_string(i) +
            R"(", "op": "Relu", "inputs": ["t)" + std::to_string(i - 1) + R"("], "outputs": ["t)" +
            std::to_string(i) + R"("]})";
  }
  text += "]}";
  const Outcome o = AnalyzeGenerated(scratch_, "chain.json", text, {"--dim", "n=8"});
  CheckOutcome(o, 0, "", "", scratch_ / "report.txt");
}

TEST_F(GeneratedTest, NemotronPatternLongerThanTheLayerLimit) {
  const std::string text = R"({"model_type": "nemotron_h", "hidden_size": 64, "vocab_size": 128,
    "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
    "mamba_num_heads": 4, "mamba_head_dim": 16, "ssm_state_size": 16, "n_groups": 1,
    "conv_kernel": 4, "expand": 1, "hybrid_override_pattern": ")" +
                           std::string(200000, 'M') + R"("})";
  const Outcome o = AnalyzeGenerated(scratch_, "pattern.json", text, {}, "llm");
  CheckOutcome(o, 2, "field 'hybrid_override_pattern': has 200000 layers, more than 1024",
               "pattern.json", scratch_ / "report.txt");
}

// Protobuf wire encoding, enough to write ONNX models with many nodes.
void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
std::string Field(uint32_t number, const std::string& payload) {
  std::string out;
  Varint(out, (uint64_t{number} << 3) | 2);
  Varint(out, payload.size());
  return out + payload;
}
std::string IntField(uint32_t number, uint64_t v) {
  std::string out;
  Varint(out, uint64_t{number} << 3);
  Varint(out, v);
  return out;
}
std::string ValueInfo(const std::string& name, const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += Field(1, IntField(1, static_cast<uint64_t>(d)));  // dim_value
  const std::string tensor_type = IntField(1, 1) + Field(2, shape);  // elem_type FLOAT, shape
  return Field(1, name) + Field(2, Field(1, tensor_type));          // name, type.tensor_type
}

TEST_F(GeneratedTest, HundredThousandSameNamedOnnxNodesIsLinear) {
  constexpr int kNodes = 100000;
  std::string graph;
  for (int i = 0; i < kNodes; ++i) {
    // NodeProto: input=1, output=2, name=3, op_type=4; every node is called "relu".
    graph += Field(1, Field(1, "t" + std::to_string(i)) + Field(2, "t" + std::to_string(i + 1)) +
                          Field(3, "relu") + Field(4, "Relu"));
  }
  graph += Field(2, "g");                                          // GraphProto.name
  graph += Field(11, ValueInfo("t0", {8, 64}));                    // input
  graph += Field(12, ValueInfo("t" + std::to_string(kNodes), {8, 64}));  // output
  const std::string model = IntField(1, 8) + Field(8, IntField(2, 17)) + Field(7, graph);
  const Outcome o = AnalyzeGenerated(scratch_, "same_names.onnx", model, {});
  CheckOutcome(o, 0, "", "", scratch_ / "report.txt");
  EXPECT_LT(o.seconds, kTimeLimitS / 2.0);
}

TEST_F(GeneratedTest, OnnxOutputDefinedTwiceInOneGraph) {
  std::string graph = Field(1, Field(1, "a") + Field(2, "y") + Field(3, "n1") + Field(4, "Relu")) +
                      Field(1, Field(1, "a") + Field(2, "y") + Field(3, "n2") + Field(4, "Relu"));
  graph += Field(2, "g") + Field(11, ValueInfo("a", {2})) + Field(12, ValueInfo("y", {2}));
  const std::string model = IntField(1, 8) + Field(8, IntField(2, 17)) + Field(7, graph);
  const Outcome o = AnalyzeGenerated(scratch_, "twice.onnx", model, {});
  CheckOutcome(o, 2, "node 'n2' (Relu): output 'y' is already defined", "twice.onnx",
               scratch_ / "report.txt");
}

TEST_F(GeneratedTest, ReportFileUntouchedOnError) {
  // An existing report is neither truncated nor replaced by a failed run.
  const fs::path report = scratch_ / "report.txt";
  WriteAll(report, "previous report\n");
  const Outcome o = RunOpscope({"analyze", "tests/hostile/graph/cycle.json", "-o", report.string()});
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(ReadAll(report), "previous report\n");
}

}  // namespace
