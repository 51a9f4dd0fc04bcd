// Errors for everything input-driven: std::expected<T, Error>, no exceptions across modules.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace opscope {

// One message, lower-case, no trailing period, carrying its context (file, node, field):
//   "model.json: node 'mm' (MatMul): input 'x' is not defined"
struct Error {
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> MakeError(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

// Prefixes an error with context: Wrap("model.json", e) -> "model.json: <e>".
inline Error Wrap(std::string_view context, const Error& e) {
  return Error{std::string(context) + ": " + e.message};
}

}  // namespace opscope
