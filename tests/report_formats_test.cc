// The CSV, SVG and HTML reports through the binary: the CSV against a golden file and its
// numbers against closed forms and the JSON report, RFC 4180 quoting; the roofline SVG parsed
// as XML (python3's xml.etree) with one roof per class of the device and one mark per costed
// node that takes time; the HTML loaded in headless Chromium: no console errors, no requests,
// the chart present, and sorting the node table by time works.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ReportFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("opscope_formats_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // Runs a shell command line from the source directory; returns its exit status.
  int Shell(const std::string& cmd) {
    const int raw = std::system(("cd '" + std::string(OPSCOPE_SOURCE_DIR) + "' && " + cmd).c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }
  std::string Opscope(const std::string& args) {
    const fs::path out = tmp_ / "out";
    EXPECT_EQ(Shell(std::string("'") + OPSCOPE_BINARY + "' " + args + " >'" + out.string() + "'"), 0) << args;
    return ReadAll(out);
  }
  fs::path tmp_;
};

const std::string kMlp = "analyze tests/golden/mlp.json --device tests/golden/device.json --dim n=4";

TEST_F(ReportFormats, CsvGoldenClosedFormsAndJsonAgree) {
  const std::string csv = Opscope(kMlp + " --format csv");
  EXPECT_EQ(csv, ReadAll(fs::path(OPSCOPE_SOURCE_DIR) / "tests/golden/mlp.expected.csv"));
  // gate_up: h [4, 256] bf16 + int4_g128 weight [1024, 256] (n·d/2 + 2·n·d/128) + out [4, 1024].
  EXPECT_NE(csv.find("gate_up,Linear,Linear,true," + std::to_string(4 * 256 * 2 + 1024 * 256 / 2 + 2 * 1024 * 256 / 128) +
                     "," + std::to_string(4 * 1024 * 2) + "," + std::to_string(1024 * 256 / 2 + 2 * 1024 * 256 / 128) +
                     ",0,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("," + std::to_string(2 * 4 * 256 * 1024) + ","), std::string::npos);  // 2·M·K·N
  EXPECT_NE(csv.find("\r\n"), std::string::npos);  // RFC 4180 records
  // Every record has the JSON node's fields, in order, with the same values.
  const std::string json = Opscope(kMlp + " --format json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "name,op,source_op,costed,bytes_read,bytes_written,bytes_weights,bytes_state,"
                  "bytes,bytes_link,flops,intensity,mma_class,time_s,bound\r");
  for (simdjson::dom::element n : doc["nodes"].get_array()) {
    ASSERT_TRUE(std::getline(lines, line));
    std::vector<std::string> f;
    std::stringstream ls(line.substr(0, line.size() - 1));
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (line.size() > 1 && line[line.size() - 2] == ',') f.emplace_back();
    ASSERT_EQ(f.size(), 15u) << line;
    EXPECT_EQ(f[0], std::string(n["name"].get_string().value()));
    EXPECT_EQ(f[4], std::to_string(n["bytes_read"].get_uint64().value()));
    EXPECT_EQ(f[9], std::to_string(n["bytes_link"].get_uint64().value()));
    EXPECT_EQ(f[10], std::to_string(n["flops"].get_uint64().value()));
    if (n["intensity"].is_null()) {
      EXPECT_EQ(f[11], "");
    } else {
      EXPECT_EQ(std::strtod(f[11].c_str(), nullptr), n["intensity"].get_double().value());
    }
    EXPECT_EQ(std::strtod(f[13].c_str(), nullptr), n["time_s"].get_double().value());
  }
}

TEST_F(ReportFormats, CsvQuotesCommasQuotesAndNewlines) {
  const fs::path g = tmp_ / "q.json";
  std::ofstream(g) << R"({"name": "q", "dims": {},
    "tensors": [{"name": "x", "shape": [4, 8], "format": "f32", "role": "input"},
                {"name": "y", "shape": [4, 8], "format": "f32"}],
    "nodes": [{"name": "a,\"b\"", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]})";
  const std::string csv = Opscope("analyze '" + g.string() + "' --format csv");
  EXPECT_NE(csv.find("\r\n\"a,\"\"b\"\"\",Relu,"), std::string::npos) << csv;
}

// python3 parses the SVG (an XML error fails the script) and prints: roofs, distinct roof
// classes, node marks, ridge marks.
std::string SvgCounts(const fs::path& svg) {
  const std::string cmd =
      "python3 -c \"import sys, xml.etree.ElementTree as E\n"
      "ns='{http://www.w3.org/2000/svg}'\n"
      "r=E.parse(sys.argv[1]).getroot()\n"
      "assert r.tag==ns+'svg' and r.get('width')=='1200' and r.get('height')=='800' and r.get('version')=='1.1'\n"
      "roofs=[e for e in r.iter(ns+'line') if e.get('class')=='roof']\n"
      "marks=[e for e in r.iter(ns+'circle') if e.get('class')=='node']\n"
      "ridges=[e for e in r.iter(ns+'circle') if e.get('class')=='ridge']\n"
      "bad=[e for e in r.iter() if any(k.endswith('href') for k in e.keys())]\n"
      "print(len(roofs), len(set(e.get('data-class') for e in roofs)), len(marks), len(ridges), len(bad))\" '" +
      svg.string() + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) {
    EXPECT_EQ(::pclose(p), 0) << "the SVG is not well-formed XML";
  }
  return out;
}

TEST_F(ReportFormats, SvgIsXmlWithARoofPerClassAndAMarkPerCostedNode) {
  for (const std::string& args : {std::string("llm llama-3.1-8b"), std::string("llm qwen3-30b-a3b --device b200"),
                                   kMlp}) {
    const std::string svg = Opscope(args + " --format svg");
    const fs::path file = tmp_ / "r.svg";
    std::ofstream(file) << svg;
    const std::string json = Opscope(args + " --format json");
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(json);
    size_t classes = 0, marks = 0;
    for (auto field : doc["device"]["peak_flops_per_s"].get_object()) {
      (void)field;
      ++classes;
    }
    for (simdjson::dom::element n : doc["nodes"].get_array()) {
      if (n["costed"].get_bool().value() && n["time_s"].get_double().value() > 0) ++marks;
    }
    const std::string expect = std::to_string(classes) + " " + std::to_string(classes) + " " +
                               std::to_string(marks) + " " + std::to_string(classes) + " 0\n";
    EXPECT_EQ(SvgCounts(file), expect) << args;
    EXPECT_EQ(svg.find("http://", svg.find("xmlns") + 40), std::string::npos) << "external reference";
    EXPECT_EQ(Opscope(args + " --format svg"), svg) << "not deterministic";
  }
  // A roof is labelled with its class and peak.
  const std::string h100 = Opscope("llm llama-3.1-8b --format svg");
  EXPECT_NE(h100.find(">bf16 989 TFLOP/s<"), std::string::npos);
}

std::string FindChromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(c)) return c;
  }
  return "";
}

TEST_F(ReportFormats, HtmlLoadsOfflineShowsTheChartAndSortsByTime) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
  std::string html = Opscope("llm llama-3.1-8b --format html");
  // Nothing in the file can reach the network: no URLs but the SVG namespace, no external
  // scripts, styles, images or fonts.
  std::string scan = html;
  for (size_t p; (p = scan.find("http://www.w3.org/2000/svg")) != std::string::npos;) scan.erase(p, 26);
  for (const char* bad : {"http://", "https://", "src=", "href=", "url(", "@import", "//cdn"}) {
    EXPECT_EQ(scan.find(bad), std::string::npos) << bad;
  }
  // The test copy records errors and the page's resource loads, then clicks the time header
  // once the page's own script has run.
  const std::string probe_head =
      "<script>window.__errors=[];window.addEventListener('error',function(e){__errors.push(String(e.message))});"
      "var __ce=console.error;console.error=function(){__errors.push([].join.call(arguments,' '));__ce.apply(console,arguments)};"
      "window.addEventListener('load',function(){var d=document.documentElement;"
      "d.setAttribute('data-errors',String(__errors.length));"
      "d.setAttribute('data-resources',String(performance.getEntriesByType('resource').length))});</script>";
  const std::string click = "<script>document.querySelector('#nodes th[data-key=time_s]').click();</script>";
  html.insert(html.find("<head>") + 6, probe_head);
  html.insert(html.rfind("</body>"), click);
  const fs::path page = tmp_ / "report.html", dom = tmp_ / "dom.html", log = tmp_ / "chromium.log";
  std::ofstream(page) << html;
  const std::string cmd = "timeout 120 '" + chromium +
                          "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                          "--disable-background-networking --disable-component-update --no-first-run "
                          "--user-data-dir='" + (tmp_ / "profile").string() + "' --dump-dom 'file://" +
                          page.string() + "' >'" + dom.string() + "' 2>'" + log.string() + "'";
  ASSERT_EQ(Shell(cmd), 0) << ReadAll(log);
  const std::string out = ReadAll(dom);
  EXPECT_NE(out.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  EXPECT_NE(out.find("data-errors=\"0\""), std::string::npos) << "console errors";
  EXPECT_NE(out.find("data-resources=\"0\""), std::string::npos) << "the page loaded resources";
  EXPECT_NE(out.find("<svg"), std::string::npos);
  EXPECT_NE(out.find("class=\"roof\""), std::string::npos);
  EXPECT_NE(out.find("class=\"node\""), std::string::npos);
  EXPECT_NE(out.find("sorted-desc"), std::string::npos);
  // The node rows now run from the longest time down.
  const size_t begin = out.find("<tbody>", out.find("id=\"nodes\""));
  const size_t end = out.find("</tbody>", begin);
  const std::string body = out.substr(begin, end - begin);
  const std::regex time_cell("<tr><td class=\"n\" data-v=\"[^\"]*\">[^<]*</td><td>[^<]*</td><td>[^<]*</td>"
                             "<td class=\"n\" data-v=\"([^\"]*)\">");
  std::vector<double> times;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), time_cell); it != std::sregex_iterator(); ++it) {
    times.push_back(std::strtod((*it)[1].str().c_str(), nullptr));
  }
  ASSERT_GT(times.size(), 300u);
  for (size_t i = 1; i < times.size(); ++i) ASSERT_GE(times[i - 1], times[i]) << "row " << i;
}

}  // namespace
