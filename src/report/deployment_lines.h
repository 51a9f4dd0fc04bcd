// The deployment block of a multi-device report — the split, the links, the per-device
// figures, communication time and share, the pipeline and the throughput — as labelled lines,
// one list that the text, HTML and SVG renderers each print (so they say the same thing).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/report_model.h"

namespace opscope::report {

struct LabelledLine {
  std::string label, value;
};

// "deployment (8 devices)": the block's heading.
std::string DeploymentHeading(const llm::Deployment& deployment);

// The lines of the block; empty for a one-device report (no `deployment` or `llm`).
std::vector<LabelledLine> DeploymentLines(const ReportModel& model);

// "8 × h200 (tp 8)", "16 × h200 (tp 8, ep 8, pp 2)": the devices and the degrees above one,
// for titles.
std::string DeploymentShort(const llm::Deployment& deployment, const std::string& device);

}  // namespace opscope::report
