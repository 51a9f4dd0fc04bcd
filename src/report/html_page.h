// The shell every HTML report shares: one self-contained document (inline CSS and JS, no
// network), and the script that makes tables with class "sortable" sortable by a click on a
// header (numbers by their data-v value, text otherwise; a second click reverses).
#pragma once

#include <string>
#include <string_view>

namespace opscope::report {

std::string HtmlPageBegin(std::string_view title);
std::string HtmlPageEnd();
std::string HtmlEscape(std::string_view s);

}  // namespace opscope::report
