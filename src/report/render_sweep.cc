// Renderers of a sweep report: CSV and JSON with one record per point, and the two serving
// charts (SVG, and inline in a self-contained HTML page).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>

#include "report/csv_writer.h"
#include "report/html_page.h"
#include "report/json_writer.h"
#include "report/svg_canvas.h"
#include "report/render.h"
#include "support/huge_pages.h"
#include "support/human_units.h"

namespace opscope::report {

using sweep::SweepDeployment;
using sweep::SweepResult;
using sweep::SweepRow;
using sweep::SweepServing;
using sweep::PredictedRow;

namespace {

std::string PhaseOf(const SweepResult& rep) { return std::string(llm::PhaseName(rep.phase)); }

const char* BoundName(const SweepRow& r) { return r.compute_bound ? "compute" : "memory"; }

std::string DeploymentLabel(const SweepDeployment& d) {
  std::string s = "tp " + std::to_string(d.tp) + " ep " + std::to_string(d.ep) + " pp " +
                  std::to_string(d.pp);
  if (d.dp_attention > 1) s += " dp " + std::to_string(d.dp_attention);
  return s;
}

// Whether the rows are whole requests (--gen-len/--osl: all of them or none).
bool HasGenLen(const SweepResult& rep) {
  return !rep.servings.empty() && rep.servings.front().gen_len.has_value();
}

// A disaggregated split's tensor-parallel degree on one side (nullopt: the row's tp).
int64_t SideTp(const std::optional<int64_t>& tp, const SweepDeployment& d) {
  return tp.value_or(d.tp);
}

// "osl 256, disagg 1:3 (prefill tp 2, decode tp 8)" for charts and the HTML table.
std::string ServingLabel(const SweepServing& s, const SweepDeployment& d) {
  std::string label;
  if (s.gen_len) label = "osl " + std::to_string(*s.gen_len);
  if (s.disagg) {
    label += (label.empty() ? "" : ", ") + std::string("disagg ") +
             std::to_string(s.disagg->prefill_workers) + ":" +
             std::to_string(s.disagg->decode_workers) + " (prefill tp " +
             std::to_string(SideTp(s.disagg->prefill_tp, d)) + ", decode tp " +
             std::to_string(SideTp(s.disagg->decode_tp, d)) + ")";
  }
  return label;
}

}  // namespace

namespace {

// A CSV record is its prefix and at most kMaxNumberBytes of numbers (three integers of 20
// digits, four shortest doubles of 24 characters, a bound, a count and a flag, with commas:
// < 192), and with --engine at most as many again (five doubles; with --speculative a count
// and a flag more).
constexpr size_t kMaxNumberBytes = 192;

// The most bytes `rows` records take: reserved once, on huge pages — a 9 MB string grown by
// doubling copies itself four times — and what no record uses is never touched.
size_t CsvBoundBytes(const std::vector<std::string>& prefix, size_t rows, bool predicted) {
  size_t longest_prefix = 0;
  for (const std::string& p : prefix) longest_prefix = std::max(longest_prefix, p.size());
  // --engine: four or five more numbers a row (< kMaxNumberBytes).
  return (longest_prefix + kMaxNumberBytes * (predicted ? 2 : 1)) * rows;
}

// Whether the rows have request axes (--gen-len/--osl, --disagg): a serving per prefix and
// their columns.
bool HasRequestAxes(const SweepResult& rep) { return HasGenLen(rep) || rep.disagg; }

// Appends the CSV records of rows [begin, end) (their leading fields from `prefix`) to `out`,
// which has room for them (CsvBoundBytes). kRequests: HasRequestAxes (compiled apart, so a
// sweep without them formats its rows as it did before they existed).
template <bool kRequests>
void AppendCsvRows(std::string& out, const SweepResult& rep, const std::vector<std::string>& prefix,
                   size_t begin, size_t end) {
  const size_t recipes = rep.recipes.size(), deployments = rep.deployments.size();
  const size_t servings = std::max<size_t>(1, rep.servings.size());  // none: built by hand
  // GCC 12 cannot see that to_chars stays far inside the buffer (< 192 of 384 bytes a row).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
  // One row per point, built in a stack buffer and appended once (the fields after the
  // prefix are numbers and fixed words: nothing to quote).
  for (size_t i = begin; i < end; ++i) {
    const SweepRow& row = rep.rows[i];
    const size_t k = (row.device * recipes + row.recipe) * deployments + row.deployment;
    if constexpr (kRequests) {
      out += prefix[k * servings + row.serving];
    } else {
      out += prefix[k];
    }
    char buf[2 * kMaxNumberBytes];
    char* p = buf;
    char* const last = buf + sizeof buf;
    auto number = [&](auto v) { p = std::to_chars(p, last, v).ptr; };
    auto word = [&](std::string_view text) {
      std::memcpy(p, text.data(), text.size());
      p += text.size();
    };
    number(row.batch);
    *p++ = ',';
    number(row.context);
    *p++ = ',';
    if constexpr (kRequests) {
      if (const std::optional<int64_t>& gen_len = rep.servings[row.serving].gen_len) {
        number(*gen_len);  // --gen-len/--osl
        *p++ = ',';
      }
    }
    char* const step = p;
    number(row.step_time_s);
    const size_t step_len = static_cast<size_t>(p - step);
    *p++ = ',';
    number(row.tokens_per_s);
    *p++ = ',';
    if (row.tpot_s && *row.tpot_s == row.step_time_s) {
      std::memmove(p, step, step_len);  // decode: the time per output token is the step time
      p += step_len;
    } else if (row.tpot_s) {
      number(*row.tpot_s);
    }
    *p++ = ',';
    if (row.ttft_s) number(*row.ttft_s);
    *p++ = ',';
    word(BoundName(row));
    *p++ = ',';
    number(row.max_batch);
    *p++ = ',';
    word(row.fits ? "true" : "false");
    if (!rep.predicted.empty()) {  // --engine
      const PredictedRow& q = rep.predicted[i];
      *p++ = ',';
      number(q.step_time_s);
      *p++ = ',';
      number(q.tokens_per_s);
      *p++ = ',';
      if (q.tpot_s) number(*q.tpot_s);
      *p++ = ',';
      if (q.ttft_s) number(*q.ttft_s);
      if constexpr (kRequests) {
        if (rep.disagg) {  // --disagg: the KV transfer in the TTFT (empty: aggregated)
          *p++ = ',';
          if (q.kv_transfer_s) number(*q.kv_transfer_s);
        }
        if (rep.speculative) {  // --speculative: the fit with the drafter beside the target
          *p++ = ',';
          number(q.drafter_max_batch);
          *p++ = ',';
          word(q.drafter_fits ? "true" : "false");
        }
      }
    }
    word("\n");
    out.append(buf, p);
  }
#pragma GCC diagnostic pop
}

}  // namespace

std::vector<std::string> RenderSweepCsvParts(const SweepResult& rep, unsigned threads) {
  std::string out;
  CsvWriter w(out);
  for (const char* h : {"model", "device", "recipe", "phase", "tp", "ep", "pp", "dp_attention",
                        "devices"}) {
    w.Field(h);
  }
  if (rep.disagg) {  // --disagg: the split (empty for an aggregated row)
    for (const char* h : {"prefill_workers", "decode_workers", "prefill_tp", "decode_tp"}) {
      w.Field(h);
    }
  }
  w.Field("batch").Field("context");
  if (HasGenLen(rep)) w.Field("gen_len");
  for (const char* h : {"step_time_s", "tokens_per_s", "tpot_s", "ttft_s", "bound", "max_batch",
                        "fits"}) {
    w.Field(h);
  }
  if (!rep.predicted.empty()) {  // --engine: the engine's figures (llm.predicted)
    for (const char* h : {"predicted_step_time_s", "predicted_tokens_per_s", "predicted_tpot_s",
                          "predicted_ttft_s"}) {
      w.Field(h);
    }
    if (rep.disagg) w.Field("predicted_kv_transfer_s");
    if (rep.speculative) w.Field("predicted_max_batch").Field("predicted_fits");
  }
  w.EndRecord();
  // The leading fields repeat for every point of one device, recipe, deployment and serving:
  // render them once.
  const size_t recipes = rep.recipes.size(), deployments = rep.deployments.size();
  const size_t servings = std::max<size_t>(1, rep.servings.size());  // none: built by hand
  std::vector<std::string> prefix(rep.devices.size() * recipes * deployments * servings);
  for (size_t d = 0; d < rep.devices.size(); ++d) {
    for (size_t r = 0; r < recipes; ++r) {
      for (size_t k = 0; k < deployments; ++k) {
        for (size_t s = 0; s < servings; ++s) {
          std::string& p = prefix[((d * recipes + r) * deployments + k) * servings + s];
          const SweepDeployment& dep = rep.deployments[k];
          CsvWriter pw(p);
          pw.Field(rep.model).Field(rep.devices[d]).Field(rep.recipes[r]).Field(PhaseOf(rep));
          pw.Field(dep.tp).Field(dep.ep).Field(dep.pp).Field(dep.dp_attention).Field(dep.devices);
          if (rep.disagg) {
            if (const std::optional<llm::Disagg>& g = rep.servings.at(s).disagg) {
              pw.Field(g->prefill_workers).Field(g->decode_workers);
              pw.Field(SideTp(g->prefill_tp, dep)).Field(SideTp(g->decode_tp, dep));
            } else {
              pw.Field("").Field("").Field("").Field("");
            }
          }
          p += ',';
        }
      }
    }
  }
  // Formatting the doubles (shortest round-trip form, ~80 ns each here) is most of the
  // work: large sweeps format contiguous slices of rows on several threads and join them in
  // order, so the text is the same for any thread count.
  const size_t rows = rep.rows.size();
  constexpr size_t kRowsPerThread = 16384;
  if (threads == 0) threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  const size_t slices = std::max<size_t>(1, std::min<size_t>(threads, rows / kRowsPerThread));
  // Each slice is its own string (the header goes with the first): joining them would copy
  // and page in the whole text once more.
  std::vector<std::string> parts(slices);
  parts[0] = std::move(out);
  std::vector<std::thread> workers;
  auto slice_begin = [&](size_t k) { return rows * k / slices; };
  auto render = [&](size_t k) {
    const size_t begin = slice_begin(k), end = slice_begin(k + 1);
    ReserveHugePages(parts[k], parts[k].size() +
                                   CsvBoundBytes(prefix, end - begin, !rep.predicted.empty()));
    if (HasRequestAxes(rep)) {
      AppendCsvRows<true>(parts[k], rep, prefix, begin, end);
    } else {
      AppendCsvRows<false>(parts[k], rep, prefix, begin, end);
    }
  };
  for (size_t k = 1; k < slices; ++k) {
    try {
      workers.emplace_back(render, k);
    } catch (const std::system_error&) {
      render(k);  // no thread to be had (a process limit): the same slice, here
    }
  }
  render(0);
  for (std::thread& t : workers) t.join();
  return parts;
}

std::string RenderSweepCsv(const SweepResult& rep, unsigned threads) {
  std::vector<std::string> parts = RenderSweepCsvParts(rep, threads);
  std::string out = std::move(parts[0]);
  for (size_t k = 1; k < parts.size(); ++k) out += parts[k];
  return out;
}
std::string RenderSweepJson(const SweepResult& rep) {
  std::string out;
  out.reserve(256 * (rep.rows.size() + 1));
  JsonWriter w(out);
  w.BeginObject();
  w.Key("schema_version").Value(1);
  w.Key("model").Value(rep.model);
  w.Key("phase").Value(llm::PhaseName(rep.phase));
  if (rep.engine) w.Key("engine").Value(*rep.engine);  // --engine
  if (const auto& s = rep.speculative) {  // --speculative, --acceptance, --draft-model
    w.Key("speculative").Value(llm::SpeculativeName(*s));
    w.Key("acceptance").Value(s->acceptance);
    if (s->draft_model) w.Key("draft_model").Value(*s->draft_model);
  }
  w.Key("points").BeginArray();
  const SweepServing kStep;  // a result built without servings (by hand): single steps
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    const SweepRow& row = rep.rows[i];
    out += '\n';
    w.BeginObject();
    w.Key("device").Value(rep.devices[row.device]);
    w.Key("recipe").Value(rep.recipes[row.recipe]);
    const SweepDeployment& dep = rep.deployments[row.deployment];
    w.Key("tp").Value(dep.tp);
    w.Key("ep").Value(dep.ep);
    w.Key("pp").Value(dep.pp);
    w.Key("dp_attention").Value(dep.dp_attention);
    w.Key("devices").Value(dep.devices);
    const SweepServing& serving = row.serving < rep.servings.size() ? rep.servings[row.serving] : kStep;
    if (rep.disagg) {  // --disagg: the split, null for an aggregated point
      w.Key("disagg");
      if (serving.disagg) {
        w.BeginObject();
        w.Key("prefill_workers").Value(serving.disagg->prefill_workers);
        w.Key("decode_workers").Value(serving.disagg->decode_workers);
        w.Key("prefill_tp").Value(SideTp(serving.disagg->prefill_tp, dep));
        w.Key("decode_tp").Value(SideTp(serving.disagg->decode_tp, dep));
        w.EndObject();
      } else {
        w.Null();
      }
    }
    w.Key("batch").Value(row.batch);
    w.Key("context").Value(row.context);
    if (serving.gen_len) w.Key("gen_len").Value(*serving.gen_len);
    w.Key("step_time_s").Value(row.step_time_s);
    w.Key("tokens_per_s").Value(row.tokens_per_s);
    w.Key("tpot_s").Value(row.tpot_s);
    w.Key("ttft_s").Value(row.ttft_s);
    w.Key("bound").Value(BoundName(row));
    w.Key("max_batch").Value(row.max_batch);
    w.Key("fits").Value(row.fits);
    if (!rep.predicted.empty()) {  // --engine: llm.predicted's figures of the point
      const PredictedRow& q = rep.predicted[i];
      w.Key("predicted").BeginObject();
      w.Key("step_time_s").Value(q.step_time_s);
      w.Key("tokens_per_s").Value(q.tokens_per_s);
      w.Key("tpot_s").Value(q.tpot_s);
      w.Key("ttft_s").Value(q.ttft_s);
      if (rep.disagg) w.Key("kv_transfer_s").Value(q.kv_transfer_s);
      if (rep.speculative) {
        w.Key("max_batch").Value(q.drafter_max_batch);
        w.Key("fits").Value(q.drafter_fits);
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("skipped").Strings(rep.skipped);
  w.Key("assumptions").Strings(rep.assumptions);
  w.EndObject();
  out += '\n';
  return out;
}

namespace {

// The contexts charted: all of them up to eight, else eight spread evenly (first and last
// included) so the lines stay readable.
std::vector<int64_t> ChartedContexts(const SweepResult& rep) {
  std::set<int64_t> all;
  for (const SweepRow& r : rep.rows) all.insert(r.context);
  std::vector<int64_t> v(all.begin(), all.end());
  constexpr size_t kMax = 8;
  if (v.size() <= kMax) return v;
  std::vector<int64_t> picked;
  for (size_t i = 0; i < kMax; ++i) picked.push_back(v[i * (v.size() - 1) / (kMax - 1)]);
  return picked;
}

constexpr size_t kMaxSeries = 16;

struct Series {
  std::string label;
  std::vector<const SweepRow*> points;  // ascending batch
};

std::vector<Series> BuildSeries(const SweepResult& rep, const std::vector<int64_t>& contexts,
                                size_t* all_series = nullptr) {
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, int64_t>, Series> by_key;
  const std::set<int64_t> charted(contexts.begin(), contexts.end());
  for (const SweepRow& r : rep.rows) {
    if (!charted.contains(r.context)) continue;
    Series& s = by_key[{r.recipe, r.device, r.deployment, r.serving, r.context}];
    if (s.label.empty()) {
      s.label = (rep.phase == llm::Phase::kPrefill ? "prompt " : "ctx ") + std::to_string(r.context) +
                ", " + rep.devices[r.device];
      if (rep.recipes.size() > 1) s.label += ", " + rep.recipes[r.recipe];
      if (rep.deployments.size() > 1) s.label += ", " + DeploymentLabel(rep.deployments[r.deployment]);
      if (rep.servings.size() > 1) {  // (none: a result built by hand)
        s.label += ", " + ServingLabel(rep.servings[r.serving], rep.deployments[r.deployment]);
      }
    }
    s.points.push_back(&r);
  }
  std::vector<Series> out;
  for (auto& [key, s] : by_key) {
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const SweepRow* a, const SweepRow* b) { return a->batch < b->batch; });
    out.push_back(std::move(s));
  }
  if (all_series != nullptr) *all_series = out.size();
  // More lines than a chart can tell apart (a TP × EP × PP sweep): the kMaxSeries with the
  // highest peak tokens/s, in their grid order.
  if (out.size() > kMaxSeries) {
    auto peak = [](const Series& s) {
      double m = 0;
      for (const SweepRow* r : s.points) m = std::max(m, r->tokens_per_s);
      return m;
    };
    std::vector<size_t> index(out.size());
    for (size_t i = 0; i < index.size(); ++i) index[i] = i;
    std::stable_sort(index.begin(), index.end(),
                     [&](size_t a, size_t b) { return peak(out[a]) > peak(out[b]); });
    index.resize(kMaxSeries);
    std::sort(index.begin(), index.end());
    std::vector<Series> kept;
    for (size_t i : index) kept.push_back(std::move(out[i]));
    out = std::move(kept);
  }
  return out;
}

// A polyline through the points, with a circle per point (hollow where it does not fit).
void DrawSeries(Svg& svg, const std::vector<std::pair<double, double>>& xy,
                const std::vector<const SweepRow*>& rows, std::string_view colour,
                const std::string& label) {
  std::string pts;
  for (const auto& [x, y] : xy) pts += Svg::Num(x) + "," + Svg::Num(y) + " ";
  svg.Raw("<polyline class=\"series\" fill=\"none\" stroke=\"" + std::string(colour) +
          "\" stroke-width=\"2\" points=\"" + pts + "\"><title>" + Svg::Escape(label) +
          "</title></polyline>\n");
  for (size_t i = 0; i < xy.size(); ++i) {
    const SweepRow& r = *rows[i];
    char title[256];
    std::snprintf(title, sizeof title, "%s: batch %lld, %.1f tokens/s, step %s%s",
                  label.c_str(), static_cast<long long>(r.batch), r.tokens_per_s,
                  HumanSeconds(r.step_time_s).c_str(), r.fits ? "" : ", does not fit memory");
    svg.Circle(xy[i].first, xy[i].second, 3.5,
               "class=\"point\" fill=\"" + std::string(r.fits ? colour : "#ffffff") +
                   "\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\"",
               title);
  }
}

}  // namespace

std::string RenderSweepSvg(const SweepResult& rep, bool standalone) {
  constexpr int kW = 1200, kH = 800;
  Svg svg(kW, kH, standalone);
  const std::vector<int64_t> contexts = ChartedContexts(rep);
  size_t all_series = 0;
  const std::vector<Series> series = BuildSeries(rep, contexts, &all_series);
  std::string devices;
  for (const std::string& d : rep.devices) devices += (devices.empty() ? "" : ", ") + d;
  svg.Text(60, 32, "Sweep: " + rep.model + " \xe2\x80\x94 " + PhaseOf(rep) + " on " + devices,
           "font-size=\"18\" font-weight=\"bold\" fill=\"#111111\"");
  std::set<int64_t> all_contexts;
  for (const SweepRow& r : rep.rows) all_contexts.insert(r.context);
  std::string sub = std::to_string(rep.rows.size()) + " points; hollow marks do not fit memory";
  if (contexts.size() < all_contexts.size()) {
    sub += "; " + std::to_string(contexts.size()) + " of " + std::to_string(all_contexts.size()) +
           " contexts charted";
  }
  if (series.size() < all_series) {
    sub += "; the " + std::to_string(series.size()) + " of " + std::to_string(all_series) +
           " lines with the highest throughput";
  }
  svg.Text(60, 54, sub, "font-size=\"13\" fill=\"#444444\"");

  double max_batch = 1, min_batch = 1e300, max_tps = 0, max_per_seq = 0;
  for (const Series& s : series) {
    for (const SweepRow* r : s.points) {
      max_batch = std::max(max_batch, static_cast<double>(r->batch));
      min_batch = std::min(min_batch, static_cast<double>(r->batch));
      max_tps = std::max(max_tps, r->tokens_per_s);
      max_per_seq = std::max(max_per_seq, r->tokens_per_s / static_cast<double>(r->batch));
    }
  }
  if (series.empty()) min_batch = 1;
  if (max_batch <= min_batch) max_batch = min_batch * 2;
  if (max_tps <= 0) max_tps = 1;
  if (max_per_seq <= 0) max_per_seq = 1;

  // Left: total tokens/s vs batch (batch on a log axis).
  constexpr double kTop = 90, kBottom = 560;
  const LogAxis bx{min_batch, max_batch, 110, 560};
  const LinearAxis ty{0, max_tps * 1.05, kBottom, kTop};
  svg.Text(335, 80, "throughput vs batch", "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  std::set<int64_t> batches;
  for (const SweepRow& r : rep.rows) batches.insert(r.batch);
  std::vector<double> ticks;
  if (batches.size() <= 12) {
    for (int64_t b : batches) ticks.push_back(static_cast<double>(b));
  } else {
    for (double b = 1; b <= max_batch; b *= 2) if (b >= min_batch) ticks.push_back(b);
  }
  for (double b : ticks) DrawXGridTick(svg, bx.Map(b), kBottom, kTop, PlainNumberLabel(b));
  svg.Line(110, kBottom, 560, kBottom, "stroke=\"#333333\" stroke-width=\"1\"");
  svg.Text(335, kBottom + 40, "batch (sequences)", "text-anchor=\"middle\" font-size=\"14\"");
  DrawLinearYAxis(svg, ty, 110, 560, PlainNumberLabel, "tokens/s (all sequences)");

  // Right: tokens/s per sequence vs total tokens/s.
  const LinearAxis tx{0, max_tps * 1.05, 720, 1160};
  const LinearAxis py{0, max_per_seq * 1.05, kBottom, kTop};
  svg.Text(940, 80, "serving trade-off", "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  {
    // x ticks of the linear axis, chosen as DrawLinearYAxis chooses them (at most 8).
    const double step = LinearTickStep(tx.hi - tx.lo, 8);
    for (int i = 0; i <= 20; ++i) {
      const double v = i * step;
      if (v > tx.hi) break;
      DrawXGridTick(svg, tx.Map(v), kBottom, kTop, PlainNumberLabel(v));
    }
    svg.Line(720, kBottom, 1160, kBottom, "stroke=\"#333333\" stroke-width=\"1\"");
    svg.Text(940, kBottom + 40, "tokens/s (all sequences)", "text-anchor=\"middle\" font-size=\"14\"");
  }
  DrawLinearYAxis(svg, py, 720, 1160, PlainNumberLabel, "tokens/s per sequence");

  svg.Raw("<g class=\"series-throughput\">\n");
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<std::pair<double, double>> xy;
    for (const SweepRow* r : series[i].points) {
      xy.emplace_back(bx.Map(static_cast<double>(r->batch)), ty.Map(r->tokens_per_s));
    }
    DrawSeries(svg, xy, series[i].points, PaletteColour(i), series[i].label);
  }
  svg.Raw("</g>\n<g class=\"series-tradeoff\">\n");
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<std::pair<double, double>> xy;
    for (const SweepRow* r : series[i].points) {
      xy.emplace_back(tx.Map(r->tokens_per_s),
                      py.Map(r->tokens_per_s / static_cast<double>(r->batch)));
    }
    DrawSeries(svg, xy, series[i].points, PaletteColour(i), series[i].label);
  }
  svg.Raw("</g>\n<g class=\"legend\">\n");
  double lx = 110, ly = 640;
  for (size_t i = 0; i < series.size(); ++i) {
    if (i > 0 && i % 4 == 0) { lx = 110; ly += 20; }
    if (ly > 780) break;
    svg.Rect(lx, ly - 10, 14, 4, "fill=\"" + std::string(PaletteColour(i)) + "\"");
    svg.Text(lx + 20, ly - 4, series[i].label, "fill=\"#222222\"");
    lx += 260;
  }
  svg.Raw("</g>\n");
  return svg.Finish();
}

namespace {

// A row's deployment in the HTML table, with its serving when the grid has several.
std::string RowDeploymentLabel(const SweepResult& rep, const SweepRow& r) {
  const SweepDeployment& d = rep.deployments[r.deployment];
  std::string label = DeploymentLabel(d);
  if (rep.servings.size() > 1) label += ", " + ServingLabel(rep.servings[r.serving], d);
  return label;
}

}  // namespace

std::string RenderSweepHtml(const SweepResult& rep) {
  std::string out = HtmlPageBegin("opscope sweep: " + rep.model);
  out += "<h1>opscope sweep: " + HtmlEscape(rep.model) + " (" + HtmlEscape(PhaseOf(rep)) + ")</h1>\n";
  std::set<int64_t> batches, contexts;
  for (const SweepRow& r : rep.rows) batches.insert(r.batch), contexts.insert(r.context);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  auto range = [](const std::set<int64_t>& v) {
    if (v.empty()) return std::string("-");
    return std::to_string(*v.begin()) + ".." + std::to_string(*v.rbegin()) + " (" +
           std::to_string(v.size()) + " values)";
  };
  out += "<table class=\"summary\">\n";
  out += "<tr><th>devices</th><td>" + HtmlEscape(join(rep.devices)) + "</td></tr>\n";
  out += "<tr><th>recipes (weights/activations/KV)</th><td>" + HtmlEscape(join(rep.recipes)) + "</td></tr>\n";
  out += "<tr><th>batch</th><td>" + range(batches) + "</td></tr>\n";
  out += "<tr><th>" + std::string(rep.phase == llm::Phase::kPrefill ? "prompt" : "context") + "</th><td>" +
         range(contexts) + "</td></tr>\n";
  if (rep.deployments.size() > 1 || rep.deployments.front().devices > 1) {
    std::vector<std::string> labels;
    for (const SweepDeployment& d : rep.deployments) labels.push_back(DeploymentLabel(d));
    out += "<tr><th>deployments</th><td>" + HtmlEscape(join(labels)) + "</td></tr>\n";
  }
  if (!rep.skipped.empty()) {
    out += "<tr><th>skipped deployments</th><td>" + std::to_string(rep.skipped.size()) +
           " (listed below)</td></tr>\n";
  }
  out += "<tr><th>points</th><td>" + std::to_string(rep.rows.size()) + "</td></tr>\n</table>\n";
  out += "<h2>Charts</h2>\n<div class=\"chart\" id=\"sweep-chart\">\n";
  out += RenderSweepSvg(rep, /*standalone=*/false);
  out += "</div>\n";
  constexpr size_t kMaxRows = 20000;
  out += "<h2>Points</h2>\n";
  if (rep.rows.size() > kMaxRows) {
    out += "<p class=\"muted\">The first " + std::to_string(kMaxRows) + " of " +
           std::to_string(rep.rows.size()) + " points; --format csv writes them all.</p>\n";
  }
  // Each header names its column in data-key (the JSON field where there is one), as the
  // node table's do.
  out += "<table class=\"sortable\" id=\"points\">\n<thead><tr><th data-key=\"device\">device</th>"
         "<th data-key=\"recipe\">recipe</th><th data-key=\"deployment\">deployment</th>"
         "<th class=\"n\" data-key=\"batch\">batch</th><th class=\"n\" data-key=\"context\">context</th>"
         "<th class=\"n\" data-key=\"step_time_s\">step time</th>"
         "<th class=\"n\" data-key=\"tokens_per_s\">tokens/s</th>"
         "<th class=\"n\" data-key=\"tokens_per_s_per_sequence\">tokens/s per seq</th>"
         "<th data-key=\"bound\">bound</th><th class=\"n\" data-key=\"max_batch\">max batch</th>"
         "<th data-key=\"fits\">fits</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < rep.rows.size() && i < kMaxRows; ++i) {
    const SweepRow& r = rep.rows[i];
    char tps[32], per[32], v1[32], v2[32], v3[32];
    std::snprintf(tps, sizeof tps, "%.1f", r.tokens_per_s);
    const double per_seq = r.tokens_per_s / static_cast<double>(r.batch);
    std::snprintf(per, sizeof per, "%.2f", per_seq);
    std::snprintf(v1, sizeof v1, "%.17g", r.step_time_s);
    std::snprintf(v2, sizeof v2, "%.17g", r.tokens_per_s);
    std::snprintf(v3, sizeof v3, "%.17g", per_seq);
    out += "<tr><td>" + HtmlEscape(rep.devices[r.device]) + "</td><td>" +
           HtmlEscape(rep.recipes[r.recipe]) + "</td><td>" +
           HtmlEscape(RowDeploymentLabel(rep, r)) + "</td><td class=\"n\" data-v=\"" +
           std::to_string(r.batch) + "\">" + std::to_string(r.batch) +
           "</td><td class=\"n\" data-v=\"" + std::to_string(r.context) + "\">" +
           std::to_string(r.context) + "</td><td class=\"n\" data-v=\"" + v1 + "\">" +
           HumanSeconds(r.step_time_s) + "</td><td class=\"n\" data-v=\"" + v2 + "\">" + tps +
           "</td><td class=\"n\" data-v=\"" + v3 + "\">" + per + "</td><td>" + BoundName(r) +
           "</td><td class=\"n\" data-v=\"" + std::to_string(r.max_batch) + "\">" +
           std::to_string(r.max_batch) + "</td><td>" + (r.fits ? "yes" : "no") + "</td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (!rep.skipped.empty()) {
    out += "<h2>Skipped deployments</h2>\n<ul>\n";
    for (const std::string& a : rep.skipped) out += "<li>" + HtmlEscape(a) + "</li>\n";
    out += "</ul>\n";
  }
  if (!rep.assumptions.empty()) {
    out += "<h2>Assumptions</h2>\n<ul>\n";
    for (const std::string& a : rep.assumptions) out += "<li>" + HtmlEscape(a) + "</li>\n";
    out += "</ul>\n";
  }
  out += HtmlPageEnd();
  return out;
}

}  // namespace opscope::report
