// The Pareto front of a plan: points that no other point beats on both tokens/s per device (x)
// and tokens/s per user (y), kept sorted by x ascending (so y descending). The search asks
// whether a corner (x, y) — the most any point of a batch range can reach — is already
// dominated, and skips the range when it is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace opscope::plan {

class Front {
 public:
  struct Entry {
    double x = 0, y = 0;
    size_t id = 0;  // the caller's point
  };

  // Whether some entry has x' >= x and y' >= y (a point at the corner or below it gains nothing).
  bool Dominates(double x, double y) const {
    // Entries with x' >= x are a suffix; their largest y is the first of them (y descends).
    auto it = std::lower_bound(entries_.begin(), entries_.end(), x,
                               [](const Entry& e, double v) { return e.x < v; });
    return it != entries_.end() && it->y >= y;
  }

  // Adds the point unless dominated; drops the entries it dominates. Returns whether it was
  // added. Ties (an equal point already there) keep the first.
  bool Add(double x, double y, size_t id) {
    if (Dominates(x, y)) return false;
    // Entries with x' <= x and y' <= y are dominated by the new point: a contiguous run
    // ending where x' > x.
    auto end = std::upper_bound(entries_.begin(), entries_.end(), x,
                                [](double v, const Entry& e) { return v < e.x; });
    auto begin = end;
    while (begin != entries_.begin() && std::prev(begin)->y <= y) --begin;
    begin = entries_.erase(begin, end);
    entries_.insert(begin, Entry{x, y, id});
    return true;
  }

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;  // x ascending, y descending
};

}  // namespace opscope::plan
