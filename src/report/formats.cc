// The format tables (see formats.h): each row adapts one renderer of render.h.
#include "report/formats.h"

#include "report/render.h"

namespace opscope::report {
namespace {

using Pieces = std::vector<std::string>;

Pieces One(std::string text) {
  Pieces pieces;
  pieces.push_back(std::move(text));
  return pieces;
}

constexpr Format<ReportModel> kReportFormats[] = {
    {"text", [](const ReportModel& m, const RenderOptions& o) {
       return One(RenderText(m, TextStyle{o.color}));
     }},
    {"json", [](const ReportModel& m, const RenderOptions&) { return One(RenderJson(m)); }},
    {"csv", [](const ReportModel& m, const RenderOptions&) { return One(RenderCsv(m)); }},
    {"svg", [](const ReportModel& m, const RenderOptions&) { return One(RenderSvg(m)); }},
    {"html", [](const ReportModel& m, const RenderOptions&) { return One(RenderHtml(m)); }},
};

constexpr Format<sweep::SweepResult> kSweepFormats[] = {
    {"csv", [](const sweep::SweepResult& r, const RenderOptions&) { return RenderSweepCsvParts(r); }},
    {"json", [](const sweep::SweepResult& r, const RenderOptions&) { return One(RenderSweepJson(r)); }},
    {"svg", [](const sweep::SweepResult& r, const RenderOptions&) { return One(RenderSweepSvg(r)); }},
    {"html", [](const sweep::SweepResult& r, const RenderOptions&) { return One(RenderSweepHtml(r)); }},
};

constexpr Format<plan::PlanResult> kPlanFormats[] = {
    {"text", [](const plan::PlanResult& r, const RenderOptions&) { return One(RenderPlanText(r)); }},
    {"json", [](const plan::PlanResult& r, const RenderOptions&) { return One(RenderPlanJson(r)); }},
    {"csv", [](const plan::PlanResult& r, const RenderOptions&) { return One(RenderPlanCsv(r)); }},
    {"html", [](const plan::PlanResult& r, const RenderOptions&) { return One(RenderPlanHtml(r)); }},
};

constexpr Format<DeviceList> kDeviceListFormats[] = {
    {"text", [](const DeviceList& l, const RenderOptions&) { return One(RenderDevicesText(l.devices)); }},
    {"json", [](const DeviceList& l, const RenderOptions&) { return One(RenderDevicesJson(l.devices)); }},
};

constexpr Format<PresetList> kPresetListFormats[] = {
    {"text", [](const PresetList& l, const RenderOptions&) { return One(RenderPresetsText(l.presets)); }},
    {"json", [](const PresetList& l, const RenderOptions&) { return One(RenderPresetsJson(l.presets)); }},
};

}  // namespace

std::span<const Format<ReportModel>> ReportFormats() { return kReportFormats; }
std::span<const Format<sweep::SweepResult>> SweepFormats() { return kSweepFormats; }
std::span<const Format<plan::PlanResult>> PlanFormats() { return kPlanFormats; }
std::span<const Format<DeviceList>> DeviceListFormats() { return kDeviceListFormats; }
std::span<const Format<PresetList>> PresetListFormats() { return kPresetListFormats; }

}  // namespace opscope::report
