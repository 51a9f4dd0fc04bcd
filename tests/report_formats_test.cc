// The CSV, SVG and HTML reports through the binary: the CSV against a golden file and its
// numbers against closed forms and the JSON report, RFC 4180 quoting; the roofline SVG parsed
// as XML (python3's xml.etree) with one roof per class of the device and one mark per costed
// node that takes time; the HTML reports (one run's and a sweep's) loaded in headless
// Chromium: no console errors, no requests, the charts laid out, and sorting a table by time
// works both ways.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/run_binary.h"

namespace {

namespace fs = std::filesystem;

using opscope::testing::ReadAll;

class ReportFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("opscope_formats_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  // Runs a shell command line (another tool: python3, chromium) from the source directory;
  // returns its exit status.
  int Shell(const std::string& cmd) {
    const int raw = std::system(("cd '" + std::string(OPSCOPE_SOURCE_DIR) + "' && " + cmd).c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }
  // The standard output of `opscope ARGS...` (ARGS split at spaces), which must succeed.
  std::string Opscope(const std::string& args) { return Opscope(opscope::testing::Args(args)); }
  std::string Opscope(const std::vector<std::string>& args) {
    const opscope::testing::Outcome o = opscope::testing::RunOpscope(args);
    EXPECT_EQ(o.status, 0) << o.err;
    return o.out;
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
  // Records end in LF (awk, cut and grep read them); no CR anywhere.
  EXPECT_EQ(csv.find('\r'), std::string::npos);
  EXPECT_EQ(csv.back(), '\n');
  // Every record has the JSON node's fields, in order, with the same values.
  const std::string json = Opscope(kMlp + " --format json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "name,op,source_op,costed,bytes_read,bytes_written,bytes_weights,bytes_state,"
                  "bytes,bytes_link,flops,intensity,mma_class,time_s,bound");
  for (simdjson::dom::element n : doc["nodes"].get_array()) {
    ASSERT_TRUE(std::getline(lines, line));
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.emplace_back();
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
  const std::string csv = Opscope(std::vector<std::string>{"analyze", g.string(), "--format", "csv"});
  EXPECT_NE(csv.find("\n\"a,\"\"b\"\"\",Relu,"), std::string::npos) << csv;
}

// python3 parses the SVG (an XML error fails the script) and prints: roofs, distinct roof
// classes, node marks, ridge marks.
// What a report's roofline must draw, from its JSON: a roof per compute class of the device,
// and a mark per costed node that takes time.
std::pair<size_t, size_t> RoofsAndMarks(const std::string& json) {
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
  return {classes, marks};
}

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
    const auto [classes, marks] = RoofsAndMarks(json);
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

// Nothing in an HTML report can reach the network: no URLs but the SVG namespace, no external
// scripts, styles, images or fonts.
void ExpectNoExternalReferences(const std::string& html) {
  std::string scan = html;
  for (size_t p; (p = scan.find("http://www.w3.org/2000/svg")) != std::string::npos;) scan.erase(p, 26);
  for (const char* bad : {"http://", "https://", "src=", "href=", "url(", "@import", "//cdn"}) {
    EXPECT_EQ(scan.find(bad), std::string::npos) << bad;
  }
}

// The probe the test copy of a page carries in its <head>. A Content-Security-Policy that
// allows inline script and style and nothing else blocks every request the page makes (any
// scheme, file: too, fetch and WebSocket included, whether or not it would finish before
// load), and each block is an event. The probe records those, uncaught errors and
// console.error calls, and at load, their counts and the number of resources the page loaded,
// as attributes of <html> (which --dump-dom keeps). Its helpers, for the script run after the
// page's own, record their findings as data-probe-NAME attributes:
//   __shown(name, selector)    how many elements match and are laid out with an extent;
//   __svg(name, selector)      1 where the element is an SVG root laid out with an extent;
//   __sort(name, table, key)   the data-v values of the column whose header has data-key=key,
//                              in row order, before a click on that header (name-0), after it
//                              (name-1) and after a second click (name-2), and the header's
//                              class after each click (name-class-1, name-class-2).
const char kProbeHead[] = R"(
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<script>
window.__errors=[];window.addEventListener('error',function(e){__errors.push(String(e.message))});
var __ce=console.error;console.error=function(){__errors.push([].join.call(arguments,' '));__ce.apply(console,arguments)};
window.__blocked=[];document.addEventListener('securitypolicyviolation',function(e){__blocked.push(e.blockedURI)});
window.addEventListener('load',function(){var d=document.documentElement;
d.setAttribute('data-errors',String(__errors.length));d.setAttribute('data-error-messages',__errors.join(' | '));
d.setAttribute('data-blocked',String(__blocked.length));d.setAttribute('data-blocked-uris',__blocked.join(' '));
d.setAttribute('data-resources',String(performance.getEntriesByType('resource').length))});
function __mark(name,v){document.documentElement.setAttribute('data-probe-'+name,String(v))}
function __extent(e){var r=e.getBoundingClientRect();return r.width>0||r.height>0}
function __shown(name,sel){__mark(name,[].filter.call(document.querySelectorAll(sel),__extent).length)}
function __svg(name,sel){var e=document.querySelector(sel);__mark(name,e instanceof SVGSVGElement&&__extent(e)?1:0)}
function __sort(name,table,key){var t=document.querySelector(table),th=t.querySelector('thead th[data-key="'+key+'"]');
var i=[].indexOf.call(th.parentNode.children,th);
function col(){return [].map.call(t.tBodies[0].rows,function(r){return r.cells[i].getAttribute('data-v')}).join(' ')}
__mark(name+'-0',col());th.click();__mark(name+'-class-1',th.className);__mark(name+'-1',col());
th.click();__mark(name+'-class-2',th.className);__mark(name+'-2',col())}
</script>)";

// The value of a data-probe-NAME (or other) attribute of <html> in a dumped DOM.
std::string DomAttribute(const std::string& dom, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = dom.find(key);
  if (at == std::string::npos) return "<absent>";
  const size_t begin = at + key.size();
  return dom.substr(begin, dom.find('"', begin) - begin);
}

std::vector<double> Numbers(const std::string& list) {
  std::vector<double> v;
  std::istringstream in(list);
  for (std::string x; in >> x;) {
    char* end = nullptr;
    const double d = std::strtod(x.c_str(), &end);
    EXPECT_TRUE(*end == '\0' && std::isfinite(d)) << "data-v \"" << x << "\" is not a number";
    v.push_back(d);
  }
  return v;
}

// __sort's record: the column held at least `min_rows` numbers, not already in descending
// order; the first click put the same numbers largest first and marked the header
// sorted-desc, the second smallest first, marked sorted-asc.
void ExpectSortedBothWays(const std::string& dom, const std::string& name, size_t min_rows) {
  const std::vector<double> before = Numbers(DomAttribute(dom, "data-probe-" + name + "-0"));
  const std::vector<double> desc = Numbers(DomAttribute(dom, "data-probe-" + name + "-1"));
  const std::vector<double> asc = Numbers(DomAttribute(dom, "data-probe-" + name + "-2"));
  ASSERT_GE(before.size(), min_rows) << name;
  ASSERT_FALSE(std::is_sorted(before.begin(), before.end(), std::greater<>()))
      << name << ": the rows start largest first, so sorting shows nothing";
  EXPECT_NE(DomAttribute(dom, "data-probe-" + name + "-class-1").find("sorted-desc"), std::string::npos);
  EXPECT_NE(DomAttribute(dom, "data-probe-" + name + "-class-2").find("sorted-asc"), std::string::npos);
  EXPECT_TRUE(std::is_sorted(desc.begin(), desc.end(), std::greater<>())) << name << ": first click";
  EXPECT_TRUE(std::is_sorted(asc.begin(), asc.end())) << name << ": second click";
  std::vector<double> sorted = before;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(asc, sorted) << name << ": the rows are not those the page had";
  std::reverse(sorted.begin(), sorted.end());
  EXPECT_EQ(desc, sorted) << name << ": the rows are not those the page had";
}

class HtmlInChromium : public ReportFormats {
 protected:
  // Loads a test copy of `html` in headless Chromium: kProbeHead first in <head> after the
  // charset, `script` last in <body> (after the page's own script). Returns the DOM once
  // loaded, after checking that the page's script finished, nothing was logged as an error
  // and nothing was requested.
  std::string Load(const std::string& chromium, std::string html, const std::string& script) {
    const std::string charset = "<meta charset=\"utf-8\">";
    const size_t head = html.find(charset);
    EXPECT_NE(head, std::string::npos) << "no charset";
    html.insert(head == std::string::npos ? 0 : head + charset.size(), kProbeHead);
    html.insert(html.rfind("</body>"), "<script>" + script + "</script>");
    const fs::path page = tmp_ / "report.html", dom = tmp_ / "dom.html", log = tmp_ / "chromium.log";
    std::ofstream(page) << html;
    const std::string cmd = "timeout 120 '" + chromium +
                            "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                            "--disable-background-networking --disable-component-update --no-first-run "
                            "--user-data-dir='" + (tmp_ / "profile").string() + "' --dump-dom 'file://" +
                            page.string() + "' >'" + dom.string() + "' 2>'" + log.string() + "'";
    EXPECT_EQ(Shell(cmd), 0) << ReadAll(log);
    const std::string out = ReadAll(dom);
    EXPECT_NE(out.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
    EXPECT_EQ(DomAttribute(out, "data-errors"), "0") << "console errors: " << DomAttribute(out, "data-error-messages");
    EXPECT_EQ(DomAttribute(out, "data-blocked"), "0") << "requests: " << DomAttribute(out, "data-blocked-uris");
    EXPECT_EQ(DomAttribute(out, "data-resources"), "0") << "the page loaded resources";
    return out;
  }
};

TEST_F(HtmlInChromium, ReportLoadsOfflineShowsTheChartAndSortsByTime) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
  const std::string args = "llm llama-3.1-8b";
  const std::string html = Opscope(args + " --format html");
  ExpectNoExternalReferences(html);
  const std::string dom = Load(chromium, html,
                               "__svg('chart','#roofline > svg');__shown('roofs','#roofline line.roof');"
                               "__shown('marks','#roofline circle.node');__sort('time','#nodes','time_s')");
  // The chart is laid out with a roof per class of the device and a mark per costed node
  // that takes time.
  const std::string json = Opscope(args + " --format json");
  const auto [classes, marks] = RoofsAndMarks(json);
  EXPECT_EQ(DomAttribute(dom, "data-probe-chart"), "1") << "the roofline is not shown";
  EXPECT_EQ(DomAttribute(dom, "data-probe-roofs"), std::to_string(classes));
  EXPECT_EQ(DomAttribute(dom, "data-probe-marks"), std::to_string(marks));
  ExpectSortedBothWays(dom, "time", 300);
}

// A deployment's page (issue 12 item 5): Qwen3-235B-A22B on 8 × H200, TP=8, batch 64 shows
// its deployment block (split, links, per device, step time, communication, throughput), the
// dashed link roof, and a laid-out mark per collective that takes time.
TEST_F(HtmlInChromium, DeploymentPageShowsItsBlockAndPlotsTheCollectives) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
  const std::string args = "llm qwen3-vl-235b-a22b-thinking --tp 8 --device h200 --batch 64";
  const std::string html = Opscope(args + " --format html");
  ExpectNoExternalReferences(html);
  const std::string dom = Load(chromium, html,
                               "__shown('deployment','#deployment tr');"
                               "__shown('link-roofs','#roofline line.link-roof');"
                               "__shown('collectives','#roofline circle.node[data-link]')");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(Opscope(args + " --format json"));
  size_t collectives = 0;
  for (simdjson::dom::element n : doc["nodes"].get_array()) {
    if (n["bytes_link"].get_uint64().value() > 0 && n["time_s"].get_double().value() > 0) ++collectives;
  }
  EXPECT_GT(collectives, 2u * 94u);  // two all-reduces per layer, at least
  EXPECT_EQ(DomAttribute(dom, "data-probe-deployment"), "6");
  EXPECT_EQ(DomAttribute(dom, "data-probe-link-roofs"), "1");  // one link: the interconnect
  EXPECT_EQ(DomAttribute(dom, "data-probe-collectives"), std::to_string(collectives));
}

// What kSweepProbe found on a sweep page, against the sweep's JSON: both charts laid out with
// a line per series (device × recipe × deployment × context) and a mark per point (the sweeps
// tested chart every point: at most 8 contexts and 16 lines), a table row per point, and the
// table sorted both ways by step time and by tokens/s.
void CheckSweepPage(const std::string& json, const std::string& dom) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  std::set<std::string> series;
  size_t points = 0;
  for (simdjson::dom::element p : doc["points"].get_array()) {
    ++points;
    series.insert(std::string(p["device"].get_string().value()) + "|" +
                  std::string(p["recipe"].get_string().value()) + "|" + simdjson::minify(p["tp"]) + "|" +
                  simdjson::minify(p["ep"]) + "|" + simdjson::minify(p["pp"]) + "|" +
                  simdjson::minify(p["dp_attention"]) + "|" + simdjson::minify(p["context"]));
  }
  EXPECT_EQ(DomAttribute(dom, "data-probe-chart"), "1") << "the charts are not shown";
  for (const char* chart : {"throughput", "tradeoff"}) {
    EXPECT_EQ(DomAttribute(dom, std::string("data-probe-") + chart + "-lines"), std::to_string(series.size()))
        << chart;
    EXPECT_EQ(DomAttribute(dom, std::string("data-probe-") + chart + "-points"), std::to_string(points)) << chart;
  }
  EXPECT_EQ(DomAttribute(dom, "data-probe-rows"), std::to_string(points));
  ExpectSortedBothWays(dom, "step", points);
  ExpectSortedBothWays(dom, "tokens", points);
}

const char kSweepProbe[] =
    "__svg('chart','#sweep-chart > svg');"
    "__shown('throughput-lines','#sweep-chart g.series-throughput polyline.series');"
    "__shown('throughput-points','#sweep-chart g.series-throughput circle.point');"
    "__shown('tradeoff-lines','#sweep-chart g.series-tradeoff polyline.series');"
    "__shown('tradeoff-points','#sweep-chart g.series-tradeoff circle.point');"
    "__shown('rows','#points tbody tr');"
    "__sort('step','#points','step_time_s');__sort('tokens','#points','tokens_per_s')";

TEST_F(HtmlInChromium, SweepLoadsOfflineShowsTheChartsAndSortsByTime) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
  for (const std::string& args : {std::string("sweep llm llama-3.1-8b --batch 1,2,4,8 --context 1024,4096"),
                                 std::string("sweep llm qwen3-30b-a3b --batch 1..8 --context 4096 --tp 1,2 --ep 1,4")}) {
    SCOPED_TRACE(args);
    const std::string html = Opscope(args + " --format html");
    const std::string json = Opscope(args + " --format json");
    ExpectNoExternalReferences(html);
    CheckSweepPage(json, Load(chromium, html, kSweepProbe));
  }
}

// The plan page (issue 15): loads offline, draws the front (a mark per front point, the best
// marked), sorts its table, and moving a slider recomputes the front in the page: a tighter
// TPOT target drops points, and the device slider at 1 leaves only one-device points.
const char kPlanProbe[] =
    "__svg('chart','#plan-chart > svg');"
    "__shown('front-points','#plan-chart circle.front-point');"
    "__shown('best','#plan-chart circle.front-point.best');"
    "__shown('rows','#front tbody tr');"
    "__sort('x','#front','tokens_per_s_per_device');"
    "function __slide(id,v){var s=document.getElementById(id);s.value=v;s.dispatchEvent(new Event('input'))}"
    "__slide('s-tpot',2);__mark('tight-front',document.documentElement.getAttribute('data-front'));"
    "__mark('tight-rows',document.querySelectorAll('#front tbody tr').length);"
    "__slide('s-tpot',document.getElementById('s-tpot').max);__slide('s-ttft',document.getElementById('s-ttft').max);"
    "__mark('loose-front',document.documentElement.getAttribute('data-front'));"
    "__slide('s-gpus',1);__mark('one-front',document.documentElement.getAttribute('data-front'));"
    "__mark('one-devices',[].map.call(document.querySelectorAll('#front tbody tr'),function(r){return r.cells[3].getAttribute('data-v')}).join(' '));"
    "__slide('s-isl',0);__mark('short-front',document.documentElement.getAttribute('data-front'));";

TEST_F(HtmlInChromium, PlanPageRecomputesTheFrontOffline) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
  const std::string args =
      "plan llama-3.1-8b --device h200 --gpus 8 --isl 2048 --osl 256 --ttft-ms 800 --tpot-ms 8 --disagg";
  const std::string html = Opscope(args + " --format html");
  const std::string json = Opscope(args + " --format json");
  ExpectNoExternalReferences(html);
  const std::string dom = Load(chromium, html, kPlanProbe);
  simdjson::dom::parser parser;
  const size_t front = parser.parse(json)["plan"]["front"].get_array().size();
  ASSERT_GE(front, 3u);
  EXPECT_EQ(DomAttribute(dom, "data-probe-chart"), "1") << "the chart is not shown";
  EXPECT_EQ(DomAttribute(dom, "data-probe-front-points"), std::to_string(front));
  EXPECT_EQ(DomAttribute(dom, "data-probe-best"), "1");
  EXPECT_EQ(DomAttribute(dom, "data-probe-rows"), std::to_string(front));
  ExpectSortedBothWays(dom, "x", front);
  // The TPOT stops are 5 ms, 8 ms (the request's), 10 ms, ...: at the third (10 ms) the page
  // recomputes the front and the table with it; with no targets at all the front changes again.
  const std::string tight = DomAttribute(dom, "data-probe-tight-front");
  const std::string loose = DomAttribute(dom, "data-probe-loose-front");
  EXPECT_NE(tight, "<absent>");
  EXPECT_EQ(DomAttribute(dom, "data-probe-tight-rows"), tight) << "the table follows the front";
  EXPECT_NE(loose, tight) << "lifting the targets did not change the front";
  // One device: every front point uses exactly one.
  const std::string one = DomAttribute(dom, "data-probe-one-devices");
  ASSERT_FALSE(one.empty());
  for (double d : Numbers(one)) EXPECT_EQ(d, 1.0) << one;
  EXPECT_NE(DomAttribute(dom, "data-probe-one-front"), loose);
  EXPECT_NE(DomAttribute(dom, "data-probe-short-front"), "0");
}

}  // namespace
