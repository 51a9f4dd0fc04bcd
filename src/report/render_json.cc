// JSON report, schema_version 1 (DESIGN "JSON output"): field names exactly as specified,
// graph order, byte and FLOP counts as exact integers, times in seconds.
#include "report/json_writer.h"
#include "report/render.h"

namespace opscope::report {

void WriteDeviceJson(JsonWriter& w, const device::Device& d) {
  w.BeginObject();
  w.Key("name").Value(d.name);
  w.Key("description").Value(d.description);
  w.Key("memory_bytes").Value(d.memory_bytes);
  w.Key("dram_bytes_per_s").Value(d.dram_bytes_per_s);
  w.Key("peak_flops_per_s").BeginObject();
  for (format::MmaClass c : format::kPeakClasses) {
    if (auto p = d.Peak(c)) w.Key(format::MmaClassName(c)).Value(*p);
  }
  w.EndObject();
  if (d.l2_bytes) w.Key("l2_bytes").Value(*d.l2_bytes);
  if (d.interconnect_bytes_per_s) {
    w.Key("interconnect_bytes_per_s").Value(*d.interconnect_bytes_per_s);
  }
  if (d.network_bytes_per_s) w.Key("network_bytes_per_s").Value(*d.network_bytes_per_s);
  if (d.interconnect_latency_s) w.Key("interconnect_latency_s").Value(*d.interconnect_latency_s);
  if (d.network_latency_s) w.Key("network_latency_s").Value(*d.network_latency_s);
  if (d.devices_per_node) w.Key("devices_per_node").Value(*d.devices_per_node);
  if (d.compute_units) w.Key("compute_units").Value(*d.compute_units);
  if (d.power_w) w.Key("power_w").Value(*d.power_w);
  if (d.price_usd) {
    w.Key("price_usd").Value(*d.price_usd);
    w.Key("price_source").Value(d.price_source);
  }
  w.Key("source").Value(d.source);
  w.EndObject();
}

namespace {

// DESIGN's fields, then (additive) the state split, the link traffic and what bounds the step.
void WriteTotals(JsonWriter& w, const ReportModel& m) {
  const roofline::Totals& t = m.totals;
  w.BeginObject();
  w.Key("bytes_read").Value(t.bytes_read);
  w.Key("bytes_written").Value(t.bytes_written);
  w.Key("bytes_weights").Value(t.bytes_weights);
  w.Key("bytes_state").Value(t.bytes_state);
  w.Key("bytes").Value(t.bytes());
  w.Key("flops").Value(t.flops);
  w.Key("intensity").Value(t.intensity());
  w.Key("time_s").Value(t.time_s);
  w.Key("memory_bound_bytes").Value(t.memory_bound_bytes);
  w.Key("compute_bound_bytes").Value(t.compute_bound_bytes);
  w.Key("fused_floor_s").Value(t.fused_floor_s);
  w.Key("nodes").Value(t.nodes);
  w.Key("nodes_costed").Value(t.nodes_costed);
  w.Key("bytes_kv_cache").Value(m.state.kv_cache);
  w.Key("bytes_recurrent_state").Value(m.state.recurrent);
  if (m.state.other > 0) w.Key("bytes_other_state").Value(m.state.other);
  w.Key("bytes_link").Value(t.bytes_link);
  w.Key("comm_s").Value(t.comm_s);
  w.Key("floor_bound").Value(m.floor_bound);
  w.EndObject();
}

void WriteNode(JsonWriter& w, const NodeRow& n) {
  w.BeginObject();
  w.Key("name").Value(n.name);
  w.Key("op").Value(n.op);
  w.Key("source_op").Value(n.source_op.empty() ? n.op : n.source_op);
  w.Key("costed").Value(n.costed);
  w.Key("bytes_read").Value(n.bytes_read);
  w.Key("bytes_written").Value(n.bytes_written);
  w.Key("bytes_weights").Value(n.bytes_weights);
  w.Key("bytes_state").Value(n.bytes_state);
  w.Key("bytes").Value(n.bytes());
  w.Key("bytes_link").Value(n.bytes_link);  // 0 but for collectives: one schema for every node
  w.Key("flops").Value(n.flops);
  w.Key("intensity").Value(n.intensity);
  w.Key("mma_class").Value(n.mma_class);
  w.Key("time_s").Value(n.time_s);
  w.Key("bound").Value(n.bound);
  if (n.predicted_time_s) w.Key("predicted_time_s").Value(*n.predicted_time_s);
  w.EndObject();
}

void WriteDynamics(JsonWriter& w, const llm::PredictedDynamics& d) {
  const llm::DynamicsFigures& f = d.figures;
  w.BeginObject();
  w.Key("mode").Value(d.mode);
  w.Key("lengths").Value(d.lengths);
  w.Key("concurrency").Value(d.concurrency);
  w.Key("prompt").Value(d.prompt);
  w.Key("gen_len").Value(d.gen_len);
  w.Key("chunk_tokens").Value(d.chunk_tokens);
  w.Key("tokens_per_step").Value(d.tokens_per_step);
  if (!d.speculative.empty()) {
    w.Key("speculative").Value(d.speculative);
    w.Key("draft_s").Value(d.draft_s);
  }
  if (d.drafter_memory) {
    const llm::DrafterMemory& m = *d.drafter_memory;
    w.Key("drafter_memory").BeginObject();
    w.Key("weight_bytes").Value(m.weight_bytes);
    w.Key("bytes_per_seq").Value(m.bytes_per_seq);
    w.Key("max_batch").Value(m.max_batch);
    w.Key("fits").Value(m.fits);
    w.EndObject();
  }
  w.Key("decode_seqs").Value(f.decode_seqs);
  w.Key("step_s").Value(f.step_s);
  w.Key("queue_s").Value(f.queue_s);
  w.Key("prefill_s").Value(f.prefill_s);
  w.Key("request_s").Value(f.request_s);
  w.Key("interference_s").Value(f.interference_s);
  if (d.lengths == "fixed") w.Key("group_size").Value(f.group_size);
  if (d.mode == "disaggregated") {
    w.Key("prefill_workers").Value(d.prefill_workers);
    w.Key("decode_workers").Value(d.decode_workers);
    w.Key("kv_transfer_s").Value(f.kv_transfer_s);
  }
  w.EndObject();
}

void WriteErrors(JsonWriter& w, const llm::Predicted& p) {
  w.BeginObject();
  w.Key("kernels").BeginArray();
  for (const llm::KernelClassError& e : p.kernel_errors) {
    w.BeginObject();
    w.Key("kernel_class").Value(e.kernel_class);
    w.Key("variant").Value(e.variant);
    w.Key("share").Value(e.share);
    w.Key("basis").Value(e.basis);
    w.Key("samples").Value(static_cast<uint64_t>(e.samples));
    if (e.samples > 0) {
      w.Key("median_abs_error").Value(e.median_abs_error);
      w.Key("p90_abs_error").Value(e.p90_abs_error);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("end_to_end").BeginArray();
  for (const llm::EndToEndErrorFigure& e : p.end_to_end_errors) {
    w.BeginObject();
    w.Key("metric").Value(e.metric);
    w.Key("scope").Value(e.scope);
    w.Key("runs").Value(static_cast<uint64_t>(e.runs));
    w.Key("median_abs_error").Value(e.median_abs_error);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// llm.predicted (the additive block): the engine's figures, floors and errors.
void WritePredicted(JsonWriter& w, const llm::Predicted& p) {
  w.BeginObject();
  w.Key("engine").Value(p.engine);
  w.Key("why").Value(p.why);
  w.Key("basis").Value(p.basis);
  w.Key("step_time_s").Value(p.step_time_s);
  w.Key("tokens_per_s").Value(p.tokens_per_s);
  if (p.ttft_s) w.Key("ttft_s").Value(*p.ttft_s);
  if (p.tpot_s) w.Key("tpot_s").Value(*p.tpot_s);
  if (p.e2e_s) w.Key("e2e_s").Value(*p.e2e_s);
  if (p.ttft_floor_s) w.Key("ttft_floor_s").Value(*p.ttft_floor_s);
  if (p.tpot_floor_s) w.Key("tpot_floor_s").Value(*p.tpot_floor_s);
  if (p.dynamics) {
    w.Key("dynamics");
    WriteDynamics(w, *p.dynamics);
  }
  w.Key("errors");
  WriteErrors(w, p);
  w.EndObject();
}

void WriteLlm(JsonWriter& w, const LlmSection& l) {
  const llm::Figures& f = l.figures;
  w.BeginObject();
  w.Key("phase").Value(llm::PhaseName(f.phase));
  w.Key("params_total").Value(f.model.params_total);
  w.Key("params_active").Value(f.model.params_active);
  w.Key("params_embedding").Value(f.model.params_embedding);
  w.Key("weight_bytes").Value(f.model.weight_bytes);
  w.Key("kv_bytes_per_token").Value(f.model.kv_bytes_per_token);
  w.Key("kv_window_bytes_per_seq").Value(f.kv_window_bytes_per_seq);
  w.Key("state_bytes_per_seq").Value(f.model.state_bytes_per_seq);
  w.Key("step_time_s").Value(f.step_time_s);
  w.Key("tokens_per_s").Value(f.tokens_per_s);
  if (f.ttft_s) w.Key("ttft_s").Value(*f.ttft_s);
  if (f.e2e_s) w.Key("e2e_s").Value(*f.e2e_s);
  if (f.tpot_s) w.Key("tpot_s").Value(*f.tpot_s);
  w.Key("max_batch").Value(f.max_batch);
  w.Key("fits").Value(f.fits);
  w.Key("recipe").BeginObject();
  w.Key("weights").Value(l.recipe.weights);
  w.Key("activations").Value(l.recipe.activations);
  w.Key("kv").Value(l.recipe.kv);
  w.Key("state").Value(l.recipe.state);
  w.EndObject();
  if (l.predicted) {
    w.Key("predicted");
    WritePredicted(w, *l.predicted);
  }
  w.EndObject();
}

// DESIGN's nine fields; the rest of the per-device figures feed the text report.
void WriteParallel(JsonWriter& w, const llm::Deployment& d, const llm::DeviceFigures& p) {
  w.BeginObject();
  w.Key("tp").Value(d.tp);
  w.Key("ep").Value(d.ep);
  w.Key("pp").Value(d.pp);
  w.Key("dp_attention").Value(d.dp_attention);
  w.Key("devices").Value(d.devices);
  w.Key("weight_bytes_per_device").Value(p.weight_bytes);
  w.Key("kv_bytes_per_token_per_device").Value(p.kv_bytes_per_token);
  w.Key("comm_time_s").Value(p.comm_time_s);  // null: a timing source without collectives
  w.Key("tokens_per_s_per_device").Value(p.tokens_per_s);
  w.EndObject();
}

}  // namespace

std::string RenderJson(const ReportModel& m) {
  std::string out;
  out.reserve(1024 + m.nodes.size() * 320);
  JsonWriter w(out);
  w.BeginObject();
  w.Key("schema_version").Value(m.schema_version);
  w.Key("model").Value(m.model);
  w.Key("device");
  WriteDeviceJson(w, m.device);
  w.Key("workload").BeginObject();
  for (const auto& [name, value] : m.workload) w.Key(name).Value(value);
  w.EndObject();
  w.Key("totals");
  WriteTotals(w, m);
  w.Key("nodes").BeginArray();
  for (const NodeRow& n : m.nodes) WriteNode(w, n);
  w.EndArray();
  w.Key("by_op").BeginArray();
  for (const ByOpRow& b : m.by_op) {
    w.BeginObject();
    w.Key("op").Value(b.op);
    w.Key("count").Value(b.count);
    w.Key("bytes").Value(b.bytes);
    w.Key("bytes_link").Value(b.bytes_link);
    w.Key("flops").Value(b.flops);
    w.Key("time_s").Value(b.time_s);
    w.EndObject();
  }
  w.EndArray();
  w.Key("not_costed").BeginArray();
  for (const NotCosted& n : m.not_costed) {
    w.BeginObject();
    w.Key("name").Value(n.name);
    w.Key("op").Value(n.op);
    w.Key("reason").Value(n.reason);
    w.EndObject();
  }
  w.EndArray();
  w.Key("no_flop_model").Strings(m.no_flop_model);
  w.Key("assumptions").Strings(m.assumptions);
  if (!m.warnings.empty()) w.Key("warnings").Strings(m.warnings);
  if (!m.not_taken.empty()) {
    w.Key("not_taken").BeginArray();
    for (const ir::NotTaken& b : m.not_taken) {
      w.BeginObject();
      w.Key("name").Value(b.node);
      w.Key("branch").Value(b.branch);
      w.Key("nodes").Value(b.nodes);
      w.EndObject();
    }
    w.EndArray();
  }
  if (m.llm) {
    w.Key("llm");
    WriteLlm(w, *m.llm);
  }
  if (m.deployment && m.llm) {
    w.Key("parallel");
    WriteParallel(w, *m.deployment, m.llm->figures.per_device);
  }
  w.EndObject();
  out += '\n';
  return out;
}

}  // namespace opscope::report
