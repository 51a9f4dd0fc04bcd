// The device database and its loader: every built-in entry is present, sourced and
// self-consistent; published figures match; every malformed user file is rejected by name.
#include "device/device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace opscope::device {
namespace {

using format::MmaClass;

constexpr std::string_view kRequiredIds[] = {"a100-40g",
                                             "a100-80g",
                                             "h100-sxm",
                                             "h100-pcie",
                                             "h100-nvl",
                                             "h200",
                                             "h20",
                                             "b200",
                                             "b300",
                                             "gb200",
                                             "gb300",
                                             "gb10",
                                             "l40s",
                                             "l4",
                                             "a10g",
                                             "a40",
                                             "rtx-a6000",
                                             "rtx-3060",
                                             "rtx-3090",
                                             "rtx-4090",
                                             "rtx-5090",
                                             "rtx-6000-ada",
                                             "rtx-pro-6000",
                                             "jetson-agx-orin",
                                             "mi250x",
                                             "mi300x",
                                             "mi325x",
                                             "mi355x",
                                             "gaudi3",
                                             "tpu-v4",
                                             "tpu-v5e",
                                             "tpu-v5p",
                                             "tpu-v6e",
                                             "tpu-v7",
                                             "m1",
                                             "m1-pro",
                                             "m1-max",
                                             "m1-ultra",
                                             "m2",
                                             "m2-pro",
                                             "m2-max",
                                             "m2-ultra",
                                             "m3",
                                             "m3-pro",
                                             "m3-max",
                                             "m3-ultra",
                                             "m4",
                                             "m4-pro",
                                             "m4-max"};

bool IsGpu(const Device& d) { return !d.name.starts_with("tpu-") && d.name != "gaudi3"; }

const Device& Builtin(std::string_view name) {
  for (const Device& d : BuiltinDevices()) {
    if (d.name == name) return d;
  }
  ADD_FAILURE() << "no built-in device " << name;
  static const Device kEmpty;
  return kEmpty;
}

// A minimal valid device, as a user would write it; tests splice fields into it.
std::string UserDevice(std::string_view extra = "",
                       std::string_view peaks = R"({"bf16": 1e14, "fp32": 1e13})") {
  return std::string(R"({"name": "my-gpu", "memory_bytes": 24e9, "dram_bytes_per_s": 1e12, )") +
         R"("peak_flops_per_s": )" + std::string(peaks) + R"(, "source": "my measurements")" +
         std::string(extra) + "}";
}

// Asserts a parse fails and its message contains every fragment.
void ExpectRejected(std::string_view json, std::initializer_list<std::string_view> fragments) {
  Result<Device> d = ParseDeviceJson(json, "my.json");
  ASSERT_FALSE(d.has_value()) << json;
  for (std::string_view f : fragments) {
    EXPECT_NE(d.error().message.find(f), std::string::npos)
        << "message: " << d.error().message << "\nmissing: " << f;
  }
  EXPECT_FALSE(d.error().message.ends_with(".")) << d.error().message;
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("opscope_device_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, std::string_view text) const {
    const std::string file = (path_ / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// ---- The built-in database ----

TEST(BuiltinDevices, EveryRequiredIdExists) {
  for (std::string_view id : kRequiredIds) {
    EXPECT_TRUE(FindBuiltinDevice(id).has_value()) << id;
  }
  EXPECT_EQ(BuiltinDevices().size(), std::size(kRequiredIds));
}

TEST(BuiltinDevices, NamesAreUniqueLowerCaseIds) {
  std::set<std::string> seen;
  for (const Device& d : BuiltinDevices()) {
    EXPECT_TRUE(seen.insert(d.name).second) << d.name;
    for (char c : d.name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << d.name;
    }
  }
}

TEST(BuiltinDevices, EveryEntryHasMemoryBandwidthSourceAndDescription) {
  for (const Device& d : BuiltinDevices()) {
    SCOPED_TRACE(d.name);
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GT(d.dram_bytes_per_s, 0);
    EXPECT_GE(d.source.size(), 40u) << "source must say where the figures came from";
    EXPECT_FALSE(d.description.empty());
    EXPECT_TRUE(d.Peak(MmaClass::kBf16).has_value()) << "every device has a bf16 peak";
  }
}

TEST(BuiltinDevices, EveryGpuHasFp32Fp16AndBf16) {
  for (const Device& d : BuiltinDevices()) {
    if (!IsGpu(d)) continue;
    SCOPED_TRACE(d.name);
    EXPECT_TRUE(d.Peak(MmaClass::kFp32).has_value());
    EXPECT_TRUE(d.Peak(MmaClass::kFp16).has_value());
    EXPECT_TRUE(d.Peak(MmaClass::kBf16).has_value());
  }
}

TEST(BuiltinDevices, NoPeakForTheNoneClass) {
  for (const Device& d : BuiltinDevices()) {
    EXPECT_FALSE(d.Peak(MmaClass::kNone).has_value()) << d.name;
  }
}

TEST(BuiltinDevices, NarrowerClassesAreNeverSlower) {
  for (const Device& d : BuiltinDevices()) {
    SCOPED_TRACE(d.name);
    const auto bf16 = d.Peak(MmaClass::kBf16);
    const auto fp8 = d.Peak(MmaClass::kFp8);
    const auto fp4 = d.Peak(MmaClass::kFp4);
    const auto tf32 = d.Peak(MmaClass::kTf32);
    if (fp8 && bf16) {
      EXPECT_GE(*fp8, *bf16);
    }
    if (fp4 && fp8) {
      EXPECT_GE(*fp4, *fp8);
    }
    if (tf32 && bf16) {
      EXPECT_LE(*tf32, *bf16);
    }
    // A matrix unit beats (or equals, on Apple's ALU-only GPUs) the vector FP32 rate.
    if (const auto fp32 = d.Peak(MmaClass::kFp32); fp32 && bf16) {
      EXPECT_GE(*bf16, *fp32);
    }
  }
}

TEST(BuiltinDevices, FiguresAreInPlausibleRanges) {
  for (const Device& d : BuiltinDevices()) {
    SCOPED_TRACE(d.name);
    // 68 GB/s (Apple M1) .. 8 TB/s (HBM3e): a figure outside is a unit slip.
    EXPECT_GE(d.dram_bytes_per_s, 50e9);
    EXPECT_LE(d.dram_bytes_per_s, 20e12);
    // 12 GB (RTX 3060) .. 512 GB (M3 Ultra unified memory).
    EXPECT_GE(d.memory_bytes, 8e9);
    EXPECT_LE(d.memory_bytes, 600e9);
    // Ridge point, FLOP per byte: Apple GPUs sit near 30, B300's FP4-era parts near 300.
    const double ridge = *d.Peak(MmaClass::kBf16) / d.dram_bytes_per_s;
    EXPECT_GE(ridge, 10);
    EXPECT_LE(ridge, 2000);
    for (MmaClass c : format::kPeakClasses) {
      if (const auto peak = d.Peak(c)) {
        EXPECT_GE(*peak, 1e11) << format::MmaClassName(c);
        EXPECT_LE(*peak, 5e16) << format::MmaClassName(c);
      }
    }
    if (d.l2_bytes) {
      EXPECT_GE(*d.l2_bytes, 1e6);
      EXPECT_LE(*d.l2_bytes, 512e6);
    }
    if (d.interconnect_bytes_per_s) {
      EXPECT_GE(*d.interconnect_bytes_per_s, 16e9);
      EXPECT_LE(*d.interconnect_bytes_per_s, 2e12);
    }
    if (d.network_bytes_per_s) {
      EXPECT_GE(*d.network_bytes_per_s, 1e9);
      EXPECT_LE(*d.network_bytes_per_s, 200e9);
    }
  }
}

TEST(BuiltinDevices, PublishedFiguresExactly) {
  const Device& h100 = Builtin("h100-sxm");
  EXPECT_EQ(h100.dram_bytes_per_s, 3.35e12);         // NVIDIA H100 SXM datasheet
  EXPECT_EQ(*h100.Peak(MmaClass::kBf16), 989.4e12);  // 1,979 sparse / 2
  EXPECT_EQ(*h100.Peak(MmaClass::kFp8), 1978.9e12);  // 3,958 sparse / 2
  EXPECT_EQ(*h100.Peak(MmaClass::kFp32), 66.9e12);
  EXPECT_EQ(h100.memory_bytes, 80e9);
  EXPECT_EQ(*h100.interconnect_bytes_per_s, 450e9);  // NVLink4 900 GB/s bidirectional
  EXPECT_EQ(*h100.network_bytes_per_s, 50e9);        // 400 Gb/s ConnectX-7
  EXPECT_EQ(Builtin("a100-80g").dram_bytes_per_s, 2.039e12);
  EXPECT_EQ(*Builtin("a100-80g").Peak(MmaClass::kBf16), 312e12);
  EXPECT_EQ(*Builtin("mi300x").Peak(MmaClass::kBf16), 1307.4e12);
  EXPECT_EQ(Builtin("mi300x").memory_bytes, 192e9);
  EXPECT_EQ(Builtin("h200").dram_bytes_per_s, 4.8e12);
  EXPECT_EQ(*Builtin("b200").Peak(MmaClass::kFp4), 9e15);
  EXPECT_EQ(*Builtin("gb10").Peak(MmaClass::kFp4), 1e15 / 2);            // 1 PFLOP FP4 sparse
  EXPECT_EQ(Builtin("tpu-v4").memory_bytes, 32.0 * 1024 * 1024 * 1024);  // 32 GiB
  EXPECT_EQ(*Builtin("tpu-v6e").Peak(MmaClass::kBf16), 918e12);
  // GeForce: fp16 is the FP16-accumulate rate, twice the FP32-accumulate bf16 rate.
  EXPECT_EQ(*Builtin("rtx-4090").Peak(MmaClass::kFp16), 330.3e12);
  EXPECT_EQ(*Builtin("rtx-4090").Peak(MmaClass::kBf16), 165.2e12);
  EXPECT_EQ(*Builtin("rtx-3090").Peak(MmaClass::kFp16), 142e12);
  // Apple: cores x 128 ALUs x 2 x clock (M1 Max: 32 cores at 1.296 GHz).
  EXPECT_EQ(*Builtin("m1-max").Peak(MmaClass::kFp32), 32.0 * 128 * 2 * 1.296e9);
  EXPECT_EQ(*Builtin("m1-max").Peak(MmaClass::kFp16), *Builtin("m1-max").Peak(MmaClass::kFp32));
}

// GB300 (issue 14): per-GPU dense figures of Blackwell Ultra in GB300 NVL72.
TEST(BuiltinDevices, Gb300PublishedFigures) {
  const Device& gb300 = Builtin("gb300");
  EXPECT_EQ(*gb300.Peak(MmaClass::kFp4), 15e15);   // NVIDIA: 15 PF dense NVFP4
  EXPECT_EQ(*gb300.Peak(MmaClass::kFp8), 5e15);
  EXPECT_EQ(*gb300.Peak(MmaClass::kBf16), 2.5e15);
  EXPECT_EQ(gb300.dram_bytes_per_s, 8e12);         // 8 TB/s HBM3E
  EXPECT_EQ(*gb300.power_w, 1400);                 // 1.4 kW
  EXPECT_EQ(*gb300.devices_per_node, 72);          // NVL72
  // Blackwell Ultra trades INT8 and FP64 for FP4, as B300 does.
  EXPECT_LT(*gb300.Peak(MmaClass::kInt8), *Builtin("gb200").Peak(MmaClass::kInt8));
  EXPECT_GT(*gb300.Peak(MmaClass::kFp4), *Builtin("gb200").Peak(MmaClass::kFp4));
}

// compute_units, power_w and price_usd: units, ranges and provenance.
TEST(BuiltinDevices, ComputeUnitsPowerAndPricesAreConsistent) {
  size_t with_power = 0, with_price = 0;
  for (const Device& d : BuiltinDevices()) {
    if (d.compute_units) {
      EXPECT_EQ(*d.compute_units, std::floor(*d.compute_units)) << d.name;
      EXPECT_GE(*d.compute_units, 8) << d.name;  // the smallest here: Apple M1's 8 GPU cores
      EXPECT_LE(*d.compute_units, 400) << d.name;
      EXPECT_NE(d.source.find("compute_units"), std::string::npos) << d.name;
    }
    if (d.power_w) {
      ++with_power;
      EXPECT_GE(*d.power_w, 10) << d.name;
      EXPECT_LE(*d.power_w, 2000) << d.name;
      EXPECT_NE(d.source.find("power_w"), std::string::npos) << d.name << ": say where";
    }
    EXPECT_EQ(d.price_usd.has_value(), !d.price_source.empty()) << d.name;
    if (d.price_usd) {
      ++with_price;
      EXPECT_GE(*d.price_usd, 100) << d.name;
      // The source carries its date: a four-digit year.
      bool year = false;
      for (size_t i = 0; i + 4 <= d.price_source.size(); ++i) {
        year = year || (d.price_source.compare(i, 2, "20") == 0 &&
                        std::isdigit(static_cast<unsigned char>(d.price_source[i + 2])) &&
                        std::isdigit(static_cast<unsigned char>(d.price_source[i + 3])));
      }
      EXPECT_TRUE(year) << d.name << ": " << d.price_source;
    }
  }
  // Every NVIDIA and AMD datacenter GPU publishes a power figure.
  for (std::string_view id : {"a100-80g", "h100-sxm", "h200", "b200", "b300", "gb200", "gb300",
                              "l40s", "mi300x", "mi325x", "mi355x", "rtx-pro-6000"}) {
    EXPECT_TRUE(Builtin(id).power_w.has_value()) << id;
    EXPECT_TRUE(Builtin(id).compute_units.has_value()) << id;
  }
  EXPECT_GE(with_power, 25u);  // 28 of 49 today: TPUs, Apple and H20 publish none
  EXPECT_GE(with_price, 5u);
  // Published SM counts: H100 SXM5 132 (whitepaper), A100 108, B200 148 (74 per die).
  EXPECT_EQ(*Builtin("h100-sxm").compute_units, 132);
  EXPECT_EQ(*Builtin("a100-80g").compute_units, 108);
  EXPECT_EQ(*Builtin("b200").compute_units, 148);
  EXPECT_EQ(*Builtin("mi300x").compute_units, 304);
  EXPECT_EQ(*Builtin("rtx-4090").price_usd, 1599);  // NVIDIA launch price
}

TEST(ParseDeviceJson, NewFieldsAreValidated) {
  const std::string head = R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": 1e11,
      "peak_flops_per_s": {"bf16": 1e14}, "source": "s")";
  auto ok = ParseDeviceJson(head + R"(, "compute_units": 80, "power_w": 300, "price_usd": 999,
      "price_source": "list price, 2025-01-01"})",
                            "d.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(*ok->compute_units, 80);
  EXPECT_EQ(*ok->power_w, 300);
  EXPECT_EQ(*ok->price_usd, 999);
  const std::pair<std::string, std::string> bad[] = {
      {R"(, "compute_units": 80.5})", "field 'compute_units': expected a whole number of units"},
      {R"(, "power_w": 0})", "field 'power_w': expected a positive number, got 0"},
      {R"(, "price_usd": 999})", "field 'price_usd' needs 'price_source'"},
      {R"(, "price_source": "x"})", "field 'price_source' without 'price_usd'"},
  };
  for (const auto& [fields, message] : bad) {
    auto d = ParseDeviceJson(head + fields, "d.json");
    ASSERT_FALSE(d.has_value()) << fields;
    EXPECT_NE(d.error().message.find(message), std::string::npos) << d.error().message;
  }
}

TEST(BuiltinDevices, NoFp32WhereNoVectorFigureIsPublished) {
  EXPECT_FALSE(Builtin("gaudi3").Peak(MmaClass::kFp32).has_value());
  EXPECT_FALSE(Builtin("tpu-v5e").Peak(MmaClass::kFp32).has_value());
  EXPECT_FALSE(Builtin("mi300x").Peak(MmaClass::kFp4).has_value());
}

TEST(FindBuiltinDevice, UnknownIdSuggestsNearestIds) {
  Result<Device> d = FindBuiltinDevice("h100-sxn");
  ASSERT_FALSE(d.has_value());
  const std::string& m = d.error().message;
  EXPECT_NE(m.find("unknown device 'h100-sxn'; did you mean 'h100-sxm'? (known: h100-sxm"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("opscope devices"), std::string::npos) << m;

  Result<Device> none = FindBuiltinDevice("quantum-abacus-9000");
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("opscope devices"), std::string::npos);
}

// Names as people type them: case and separators folded, common aliases; requested_as keeps
// what was typed so that reports can say which device ran.
TEST(FindBuiltinDevice, SpellingsAndAliases) {
  struct Case {
    const char* typed;
    const char* id;
  };
  for (const Case& c : {Case{"h100", "h100-sxm"}, Case{"H100", "h100-sxm"},
                        Case{"H100-SXM", "h100-sxm"}, Case{"h100_sxm", "h100-sxm"},
                        Case{"h100 sxm5", "h100-sxm"}, Case{"rtx4090", "rtx-4090"},
                        Case{"RTX 4090", "rtx-4090"}, Case{"MI300X", "mi300x"},
                        Case{"mi300", "mi300x"}, Case{"B200", "b200"}, Case{"a100", "a100-80g"},
                        Case{"DGX Spark", "gb10"}}) {
    Result<Device> d = FindBuiltinDevice(c.typed);
    ASSERT_TRUE(d.has_value()) << c.typed << ": " << d.error().message;
    EXPECT_EQ(d->name, c.id) << c.typed;
    EXPECT_EQ(d->requested_as, c.typed) << c.typed;
  }
  EXPECT_EQ(FindBuiltinDevice("h100-sxm")->requested_as, "");  // the id itself: nothing to say
}

TEST(ResolveDevice, IdOrJsonPath) {
  EXPECT_EQ(ResolveDevice("l4")->name, "l4");
  TempDir dir;
  const std::string file = dir.Write("mine.json", UserDevice());
  Result<Device> d = ResolveDevice(file);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->name, "my-gpu");
  Result<Device> missing = ResolveDevice(dir.path() + "/absent.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("absent.json"), std::string::npos);
}

// ---- User files ----

// A UTF-8 byte-order mark before a device file's JSON is ignored (RFC 8259 §8.1).
TEST(ParseDeviceJson, LeadingByteOrderMarkIsIgnored) {
  Result<Device> d = ParseDeviceJson(
      "\xEF\xBB\xBF" R"({"name": "bom", "memory_bytes": 1e9, "dram_bytes_per_s": 1e11,
         "peak_flops_per_s": {"fp32": 1e12}, "source": "test"})",
      "bom.json");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->name, "bom");
}

TEST(ParseDeviceJson, UserFileRoundTrip) {
  TempDir dir;
  const std::string file = dir.Write(
      "my.json",
      UserDevice(
          R"(, "description": "My GPU", "l2_bytes": 6e6, "interconnect_bytes_per_s": 32e9,
                   "network_bytes_per_s": 25e9)",
          R"({"fp32": 1e13, "bf16": 1e14, "fp16": 2e14, "fp8": 4e14, "int8": 400000000000000, "fp4": 8e14})"));
  Result<Device> d = LoadDeviceFile(file);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->name, "my-gpu");
  EXPECT_EQ(d->description, "My GPU");
  EXPECT_EQ(d->memory_bytes, 24e9);
  EXPECT_EQ(d->dram_bytes_per_s, 1e12);
  EXPECT_EQ(*d->Peak(MmaClass::kFp32), 1e13);
  EXPECT_EQ(*d->Peak(MmaClass::kBf16), 1e14);
  EXPECT_EQ(*d->Peak(MmaClass::kFp16), 2e14);
  EXPECT_EQ(*d->Peak(MmaClass::kFp8), 4e14);
  EXPECT_EQ(*d->Peak(MmaClass::kInt8), 4e14);  // integer literal accepted
  EXPECT_EQ(*d->Peak(MmaClass::kFp4), 8e14);
  EXPECT_FALSE(d->Peak(MmaClass::kTf32).has_value());
  EXPECT_FALSE(d->Peak(MmaClass::kFp64).has_value());
  EXPECT_EQ(*d->l2_bytes, 6e6);
  EXPECT_EQ(*d->interconnect_bytes_per_s, 32e9);
  EXPECT_EQ(*d->network_bytes_per_s, 25e9);
  EXPECT_EQ(d->source, "my measurements");
}

TEST(ParseDeviceJson, AcceptsSingleEntryDatabaseForm) {
  Result<Device> d =
      ParseDeviceJson(R"({"schema_version": 1, "devices": [)" + UserDevice() + "]}", "my.json");
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->name, "my-gpu");
  EXPECT_FALSE(d->l2_bytes.has_value());
  std::string second = UserDevice();
  second.replace(second.find("my-gpu"), 6, "my-gpu-2");
  ExpectRejected(R"({"devices": [)" + UserDevice() + "," + second + "]}",
                 {"my.json: field 'devices': expected exactly one device, got 2"});
}

TEST(ParseDeviceJson, RejectsUnknownField) {
  ExpectRejected(UserDevice(R"(, "bandwidth": 5)"),
                 {"my.json: device 'my-gpu': field 'bandwidth': unknown field"});
}

TEST(ParseDeviceJson, RejectsNegativeNumber) {
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": -5, "peak_flops_per_s": {}, "source": "s"})",
      {"my.json: device 'x': field 'dram_bytes_per_s': expected a positive number, got -5"});
}

TEST(ParseDeviceJson, RejectsZero) {
  ExpectRejected(UserDevice(R"(, "l2_bytes": 0)"), {"field 'l2_bytes'", "positive"});
}

TEST(ParseDeviceJson, RejectsNanString) {
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": "NaN", "peak_flops_per_s": {}, "source": "s"})",
      {"device 'x': field 'dram_bytes_per_s': expected a positive number, got \"NaN\""});
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": "abc", "peak_flops_per_s": {}, "source": "s"})",
      {"field 'dram_bytes_per_s': expected a positive number, got \"abc\""});
}

TEST(ParseDeviceJson, RejectsNanAndInfinityLiterals) {
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": NaN, "peak_flops_per_s": {}, "source": "s"})",
      {"my.json", "NaN"});
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": Infinity, "peak_flops_per_s": {}, "source": "s"})",
      {"my.json"});
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e999, "dram_bytes_per_s": 1, "peak_flops_per_s": {}, "source": "s"})",
      {"my.json", "number"});
}

TEST(ParseDeviceJson, RejectsMissingSource) {
  ExpectRejected(
      R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": 1e11, "peak_flops_per_s": {"bf16": 1e13}})",
      {"my.json: device 'x': missing required field 'source'"});
  ExpectRejected(UserDevice().replace(UserDevice().find("\"my measurements\""), 17, "\"\""),
                 {"field 'source'", "non-empty string"});
}

TEST(ParseDeviceJson, RejectsMissingOrBadName) {
  ExpectRejected(R"({"memory_bytes": 1e9})", {"my.json: device #1: missing required field 'name'"});
  ExpectRejected(R"({"name": 7})", {"field 'name': expected a non-empty string, got 7"});
  ExpectRejected(R"({"name": ""})", {"field 'name'"});
}

TEST(ParseDeviceJson, RejectsMissingRequiredNumbers) {
  ExpectRejected(
      R"({"name": "x", "dram_bytes_per_s": 1e11, "peak_flops_per_s": {}, "source": "s"})",
      {"device 'x': missing required field 'memory_bytes'"});
  ExpectRejected(R"({"name": "x", "memory_bytes": 1e9, "dram_bytes_per_s": 1e11, "source": "s"})",
                 {"device 'x': missing required field 'peak_flops_per_s'"});
}

TEST(ParseDeviceJson, RejectsUnknownClass) {
  ExpectRejected(UserDevice("", R"({"bf16": 1e14, "fp6": 1e15})"),
                 {"device 'my-gpu': field 'peak_flops_per_s': unknown class 'fp6'"});
  ExpectRejected(UserDevice("", R"({"none": 1e14})"), {"unknown class 'none'"});
  ExpectRejected(UserDevice("", R"({"bf16": "fast"})"),
                 {"field 'peak_flops_per_s.bf16': expected a positive number, got \"fast\""});
  ExpectRejected(UserDevice("", R"([1e14])"), {"field 'peak_flops_per_s'", "got an array"});
}

TEST(ParseDeviceJson, RejectsWrongTypes) {
  ExpectRejected(UserDevice(R"(, "description": 5)"), {"field 'description'", "string"});
  ExpectRejected(UserDevice(R"(, "l2_bytes": true)"), {"field 'l2_bytes'", "got true"});
  ExpectRejected(UserDevice(R"(, "network_bytes_per_s": null)"),
                 {"field 'network_bytes_per_s'", "got null"});
  ExpectRejected("[1, 2]", {"my.json: expected a device object, got an array"});
}

TEST(ParseDeviceJson, RejectsDuplicateFieldAndClass) {
  ExpectRejected(UserDevice(R"(, "memory_bytes": 1e9)"),
                 {"field 'memory_bytes' appears more than once"});
  ExpectRejected(UserDevice("", R"({"bf16": 1e14, "bf16": 2e14})"),
                 {"class 'bf16' appears more than once"});
}

TEST(ParseDeviceJson, RejectsTruncatedEmptyAndNonJson) {
  const std::string full = UserDevice();
  ExpectRejected(full.substr(0, full.size() / 2), {"my.json", "JSON"});
  ExpectRejected("", {"my.json: empty document"});
  ExpectRejected("   \n", {"my.json: empty document"});
  ExpectRejected("name = h100", {"my.json"});
}

TEST(ParseDeviceJson, EveryTruncationIsRejectedWithoutCrashing) {
  const std::string full = UserDevice(R"(, "l2_bytes": 6e6)");
  for (size_t n = 0; n < full.size(); ++n) {
    Result<Device> d = ParseDeviceJson(full.substr(0, n), "cut.json");
    ASSERT_FALSE(d.has_value()) << n;
    EXPECT_TRUE(d.error().message.starts_with("cut.json: ")) << d.error().message;
  }
}

TEST(ParseDeviceDatabase, RejectsDuplicateNames) {
  Result<std::vector<Device>> db = ParseDeviceDatabase(
      R"({"schema_version": 1, "devices": [)" + UserDevice() + "," + UserDevice() + "]}",
      "db.json");
  ASSERT_FALSE(db.has_value());
  EXPECT_NE(db.error().message.find("db.json: device 'my-gpu': duplicate name"), std::string::npos)
      << db.error().message;
}

TEST(ParseDeviceDatabase, RejectsBadTopLevel) {
  EXPECT_FALSE(ParseDeviceDatabase(R"({"devices": []})", "db.json").has_value());
  EXPECT_FALSE(
      ParseDeviceDatabase(R"({"schema_version": 2, "devices": [)" + UserDevice() + "]}", "db.json")
          .has_value());
  Result<std::vector<Device>> extra =
      ParseDeviceDatabase(R"({"gpus": [], "devices": [)" + UserDevice() + "]}", "db.json");
  ASSERT_FALSE(extra.has_value());
  EXPECT_NE(extra.error().message.find("field 'gpus'"), std::string::npos);
  Result<std::vector<Device>> index = ParseDeviceDatabase(
      R"({"devices": [)" + UserDevice() + R"(, {"name": "second", "memory_bytes": -1}]})",
      "db.json");
  ASSERT_FALSE(index.has_value());
  EXPECT_NE(index.error().message.find("db.json: device 'second': field 'memory_bytes'"),
            std::string::npos)
      << index.error().message;
}

TEST(LoadDeviceFile, RejectsMissingFile) {
  TempDir dir;
  const std::string path = dir.path() + "/nope.json";
  Result<Device> d = LoadDeviceFile(path);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message.find(path), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("cannot open"), std::string::npos) << d.error().message;
}

TEST(LoadDeviceFile, RejectsDirectory) {
  TempDir dir;
  Result<Device> d = LoadDeviceFile(dir.path());
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message.find(dir.path()), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("directory"), std::string::npos) << d.error().message;
}

TEST(LoadDeviceFile, ErrorsNameTheFile) {
  TempDir dir;
  const std::string file = dir.Write("bad.json", UserDevice(R"(, "colour": "green")"));
  Result<Device> d = LoadDeviceFile(file);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().message.rfind(file + ": device 'my-gpu': field 'colour'", 0), 0u)
      << d.error().message;
  const std::string empty = dir.Write("empty.json", "");
  Result<Device> e = LoadDeviceFile(empty);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find(empty), std::string::npos);
}

}  // namespace
}  // namespace opscope::device
