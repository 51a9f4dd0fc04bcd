// Identical repeated layers grouped for the top tables (see node_groups.h).
#include "report/node_groups.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <string_view>
#include <unordered_map>

namespace opscope::report {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The first number of `name` that is a whole component (between non-alphanumeric characters
// or the ends: the "3" of "layers.3.mlp", not of "conv3"), of at most 9 digits.
struct LayerNumber {
  size_t at = std::string_view::npos, length = 0;
  int64_t value = 0;
};
LayerNumber FindLayerNumber(std::string_view name) {
  for (size_t i = 0; i < name.size();) {
    if (!IsDigit(name[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    int64_t value = 0;
    while (j < name.size() && IsDigit(name[j])) {
      if (j - i < 9) value = value * 10 + (name[j] - '0');  // longer runs are not layer numbers
      ++j;
    }
    const bool whole = (i == 0 || !IsAlnum(name[i - 1])) && (j == name.size() || !IsAlnum(name[j]));
    if (whole && j - i <= 9) return {i, j - i, value};
    i = j;
  }
  return {};
}

// What identical nodes share: the name without its layer number, and every figure.
std::string GroupKey(const NodeRow& n, const LayerNumber& number) {
  std::string key = n.name.substr(0, number.at);
  key += '\x01';
  key += std::string_view(n.name).substr(number.at + number.length);
  for (const std::string* s : {&n.op, &n.source_op, &n.mma_class, &n.bound, &n.link}) {
    key += '\0';
    key += *s;
  }
  for (uint64_t v : {n.bytes_read, n.bytes_written, n.bytes_weights, n.bytes_state, n.bytes_link,
                     n.flops, std::bit_cast<uint64_t>(n.time_s)}) {
    key += '\0';
    key += std::to_string(v);
  }
  return key;
}

std::string Run(int64_t first, int64_t last) {
  return first == last ? std::to_string(first)
                       : std::to_string(first) + "\xe2\x80\x93" + std::to_string(last);  // en dash
}

}  // namespace

std::string IndexRanges(std::span<const int64_t> idx) {
  if (idx.empty()) return "";
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t i : idx) {
    if (!runs.empty() && runs.back().second + 1 == i) {
      runs.back().second = i;
    } else {
      runs.emplace_back(i, i);
    }
  }
  std::string out;
  if (runs.size() <= 3) {
    for (const auto& [first, last] : runs) out += (out.empty() ? "" : ",") + Run(first, last);
    return out;
  }
  // Many pieces: an arithmetic run ("every fourth layer") shows its step, anything else its
  // first and last pieces.
  const int64_t step = idx[1] - idx[0];
  bool arithmetic = true;
  for (size_t i = 1; i < idx.size(); ++i) arithmetic = arithmetic && idx[i] - idx[i - 1] == step;
  if (arithmetic) {
    return std::to_string(idx[0]) + "," + std::to_string(idx[1]) + ",\xe2\x80\xa6," +
           std::to_string(idx.back());
  }
  return Run(runs.front().first, runs.front().second) + ",\xe2\x80\xa6," +
         Run(runs.back().first, runs.back().second);
}

std::vector<NodeGroup> GroupIdenticalNodes(std::span<const NodeRow> nodes) {
  std::vector<NodeGroup> groups;
  std::vector<std::vector<int64_t>> numbers;  // per group: its nodes' layer numbers
  std::vector<LayerNumber> at;                // per group: where its first node's number is
  std::unordered_map<std::string, size_t> by_key;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeRow& n = nodes[i];
    if (!n.costed) continue;
    const LayerNumber number = FindLayerNumber(n.name);
    size_t g = groups.size();
    if (number.at != std::string_view::npos) {
      g = by_key.try_emplace(GroupKey(n, number), groups.size()).first->second;
    }
    if (g == groups.size()) {
      groups.emplace_back();
      numbers.emplace_back();
      at.push_back(number);
    }
    NodeGroup& group = groups[g];
    group.nodes.push_back(i);
    group.time_s += n.time_s;
    group.bytes += n.bytes();
    group.bytes_link += n.bytes_link;
    group.flops += n.flops;
    numbers[g].push_back(number.value);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    NodeGroup& group = groups[g];
    const std::string& first = nodes[group.nodes.front()].name;
    if (group.nodes.size() == 1) {
      group.name = first;
      continue;
    }
    std::vector<int64_t>& idx = numbers[g];
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    group.name = first.substr(0, at[g].at) + IndexRanges(idx) +
                 first.substr(at[g].at + at[g].length);
  }
  return groups;
}

}  // namespace opscope::report
