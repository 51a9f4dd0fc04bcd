// The deployment block's lines (see deployment_lines.h).
#include "report/deployment_lines.h"

#include <cstdio>

#include "support/human_units.h"

namespace opscope::report {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string Percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string Fixed1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string LinkName(const std::string& scope) {
  return scope == "node" ? "interconnect" : "network";
}

// "tensor-parallel over the interconnect, stage hand-offs over the network": the groups the
// deployment has.
std::string Links(const llm::Deployment& d) {
  std::string links;
  auto add = [&](const std::string& what, const std::string& scope) {
    links += (links.empty() ? "" : ", ") + what + " over the " + LinkName(scope);
  };
  if (d.tp > 1) add("tensor-parallel", d.tp_scope);
  if (d.dispatches_experts()) add("expert all-to-all", d.moe_scope);
  if (d.pp > 1) add("stage hand-offs", d.pp_scope);
  return links;
}

}  // namespace

std::string DeploymentHeading(const llm::Deployment& d) {
  return "deployment (" + Str(d.devices) + " devices)";
}

std::string DeploymentShort(const llm::Deployment& d, const std::string& device) {
  std::string degrees;
  auto add = [&](const char* name, int64_t degree) {
    if (degree > 1) degrees += (degrees.empty() ? "" : ", ") + std::string(name) + " " + Str(degree);
  };
  add("tp", d.tp);
  add("ep", d.ep);
  add("pp", d.pp);
  add("dp-attention", d.dp_attention);
  return Str(d.devices) + " \xc3\x97 " + device + " (" + degrees + ")";
}

std::vector<LabelledLine> DeploymentLines(const ReportModel& m) {
  if (!m.deployment || !m.llm) return {};
  const llm::Deployment& d = *m.deployment;
  const llm::Figures& l = m.llm->figures;
  const llm::DeviceFigures& p = l.per_device;
  std::vector<LabelledLine> out;
  std::string split = "tp " + Str(d.tp) + ", ep " + Str(d.ep) + ", pp " + Str(d.pp) +
                      ", dp-attention " + Str(d.dp_attention) + "; " + Str(d.gpus_per_node) +
                      " per node";
  if (d.ep > 1 && d.expert_tp > 1) split += "; each expert split " + Str(d.expert_tp) + " ways";
  out.push_back({"split", split});
  if (const std::string links = Links(d); !links.empty()) out.push_back({"links", links});
  out.push_back({"per device", "weights " + HumanBytes(static_cast<double>(p.weight_bytes)) +
                                   ", KV cache per token " +
                                   HumanBytes(static_cast<double>(p.kv_bytes_per_token)) +
                                   ", recurrent state per seq " +
                                   HumanBytes(static_cast<double>(p.state_bytes_per_seq)) + ", " +
                                   std::to_string(p.seqs) + " sequences"});
  const double step = l.step_time_s;
  if (p.step_floor_s) {
    out.push_back({"step time", HumanSeconds(step) + " (communication not overlapped); floor " +
                                    HumanSeconds(*p.step_floor_s) + " (overlapped)"});
  }
  if (p.comm_time_s) {
    // The busiest device's link bytes of one micro-batch, over the step's micro-batches.
    const double sent = static_cast<double>(m.totals.bytes_link) *
                        static_cast<double>(p.micro_batches);
    out.push_back({"communication", HumanSeconds(*p.comm_time_s) +
                                        " per step on the busiest device (" +
                                        Percent(*p.comm_time_s, step) + " of the step), " +
                                        HumanBytes(sent) + " sent over its links"});
  }
  if (d.pp > 1) {
    out.push_back({"pipeline", Str(p.micro_batches) + " micro-batches, bubble " +
                                   Percent(p.bubble, 1.0) + "; totals and nodes are stage " +
                                   Str(p.busiest_stage) + "'s device, one micro-batch"});
  }
  out.push_back({"throughput", Fixed1(l.tokens_per_s) + " tokens/s, " + Fixed1(p.tokens_per_s) +
                                   " per device"});
  return out;
}

}  // namespace opscope::report
