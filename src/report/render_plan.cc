// Renderers of a plan (`opscope plan`): the front as a text table, JSON (the "plan" object of
// issue 15) and CSV (one record per front point). The HTML page is render_plan_html.cc.
#include <cstdio>
#include <vector>

#include "llm/predicted.h"
#include "report/csv_writer.h"
#include "report/json_writer.h"
#include "report/render.h"
#include "support/human_units.h"

namespace opscope::report {

using plan::Mode;
using plan::PlanPoint;
using plan::PlanResult;
using plan::Side;

namespace {

std::string Fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s + " ";
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string SplitText(const Side& s) {
  std::string t = "tp" + std::to_string(s.tp);
  if (s.ep > 1) t += " ep" + std::to_string(s.ep);
  if (s.pp > 1) t += " pp" + std::to_string(s.pp);
  if (s.dp_attention > 1) t += " dp" + std::to_string(s.dp_attention);
  return t;
}

}  // namespace

std::string PlanConfigLabel(const PlanPoint& p) {
  if (p.mode == Mode::kAgg) {
    return std::to_string(p.agg.count) + " x (" + SplitText(p.agg) + ", batch " +
           std::to_string(p.agg.batch) + ")";
  }
  return std::to_string(p.prefill.count) + "P (" + SplitText(p.prefill) + ", batch " +
         std::to_string(p.prefill.batch) + ") + " + std::to_string(p.decode.count) + "D (" +
         SplitText(p.decode) + ", batch " + std::to_string(p.decode.batch) + ")";
}

std::string PlanTargetsText(const PlanResult& r) {
  std::string t;
  t += r.targets.ttft_s ? "TTFT <= " + HumanSeconds(*r.targets.ttft_s) : "no TTFT target";
  t += r.targets.tpot_s ? ", TPOT <= " + HumanSeconds(*r.targets.tpot_s) : ", no TPOT target";
  return t;
}

std::string PlanSpeculativeText(const PlanResult& r) {
  if (!r.speculative) return "";
  return std::string(r.speculative->draft_model ? "speculative decoding ("
                                                : "MTP speculative decoding (") +
         llm::SpeculativeArgs(*r.speculative).substr(1) + ")";
}

std::string RenderPlanText(const PlanResult& r) {
  std::string out = "opscope plan: " + r.model + " on up to " + std::to_string(r.gpus) + " x " +
                    r.device + ", " + std::to_string(r.isl) + " in / " + std::to_string(r.osl) +
                    " out" + (r.fixed_lengths ? " (fixed lengths)" : "") +
                    (r.speculative ? " with " + PlanSpeculativeText(r) : std::string()) +
                    ", " +
                    PlanTargetsText(r) + "\n";
  out += "estimate: " + r.estimate +
         (r.estimate == "predicted" ? " by " + r.engine + " (" + r.engine_why + ")" : std::string()) +
         "; " + std::to_string(r.searched) +
         " configurations evaluated; " + std::to_string(r.splits) + " splits, " +
         std::to_string(r.splits_pruned) + " pruned unbuilt\n\n";
  if (r.front.empty() && r.searched == 0 && !r.skipped.empty()) {
    // Nothing was evaluated, so no target was missed: say why the first split could not run
    // (every split of one recipe usually fails alike, e.g. a precision the device lacks).
    out += "No configuration could be evaluated: all " + std::to_string(r.skipped.size()) +
           " splits were skipped (--format json lists each); the first: " + r.skipped.front() +
           "\n";
  } else if (r.front.empty()) {
    out += "No configuration meets the targets (see 'skipped' in --format json).\n";
  } else {
    // A front over every batch has hundreds of points: the text shows at most kShown of them,
    // spread evenly from the lowest latency to the most throughput (the best always shown).
    constexpr size_t kShown = 24;
    const size_t n = r.front.size();
    std::vector<bool> shown(n, n <= kShown);
    for (size_t k = 0; n > kShown && k < kShown; ++k) shown[k * (n - 1) / (kShown - 1)] = true;
    if (r.best) shown[*r.best] = true;
    out += "Pareto front (tokens/s per device vs tokens/s per user), * = best";
    out += n > kShown ? ": " + std::to_string(kShown) + " of its " + std::to_string(n) +
                            " points (--format json or csv lists all)\n"
                      : ":\n";
    out += "  " + Pad("mode", 7, false) + Pad("configuration", 44, false) + Pad("weights", 10, false) +
           Pad("GPUs", 5, true) + Pad("TTFT", 10, true) + Pad("TPOT", 10, true) +
           Pad("tok/s/dev", 11, true) + Pad("tok/s/user", 11, true) + Pad("$/Mtok", 9, true) +
           Pad("tok/J", 7, true) + "\n";
    for (size_t i = 0; i < n; ++i) {
      if (!shown[i]) continue;
      const PlanPoint& p = r.front[i];
      out += (r.best && *r.best == i) ? "* " : "  ";
      out += Pad(plan::ModeName(p.mode), 7, false) + Pad(PlanConfigLabel(p), 44, false) +
             Pad(p.weights.value_or("default"), 10, false) + Pad(std::to_string(p.gpus), 5, true) +
             Pad(HumanSeconds(p.ttft_s), 10, true) + Pad(HumanSeconds(p.tpot_s), 10, true) +
             Pad(Fixed(p.tokens_per_s_per_device, 1), 11, true) +
             Pad(Fixed(p.tokens_per_s_per_user, 1), 11, true) +
             Pad(p.usd_per_mtoken ? Fixed(*p.usd_per_mtoken, 3) : "-", 9, true) +
             Pad(p.tokens_per_joule ? Fixed(*p.tokens_per_joule, 2) : "-", 7, true) + "\n";
    }
    const PlanPoint& b = r.front[*r.best];
    out += "\nBest: " + std::string(plan::ModeName(b.mode)) + " " + PlanConfigLabel(b) + " — " +
           Fixed(b.tokens_per_s, 0) + " tokens/s on " + std::to_string(b.gpus) + " devices\n";
    out += "  launch (" + r.hint_engine + ", a hint): " + b.hint + "\n";
    out += "  reproduce: " + b.reproduce + "\n";
  }
  if (r.rate) {
    out += "\nRate " + Fixed(*r.rate, 3) + " requests/s: ";
    if (r.rate_sizing) {
      out += std::to_string(r.rate_sizing->gpus) + " devices at least, as " +
             std::string(plan::ModeName(r.rate_sizing->point.mode)) + " " +
             PlanConfigLabel(r.rate_sizing->point) + "\n";
    } else {
      out += "no configuration meets the targets\n";
    }
  }
  out += "\ncost: " + r.price_basis + "\nenergy: " + r.power_basis + "\n";
  if (!r.skipped.empty()) {
    out += std::to_string(r.skipped.size()) + " split(s) skipped (listed in --format json)\n";
  }
  return out;
}

namespace {

void WriteSide(JsonWriter& w, const Side& s, const char* count_key) {
  w.BeginObject();
  w.Key("tp").Value(s.tp);
  w.Key("ep").Value(s.ep);
  w.Key("pp").Value(s.pp);
  w.Key("dp_attention").Value(s.dp_attention);
  w.Key("devices").Value(s.devices);
  w.Key(std::string_view(count_key)).Value(s.count);
  w.Key("batch").Value(s.batch);
  w.Key("ttft_s").Value(s.ttft_s);
  w.Key("tpot_s").Value(s.tpot_s);
  w.Key("requests_per_s").Value(s.requests_per_s);
  w.Key("max_batch").Value(s.max_batch);
  w.EndObject();
}

void WritePoint(JsonWriter& w, const PlanPoint& p) {
  const bool agg = p.mode == Mode::kAgg;
  w.BeginObject();
  w.Key("mode").Value(plan::ModeName(p.mode));
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"tp", p.agg.tp}, {"ep", p.agg.ep},
                                   {"pp", p.agg.pp}, {"dp_attention", p.agg.dp_attention},
                                   {"replicas", p.agg.count}, {"batch", p.agg.batch}}) {
    w.Key(std::string_view(key));
    if (agg) {
      w.Value(value);
    } else {
      w.Null();
    }
  }
  w.Key("weights");
  if (p.weights) {
    w.Value(*p.weights);
  } else {
    w.Null();
  }
  w.Key("recipe").Value(p.recipe);
  w.Key("prefill");
  if (agg) {
    w.Null();
  } else {
    WriteSide(w, p.prefill, "workers");
  }
  w.Key("decode");
  if (agg) {
    w.Null();
  } else {
    WriteSide(w, p.decode, "workers");
  }
  w.Key("kv_transfer_s");
  if (agg) {
    w.Null();
  } else {
    w.Value(p.kv_transfer_s);
  }
  w.Key("requests_in_flight");
  if (p.requests_in_flight > 0) {
    w.Value(p.requests_in_flight);
  } else {
    w.Null();
  }
  w.Key("gpus").Value(p.gpus);
  w.Key("ttft_s").Value(p.ttft_s);
  w.Key("tpot_s").Value(p.tpot_s);
  w.Key("tokens_per_s").Value(p.tokens_per_s);
  w.Key("tokens_per_s_per_device").Value(p.tokens_per_s_per_device);
  w.Key("tokens_per_s_per_user").Value(p.tokens_per_s_per_user);
  w.Key("max_batch").Value(agg ? p.agg.max_batch : p.decode.max_batch);
  w.Key("memory_headroom").Value(p.memory_headroom);
  w.Key("usd_per_mtoken").Value(p.usd_per_mtoken);
  w.Key("tokens_per_joule").Value(p.tokens_per_joule);
  w.Key("meets_targets").Value(p.meets_targets);
  w.Key("hint").Value(p.hint);
  w.Key("reproduce").Value(p.reproduce);
  w.EndObject();
}

}  // namespace

std::string RenderPlanJson(const PlanResult& r) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("schema_version").Value(1);
  w.Key("plan").BeginObject();
  w.Key("model").Value(r.model);
  w.Key("device").Value(r.device);
  w.Key("gpus").Value(r.gpus);
  w.Key("isl").Value(r.isl);
  w.Key("osl").Value(r.osl);
  w.Key("lengths").Value(llm::LengthsName(r.fixed_lengths));
  if (r.speculative) {
    w.Key("speculative").Value(llm::SpeculativeName(*r.speculative));
    w.Key("acceptance").Value(r.speculative->acceptance);
    w.Key("draft_model");
    if (r.speculative->draft_model) {
      w.Value(*r.speculative->draft_model);
    } else {
      w.Null();
    }
  } else {
    w.Key("speculative").Null();
    w.Key("acceptance").Null();
    w.Key("draft_model").Null();
  }
  w.Key("targets").BeginObject();
  w.Key("ttft_s").Value(r.targets.ttft_s);
  w.Key("tpot_s").Value(r.targets.tpot_s);
  w.EndObject();
  w.Key("rate").Value(r.rate);
  w.Key("engine").Value(r.engine);
  w.Key("engine_why").Value(r.engine_why);
  w.Key("hints_for").Value(r.hint_engine);
  w.Key("estimate").Value(r.estimate);
  w.Key("front").BeginArray();
  for (const PlanPoint& p : r.front) {
    out += '\n';
    WritePoint(w, p);
  }
  w.EndArray();
  w.Key("best");
  if (r.best) {
    w.Value(static_cast<uint64_t>(*r.best));
  } else {
    w.Null();
  }
  w.Key("min_gpus_for_rate");
  if (r.rate_sizing) {
    w.Value(r.rate_sizing->gpus);
  } else {
    w.Null();
  }
  w.Key("rate_configuration");
  if (r.rate_sizing) {
    WritePoint(w, r.rate_sizing->point);
  } else {
    w.Null();
  }
  w.Key("searched").Value(r.searched);
  w.Key("splits").Value(r.splits);
  w.Key("splits_pruned").Value(r.splits_pruned);
  w.Key("usd_per_gpu_hour").Value(r.usd_per_gpu_hour);
  w.Key("price_basis").Value(r.price_basis);
  w.Key("power_w").Value(r.power_w);
  w.Key("power_basis").Value(r.power_basis);
  w.Key("skipped").Strings(r.skipped);
  w.Key("assumptions").Strings(r.assumptions);
  w.EndObject();
  w.EndObject();
  out += '\n';
  return out;
}

std::string RenderPlanCsv(const PlanResult& r) {
  std::string out;
  CsvWriter w(out);
  for (const char* h :
       {"model", "device", "isl", "osl", "mode", "weights", "recipe", "tp", "ep", "pp",
        "dp_attention", "replicas", "batch", "prefill_tp", "prefill_ep", "prefill_pp",
        "prefill_dp_attention", "prefill_workers", "prefill_batch", "decode_tp", "decode_ep",
        "decode_pp", "decode_dp_attention", "decode_workers", "decode_batch", "gpus", "ttft_s",
        "tpot_s", "tokens_per_s", "tokens_per_s_per_device", "tokens_per_s_per_user",
        "usd_per_mtoken", "tokens_per_joule", "meets_targets", "best", "lengths", "speculative",
        "acceptance", "draft_model"}) {
    w.Field(h);
  }
  w.EndRecord();
  auto side = [&](const Side& s, bool present, bool with_count) {
    for (int64_t v : {s.tp, s.ep, s.pp, s.dp_attention}) {
      if (present) {
        w.Field(v);
      } else {
        w.Empty();
      }
    }
    if (with_count) {
      if (present) {
        w.Field(s.count).Field(s.batch);
      } else {
        w.Empty().Empty();
      }
    }
  };
  for (size_t i = 0; i < r.front.size(); ++i) {
    const PlanPoint& p = r.front[i];
    const bool agg = p.mode == Mode::kAgg;
    w.Field(r.model).Field(r.device).Field(r.isl).Field(r.osl).Field(plan::ModeName(p.mode));
    if (p.weights) {
      w.Field(*p.weights);
    } else {
      w.Empty();
    }
    w.Field(p.recipe);
    side(p.agg, agg, true);
    side(p.prefill, !agg, true);
    side(p.decode, !agg, true);
    w.Field(p.gpus).Field(p.ttft_s).Field(p.tpot_s).Field(p.tokens_per_s);
    w.Field(p.tokens_per_s_per_device).Field(p.tokens_per_s_per_user);
    if (p.usd_per_mtoken) {
      w.Field(*p.usd_per_mtoken);
    } else {
      w.Empty();
    }
    if (p.tokens_per_joule) {
      w.Field(*p.tokens_per_joule);
    } else {
      w.Empty();
    }
    w.Field(p.meets_targets).Field(r.best && *r.best == i);
    w.Field(llm::LengthsName(r.fixed_lengths));
    // --speculative mtp:N | draft:N, --acceptance R, --draft-model M: empty where absent.
    if (r.speculative) {
      w.Field(llm::SpeculativeName(*r.speculative)).Field(r.speculative->acceptance);
      if (r.speculative->draft_model) {
        w.Field(*r.speculative->draft_model);
      } else {
        w.Empty();
      }
    } else {
      w.Empty().Empty().Empty();
    }
    w.EndRecord();
  }
  return out;
}

}  // namespace opscope::report
