// The HTML document shell and the table-sorting script (see html_page.h).
#include "report/html_page.h"

#include "report/svg_canvas.h"

namespace opscope::report {

std::string HtmlEscape(std::string_view s) { return Svg::Escape(s); }

std::string HtmlPageBegin(std::string_view title) {
  std::string out = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)";
  out += HtmlEscape(title);
  out += R"(</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; background: #f5f5f5; }
table.sortable th:hover { background: #e8e8e8; }
th.sorted-desc::after { content: " \25BC"; }
th.sorted-asc::after { content: " \25B2"; }
table.summary th { background: none; font-weight: normal; color: #555; }
.chart svg { max-width: 100%; height: auto; border: 1px solid #eee; }
.muted { color: #777; }
</style>
</head>
<body>
)";
  return out;
}

std::string HtmlPageEnd() {
  return R"(<script>
"use strict";
(function () {
  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) return numeric ? -Infinity : "";
    if (numeric) {
      var v = parseFloat(cell.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return cell.textContent;
  }
  function sortBy(table, th) {
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.classList.contains("n");
    // Numbers sort largest first, text A to Z; a second click on the same header reverses.
    var desc = numeric;
    if (th.classList.contains("sorted-desc")) desc = false;
    else if (th.classList.contains("sorted-asc")) desc = true;
    var heads = th.parentNode.children;
    for (var i = 0; i < heads.length; i++) heads[i].classList.remove("sorted-desc", "sorted-asc");
    th.classList.add(desc ? "sorted-desc" : "sorted-asc");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r._order = i; });
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      var c = x < y ? -1 : (x > y ? 1 : 0);
      if (desc) c = -c;
      return c !== 0 ? c : a._order - b._order;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
  }
  var tables = document.querySelectorAll("table.sortable");
  for (var t = 0; t < tables.length; t++) {
    (function (table) {
      var heads = table.tHead.rows[0].cells;
      for (var h = 0; h < heads.length; h++) {
        heads[h].addEventListener("click", function (e) { sortBy(table, e.currentTarget); });
      }
    })(tables[t]);
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
</script>
</body>
</html>
)";
}

}  // namespace opscope::report
