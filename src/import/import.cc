// Chooses the importer for `opscope analyze MODEL` by file extension.
#include "import/import.h"

#include "import/opscope_json/graph_json.h"

namespace opscope::import {

Result<ir::Graph> ImportModel(const std::string& path, const DimBindings& dims) {
  (void)dims;  // graph JSON binds dims in the ledger
  if (path.ends_with(".onnx")) {
    return MakeError(path + ": ONNX import is not built into this opscope");
  }
  return LoadGraphJson(path);
}

}  // namespace opscope::import
