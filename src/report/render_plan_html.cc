// The plan's interactive offline page (`opscope plan --format html`): the front charted, the
// sortable table, and sliders for ISL, OSL, the TTFT and TPOT targets and the device count.
// The page embeds the planner's grid (PlanResult::grid: every deployed split at a ladder of
// batches, per ISL × OSL cell) and redoes in the browser what the search does with it: keep
// what meets the targets on at most N devices (aggregated replicas; with --disagg, prefill and
// decode pools), then the Pareto front of tokens/s per device against tokens/s per user.
// Nothing is loaded: the data is a JSON script element, the chart SVG drawn by the inline
// script.
#include <algorithm>
#include <cstdio>

#include "report/html_page.h"
#include "report/json_writer.h"
#include "report/render.h"
#include "support/human_units.h"

namespace opscope::report {

using plan::PlanPoint;
using plan::PlanResult;

namespace {

std::string Fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Exact(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The data the script reads: the grid, the request, and the search's own front (shown until a
// slider moves).
std::string PageData(const PlanResult& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("gpus").Value(r.gpus);
  w.Key("disagg").Value(r.grid && r.grid->link_bytes_per_s > 0 &&
                        std::any_of(r.front.begin(), r.front.end(),
                                    [](const PlanPoint& p) { return p.mode == plan::Mode::kDisagg; }));
  w.Key("ttft_s").Value(r.targets.ttft_s);
  w.Key("tpot_s").Value(r.targets.tpot_s);
  w.Key("usd_per_gpu_hour").Value(r.usd_per_gpu_hour);
  w.Key("power_w").Value(r.power_w);
  w.Key("isls").BeginArray();
  std::vector<int64_t> isls, osls;
  if (r.grid) {
    for (const plan::GridCell& c : r.grid->cells) {
      if (std::find(isls.begin(), isls.end(), c.isl) == isls.end()) isls.push_back(c.isl);
      if (std::find(osls.begin(), osls.end(), c.osl) == osls.end()) osls.push_back(c.osl);
    }
  }
  for (int64_t v : isls) w.Value(v);
  w.EndArray();
  w.Key("osls").BeginArray();
  for (int64_t v : osls) w.Value(v);
  w.EndArray();
  w.Key("configs").BeginArray();
  if (r.grid) {
    for (size_t k = 0; k < r.grid->configs.size(); ++k) {
      w.BeginArray().Value(r.grid->configs[k]).Value(r.grid->config_devices[k]);
      w.Value(r.grid->config_recipes[k]).EndArray();
    }
  }
  w.EndArray();
  // Per cell: [config, batch, ttft_s, tpot_s, e2e_s, kv_transfer_s] per candidate.
  w.Key("cells").BeginArray();
  if (r.grid) {
    for (const plan::GridCell& c : r.grid->cells) {
      w.BeginArray();
      for (const plan::GridCandidate& g : c.candidates) {
        w.BeginArray().Value(static_cast<int64_t>(g.config)).Value(g.batch).Value(g.ttft_s);
        w.Value(g.tpot_s).Value(g.e2e_s).Value(g.kv_transfer_s).EndArray();
      }
      w.EndArray();
    }
  }
  w.EndArray();
  w.EndObject();
  // Inside <script>: no "</" may close it early.
  std::string escaped;
  for (char c : out) {
    if (c == '<') {
      escaped += "\\u003c";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string Row(const PlanPoint& p, bool best) {
  std::string cfg = HtmlEscape(PlanConfigLabel(p));
  auto num = [](double v, const std::string& text) {
    return "<td class=\"n\" data-v=\"" + Exact(v) + "\">" + text + "</td>";
  };
  std::string row = std::string("<tr") + (best ? " class=\"best\"" : "") + "><td>" +
                    plan::ModeName(p.mode) + "</td><td>" + cfg + "</td><td>" +
                    HtmlEscape(p.recipe) + "</td>" + num(static_cast<double>(p.gpus), std::to_string(p.gpus)) +
                    num(p.ttft_s, HumanSeconds(p.ttft_s)) + num(p.tpot_s, HumanSeconds(p.tpot_s)) +
                    num(p.tokens_per_s_per_device, Fixed(p.tokens_per_s_per_device, 1)) +
                    num(p.tokens_per_s_per_user, Fixed(p.tokens_per_s_per_user, 1)) +
                    num(p.usd_per_mtoken.value_or(-1), p.usd_per_mtoken ? Fixed(*p.usd_per_mtoken, 3) : "-") +
                    num(p.tokens_per_joule.value_or(-1), p.tokens_per_joule ? Fixed(*p.tokens_per_joule, 2) : "-") +
                    "<td class=\"hint\">" + HtmlEscape(p.hint) + "</td></tr>\n";
  return row;
}

// The search's front as the script's initial points.
std::string FrontData(const PlanResult& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginArray();
  for (size_t i = 0; i < r.front.size(); ++i) {
    const PlanPoint& p = r.front[i];
    w.BeginObject();
    w.Key("mode").Value(plan::ModeName(p.mode));
    w.Key("label").Value(PlanConfigLabel(p));
    w.Key("recipe").Value(p.recipe);
    w.Key("gpus").Value(p.gpus);
    w.Key("ttft").Value(p.ttft_s);
    w.Key("tpot").Value(p.tpot_s);
    w.Key("x").Value(p.tokens_per_s_per_device);
    w.Key("y").Value(p.tokens_per_s_per_user);
    w.Key("tps").Value(p.tokens_per_s);
    w.Key("hint").Value(p.hint);
    w.EndObject();
  }
  w.EndArray();
  std::string escaped;
  for (char c : out) escaped += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return escaped;
}

const char kPageStyle[] = R"(<style>
#controls { display: grid; grid-template-columns: 160px 320px 200px; gap: 6px 14px; align-items: center; font-size: 14px; margin: 12px 0; }
#controls output { font-variant-numeric: tabular-nums; }
#plan-chart svg { border: 1px solid #eee; max-width: 100%; height: auto; }
tr.best td { background: #fff4d6; font-weight: bold; }
td.hint { font-family: monospace; font-size: 11px; white-space: normal; max-width: 520px; }
</style>
)";

// The page's script: the sliders, the filtering and front, the chart and the table.
const char kPageScript[] = R"JS(<script>
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("plan-data").textContent);
  var F0 = JSON.parse(document.getElementById("plan-front").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var TTFT = [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, Infinity];
  var TPOT = [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5, Infinity];
  function withValue(list, v) {
    if (v === null) return list;
    if (list.indexOf(v) < 0) { list.push(v); list.sort(function (a, b) { return a - b; }); }
    return list;
  }
  TTFT = withValue(TTFT, D.ttft_s); TPOT = withValue(TPOT, D.tpot_s);
  var el = function (id) { return document.getElementById(id); };
  function setup(id, max, value) { var s = el(id); s.min = 0; s.max = max; s.step = 1; s.value = value; }
  setup("s-isl", Math.max(0, D.isls.length - 1), Math.floor(D.isls.length / 2));
  setup("s-osl", Math.max(0, D.osls.length - 1), Math.floor(D.osls.length / 2));
  setup("s-ttft", TTFT.length - 1, D.ttft_s === null ? TTFT.length - 1 : TTFT.indexOf(D.ttft_s));
  setup("s-tpot", TPOT.length - 1, D.tpot_s === null ? TPOT.length - 1 : TPOT.indexOf(D.tpot_s));
  var g = el("s-gpus"); g.min = 1; g.max = D.gpus; g.step = 1; g.value = D.gpus;
  function secs(v) {
    if (!isFinite(v)) return "none";
    return v >= 1 ? v.toFixed(2) + " s" : (v * 1e3).toFixed(v >= 0.01 ? 1 : 2) + " ms";
  }
  function state() {
    return { isl: +el("s-isl").value, osl: +el("s-osl").value, ttft: TTFT[+el("s-ttft").value],
             tpot: TPOT[+el("s-tpot").value], n: +el("s-gpus").value };
  }
  function label(k, b) { return D.configs[k][0] + ", batch " + b; }
  // The candidates of the cell that meet the targets on at most n devices, and their front.
  function compute(st) {
    var cell = D.cells[st.isl * D.osls.length + st.osl] || [], osl = D.osls[st.osl];
    var pts = [], pre = [], dec = [];
    cell.forEach(function (c) {
      var k = c[0], d = D.configs[k][1], b = c[1], ttft = c[2], tpot = c[3], e2e = c[4], kv = c[5];
      if (d > st.n) return;
      if (ttft <= st.ttft && tpot <= st.tpot) {
        var reps = Math.floor(st.n / d), rps = b / e2e;
        pts.push({ mode: "agg", label: reps + " x (" + label(k, b) + ")", recipe: D.configs[k][2],
                   gpus: reps * d, ttft: ttft, tpot: tpot, x: rps * osl / d, y: 1 / tpot, tps: reps * rps * osl });
      }
      if (D.disagg) {
        if (ttft + kv <= st.ttft) pre.push({ k: k, b: b, d: d, r: b / ttft, ttft: ttft + kv });
        if (tpot <= st.tpot) dec.push({ k: k, b: b, d: d, r: b / (osl * tpot), tpot: tpot });
      }
    });
    pre = pre.filter(function (p) {
      return !pre.some(function (o) { return o !== p && o.d <= p.d && o.d / o.r <= p.d / p.r && (o.d < p.d || o.d / o.r < p.d / p.r); });
    });
    dec.forEach(function (q) {
      if (D.configs[q.k][2] === undefined) return;
      var best = null;
      pre.forEach(function (p) {
        if (D.configs[p.k][2] !== D.configs[q.k][2]) return;
        for (var x = 1; x * p.d + q.d <= st.n; x++) {
          var ymax = Math.floor((st.n - x * p.d) / q.d), ye = x * p.r / q.r;
          [Math.floor(ye), Math.ceil(ye)].forEach(function (y) {
            y = Math.min(Math.max(y, 1), ymax);
            var rate = Math.min(x * p.r, y * q.r), gpus = x * p.d + y * q.d, v = rate * osl / gpus;
            if (!best || v > best.x) best = { mode: "disagg", label: x + "P (" + label(p.k, p.b) + ") + " + y + "D (" + label(q.k, q.b) + ")",
              recipe: D.configs[q.k][2], gpus: gpus, ttft: p.ttft, tpot: q.tpot, x: v, y: 1 / q.tpot, tps: rate * osl };
          });
        }
      });
      if (best) pts.push(best);
    });
    var sorted = pts.slice().sort(function (a, b) { return b.x - a.x || b.y - a.y; });
    var front = [], top = -Infinity;
    sorted.forEach(function (p) { if (p.y > top) { front.push(p); top = p.y; } });
    front.reverse();
    return { all: pts, front: front };
  }
  function node(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function draw(r) {
    var box = el("plan-chart"); box.textContent = "";
    var W = 900, H = 520, L = 80, R = 860, T = 30, B = 460;
    var svg = node("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H });
    box.appendChild(svg);
    var mx = 1, my = 1;
    r.all.concat(r.front).forEach(function (p) { mx = Math.max(mx, p.x); my = Math.max(my, p.y); });
    mx *= 1.08; my *= 1.08;
    var X = function (v) { return L + (R - L) * v / mx; }, Y = function (v) { return B - (B - T) * v / my; };
    for (var i = 0; i <= 5; i++) {
      var vx = mx * i / 5, vy = my * i / 5;
      node("line", { x1: X(vx), y1: T, x2: X(vx), y2: B, stroke: "#eee" }, svg);
      node("line", { x1: L, y1: Y(vy), x2: R, y2: Y(vy), stroke: "#eee" }, svg);
      node("text", { x: X(vx), y: B + 18, "text-anchor": "middle", "font-size": 12 }, svg, vx.toFixed(vx < 10 ? 1 : 0));
      node("text", { x: L - 6, y: Y(vy) + 4, "text-anchor": "end", "font-size": 12 }, svg, vy.toFixed(vy < 10 ? 1 : 0));
    }
    node("text", { x: (L + R) / 2, y: B + 44, "text-anchor": "middle", "font-size": 14 }, svg, "tokens/s per device");
    node("text", { x: 18, y: (T + B) / 2, "text-anchor": "middle", "font-size": 14, transform: "rotate(-90 18 " + (T + B) / 2 + ")" }, svg, "tokens/s per user (1 / TPOT)");
    var others = node("g", { "class": "candidates" }, svg);
    r.all.forEach(function (p) {
      var c = node("circle", { "class": "point", cx: X(p.x), cy: Y(p.y), r: 2.5, fill: "#bbb" }, others);
      node("title", {}, c, p.mode + " " + p.label);
    });
    var pts = r.front.map(function (p) { return X(p.x) + "," + Y(p.y); }).join(" ");
    node("polyline", { "class": "front", points: pts, fill: "none", stroke: "#1f77b4", "stroke-width": 2 }, svg);
    var g = node("g", { "class": "front-points" }, svg);
    r.front.forEach(function (p, i) {
      var best = i === r.front.length - 1;
      var c = node("circle", { "class": "front-point" + (best ? " best" : ""), cx: X(p.x), cy: Y(p.y), r: best ? 7 : 4.5,
        fill: p.mode === "agg" ? "#1f77b4" : "#d62728", stroke: best ? "#000" : "none" }, g);
      node("title", {}, c, p.mode + " " + p.label + " (" + p.recipe + "): " + p.gpus + " devices, TTFT " + secs(p.ttft) +
           ", TPOT " + secs(p.tpot) + ", " + p.x.toFixed(1) + " tokens/s per device, " + p.y.toFixed(1) + " per user");
    });
  }
  function cell(v, text) { var td = document.createElement("td"); td.className = "n"; td.setAttribute("data-v", String(v)); td.textContent = text; return td; }
  function table(r) {
    var body = el("front").tBodies[0]; body.textContent = "";
    r.front.forEach(function (p, i) {
      var tr = document.createElement("tr"); if (i === r.front.length - 1) tr.className = "best";
      [p.mode, p.label, p.recipe].forEach(function (t) { var td = document.createElement("td"); td.textContent = t; tr.appendChild(td); });
      var usd = D.usd_per_gpu_hour === null ? -1 : D.usd_per_gpu_hour * p.gpus / 3600 / p.tps * 1e6;
      var tpj = D.power_w === null ? -1 : p.tps / (p.gpus * D.power_w);
      tr.appendChild(cell(p.gpus, String(p.gpus)));
      tr.appendChild(cell(p.ttft, secs(p.ttft)));
      tr.appendChild(cell(p.tpot, secs(p.tpot)));
      tr.appendChild(cell(p.x, p.x.toFixed(1)));
      tr.appendChild(cell(p.y, p.y.toFixed(1)));
      tr.appendChild(cell(usd, usd < 0 ? "-" : usd.toFixed(3)));
      tr.appendChild(cell(tpj, tpj < 0 ? "-" : tpj.toFixed(2)));
      var h = document.createElement("td"); h.className = "hint"; h.textContent = p.hint || ""; tr.appendChild(h);
      body.appendChild(tr);
    });
    el("front-count").textContent = String(r.front.length);
  }
  function update(initial) {
    var st = state();
    el("o-isl").textContent = D.isls.length ? D.isls[st.isl] + " tokens" : "-";
    el("o-osl").textContent = D.osls.length ? D.osls[st.osl] + " tokens" : "-";
    el("o-ttft").textContent = secs(st.ttft);
    el("o-tpot").textContent = secs(st.tpot);
    el("o-gpus").textContent = String(st.n);
    var r;
    if (initial) {
      r = { all: compute(st).all, front: F0 };
    } else {
      r = compute(st);
      el("front-source").textContent = "recomputed in the page from the embedded grid (batches 1, 2, 3, 4, 6, 9, ... per device)";
      table(r);
    }
    draw(r);
    document.documentElement.setAttribute("data-front", String(r.front.length));
  }
  ["s-isl", "s-osl", "s-ttft", "s-tpot", "s-gpus"].forEach(function (id) {
    el(id).addEventListener("input", function () { update(false); });
  });
  update(true);
})();
</script>
)JS";

}  // namespace

std::string RenderPlanHtml(const PlanResult& r) {
  std::string out = HtmlPageBegin("opscope plan: " + r.model + " on " + r.device);
  out += kPageStyle;
  out += "<h1>opscope plan: " + HtmlEscape(r.model) + " on up to " + std::to_string(r.gpus) +
         " &times; " + HtmlEscape(r.device) + "</h1>\n";
  out += "<table class=\"summary\">\n";
  out += "<tr><th>request</th><td>" + std::to_string(r.isl) + " prompt tokens, " +
         std::to_string(r.osl) + " output tokens" +
         (r.fixed_lengths ? " each, exactly (fixed lengths)" : "") +
         (r.speculative ? HtmlEscape("; " + PlanSpeculativeText(r)) : std::string()) +
         "</td></tr>\n";
  out += "<tr><th>targets</th><td>" + HtmlEscape(PlanTargetsText(r)) + "</td></tr>\n";
  out += "<tr><th>estimate</th><td>" + HtmlEscape(r.estimate) + "; " +
         std::to_string(r.searched) + " configurations evaluated</td></tr>\n";
  if (r.rate) {
    out += "<tr><th>rate</th><td>" + Fixed(*r.rate, 3) + " requests/s: " +
           (r.rate_sizing ? std::to_string(r.rate_sizing->gpus) + " devices at least (" +
                                HtmlEscape(PlanConfigLabel(r.rate_sizing->point)) + ")"
                          : std::string("no configuration meets the targets")) +
           "</td></tr>\n";
  }
  out += "<tr><th>cost</th><td>" + HtmlEscape(r.price_basis) + "</td></tr>\n";
  out += "<tr><th>energy</th><td>" + HtmlEscape(r.power_basis) + "</td></tr>\n</table>\n";
  out += "<h2>Front</h2>\n<div id=\"controls\">\n"
         "<label for=\"s-isl\">ISL</label><input type=\"range\" id=\"s-isl\"><output id=\"o-isl\"></output>\n"
         "<label for=\"s-osl\">OSL</label><input type=\"range\" id=\"s-osl\"><output id=\"o-osl\"></output>\n"
         "<label for=\"s-ttft\">TTFT target</label><input type=\"range\" id=\"s-ttft\"><output id=\"o-ttft\"></output>\n"
         "<label for=\"s-tpot\">TPOT target</label><input type=\"range\" id=\"s-tpot\"><output id=\"o-tpot\"></output>\n"
         "<label for=\"s-gpus\">devices</label><input type=\"range\" id=\"s-gpus\"><output id=\"o-gpus\"></output>\n"
         "</div>\n";
  out += "<p class=\"muted\"><span id=\"front-count\">" + std::to_string(r.front.size()) +
         "</span> points on the front: <span id=\"front-source\">the search's (every batch it "
         "reached); moving a slider recomputes it in the page from the embedded grid</span>. "
         "Hover a point for its configuration; the largest mark is the best (most tokens/s per "
         "device).</p>\n";
  out += "<div class=\"chart\" id=\"plan-chart\"></div>\n";
  out += "<table class=\"sortable\" id=\"front\">\n<thead><tr><th data-key=\"mode\">mode</th>"
         "<th data-key=\"configuration\">configuration</th><th data-key=\"recipe\">recipe</th>"
         "<th class=\"n\" data-key=\"gpus\">devices</th><th class=\"n\" data-key=\"ttft_s\">TTFT</th>"
         "<th class=\"n\" data-key=\"tpot_s\">TPOT</th>"
         "<th class=\"n\" data-key=\"tokens_per_s_per_device\">tokens/s per device</th>"
         "<th class=\"n\" data-key=\"tokens_per_s_per_user\">tokens/s per user</th>"
         "<th class=\"n\" data-key=\"usd_per_mtoken\">$/Mtoken</th>"
         "<th class=\"n\" data-key=\"tokens_per_joule\">tokens/J</th>"
         "<th data-key=\"hint\">launch hint (" + HtmlEscape(r.hint_engine) + ")</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < r.front.size(); ++i) out += Row(r.front[i], r.best && *r.best == i);
  out += "</tbody>\n</table>\n";
  if (!r.skipped.empty()) {
    out += "<h2>Skipped splits</h2>\n<ul>\n";
    for (const std::string& s : r.skipped) out += "<li>" + HtmlEscape(s) + "</li>\n";
    out += "</ul>\n";
  }
  if (!r.assumptions.empty()) {
    out += "<h2>Assumptions</h2>\n<ul>\n";
    for (const std::string& a : r.assumptions) out += "<li>" + HtmlEscape(a) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<script type=\"application/json\" id=\"plan-data\">" + PageData(r) + "</script>\n";
  out += "<script type=\"application/json\" id=\"plan-front\">" + FrontData(r) + "</script>\n";
  out += kPageScript;
  out += HtmlPageEnd();
  return out;
}

}  // namespace opscope::report
