// A device: the figures the roofline needs (bandwidth, peaks per MMA class, memory), with
// their source. The built-in database is data/devices.json, embedded at build time.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/mma_class.h"
#include "support/error.h"

namespace opscope::device {

struct Device {
  std::string name;         // the id users type: "h100-sxm"
  std::string description;  // "NVIDIA H100 SXM5 80GB"
  double memory_bytes = 0;
  double dram_bytes_per_s = 0;
  // Dense peak FLOP/s (OP/s for int8) per class, indexed by MmaClass; absent when the device
  // has no such unit. kFp32 is the vector (non-tensor) FP32 rate non-MMA ops run at.
  std::array<std::optional<double>, format::kNumMmaClasses> peak_flops_per_s{};
  std::optional<double> l2_bytes;
  // Per device, per direction, within a node (NVLink, Infinity Fabric, ICI, PCIe).
  std::optional<double> interconnect_bytes_per_s;
  // Per device, per direction, across nodes (e.g. 400 Gb/s InfiniBand = 50e9).
  std::optional<double> network_bytes_per_s;
  // Per-step latency of a collective over each link (one ring step, one send): what a
  // message of a few bytes costs. Multi-device deployments only (docs/devices.md).
  std::optional<double> interconnect_latency_s;
  std::optional<double> network_latency_s;
  // Devices one interconnect domain (a node: HGX board, NVL72 rack) joins; traffic between
  // devices of different nodes goes over the network. Bounds --gpus-per-node.
  std::optional<double> devices_per_node;
  // SMs (NVIDIA), CUs (AMD), GPU cores (Apple): the units a kernel's tiles are spread over
  // (wave quantization in engine profiles).
  std::optional<double> compute_units;
  // Board or module power (TDP / TBP) in watts, and a list price in US dollars with where and
  // when it was published (price_source, required with price_usd).
  std::optional<double> power_w;
  std::optional<double> price_usd;
  std::string price_source;
  std::string source;
  // The name as the user typed it when that was another spelling or an alias of `name`
  // ("H100", "h100" for h100-sxm); empty otherwise. Reports say which device ran.
  std::string requested_as;

  std::optional<double> Peak(format::MmaClass c) const {
    return peak_flops_per_s[static_cast<int>(c)];
  }
};

// Every built-in device, in file order. Parsed once from the embedded data/devices.json.
const std::vector<Device>& BuiltinDevices();

// A built-in device by id, matched case-insensitively and with separators folded ("H100-SXM",
// "rtx4090") or by a common alias ("h100" -> h100-sxm, "mi300" -> mi300x); the result's
// requested_as then keeps what was typed. The error says "did you mean 'ID'?" for the nearest
// id by edit distance and lists the nearest known ids.
Result<Device> FindBuiltinDevice(std::string_view name);

// "device 'h100' is h100-sxm (NVIDIA H100 SXM5 80GB)" when the device was asked for by another
// spelling or an alias (requested_as), for the report's assumptions; nullopt otherwise.
std::optional<std::string> AliasAssumption(const Device& device);

// Parses one device document: either a single device object or {"devices": [...]} with
// exactly one entry. `origin` names the file in errors. Validates every field: required
// fields present, numbers finite and positive, unknown fields and classes rejected.
Result<Device> ParseDeviceJson(std::string_view json_text, std::string_view origin);

// Loads a user's device file (--device FILE.json).
Result<Device> LoadDeviceFile(const std::string& path);

// Parses the whole database text ({"devices": [...]}); used for the embedded copy and tests.
Result<std::vector<Device>> ParseDeviceDatabase(std::string_view json_text,
                                                std::string_view origin);

// Resolves --device: an existing path ending in .json loads the file, anything else is an id.
Result<Device> ResolveDevice(std::string_view name_or_path);

}  // namespace opscope::device
