// The ONNX importer as a run-time plugin. Debian's libonnx and libprotobuf cost ~3.5 ms of
// dynamic loading and static initialisation in every process that links them, which is most
// of `opscope llm`'s run time and a tenth of a 65,536-point sweep's; so the opscope binary
// does not link them: it dlopen()s `opscope-onnx.so` (this importer, with libonnx and
// libprotobuf as its own dependencies) the first time an .onnx file is analyzed.
//
// The plugin is built from the same sources in the same build as the binary, so the two share
// every type (ir::Graph, Result) exactly; the version in the entry point's name guards against
// a plugin from another build of a different interface.
#pragma once

#include <string>

#include "import/import.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import {

struct OnnxPluginApi {
  Result<ir::Graph> (*import_file)(const std::string& path, const ImportOptions& options);
};

// The plugin's one exported symbol: extern "C" const OnnxPluginApi* opscope_onnx_plugin_v2()
// (v2: import options carry --input values besides --dim bindings).
inline constexpr const char* kOnnxPluginEntry = "opscope_onnx_plugin_v2";
inline constexpr const char* kOnnxPluginFile = "opscope-onnx.so";

}  // namespace opscope::import
