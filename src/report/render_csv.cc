// CSV report: one record per node of the graph, in graph order, with every field of the JSON
// node object (DESIGN "JSON output") under the same names; a header record first.
#include "report/csv_writer.h"
#include "report/render.h"

namespace opscope::report {

std::string RenderCsv(const ReportModel& model) {
  std::string out;
  out.reserve(160 * (model.nodes.size() + 1));
  CsvWriter w(out);
  for (const char* h : {"name", "op", "source_op", "costed", "bytes_read", "bytes_written",
                        "bytes_weights", "bytes_state", "bytes", "bytes_link", "flops",
                        "intensity", "mma_class", "time_s", "bound"}) {
    w.Field(h);
  }
  // llm runs: the engine profile's time of each node.
  const bool predicted = model.llm && model.llm->predicted;
  if (predicted) w.Field("predicted_time_s");
  w.EndRecord();
  for (const NodeRow& n : model.nodes) {
    w.Field(n.name).Field(n.op).Field(n.source_op.empty() ? n.op : n.source_op).Field(n.costed);
    w.Field(n.bytes_read).Field(n.bytes_written).Field(n.bytes_weights).Field(n.bytes_state);
    w.Field(n.bytes()).Field(n.bytes_link).Field(n.flops);
    if (n.intensity) {
      w.Field(*n.intensity);
    } else {
      w.Empty();  // JSON null: the node moves no bytes
    }
    w.Field(n.mma_class).Field(n.time_s).Field(n.bound);
    if (predicted) w.Field(n.predicted_time_s.value_or(0.0));
    w.EndRecord();
  }
  return out;
}

}  // namespace opscope::report
