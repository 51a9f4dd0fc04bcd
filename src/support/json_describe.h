// The one way opscope describes what is wrong in a JSON file — a device file, an HF config or
// a graph: parse errors as lower-case fragments with a hint, and the value found where another
// was expected ("expected an integer, got \"4096\""). Every JSON reader words its errors
// through these.
#pragma once

#include <simdjson.h>

#include <string>

namespace opscope {

// A short rendering of a JSON value for messages: strings quoted and cut after 40 bytes,
// containers named ("an array", "an object"), numbers and booleans as written, "null".
std::string DescribeJsonValue(simdjson::dom::element value);
// The same for a value an On-Demand reader has not consumed (it may be read after this).
std::string DescribeJsonValue(simdjson::ondemand::value& value);

// What is wrong with a document simdjson would not parse, as the part of a message after
// "<file>: ": "empty document, expected a JSON object", "not valid JSON: truncated or
// malformed (...)", "not valid JSON: invalid UTF-8", ...
std::string DescribeJsonParseError(simdjson::error_code code);

}  // namespace opscope
