// Chooses the importer for `opscope analyze MODEL` by file extension.
#include "import/import.h"

#include "import/onnx/onnx_import.h"
#include "import/opscope_json/graph_json.h"

namespace opscope::import {

Result<ir::Graph> ImportModel(const std::string& path, const DimBindings& dims) {
  if (path.ends_with(".onnx")) return ImportOnnx(path, dims);
  return LoadGraphJson(path);  // graph JSON binds --dim in the ledger
}

}  // namespace opscope::import
