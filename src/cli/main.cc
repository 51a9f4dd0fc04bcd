// The opscope binary: parses the command line and dispatches to one subcommand. Every error
// ends as one line "opscope: error: ..." on stderr and exit status 2.
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"

namespace {

int ReportError(std::string message) {
  // CLI11 capitalises its messages ("Could not convert"); ours are lower-case. Leave
  // identifiers such as "MODEL is required" or "--dim ..." as they are.
  if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
      std::islower(static_cast<unsigned char>(message[1]))) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  while (!message.empty() && (message.back() == '\n' || message.back() == '.')) message.pop_back();
  std::fprintf(stderr, "opscope: error: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "opscope: predicts, before anything runs, the bytes each op of an ML model must move,\n"
      "the FLOPs it must do, its roofline time on a device, and what bounds it.",
      "opscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "opscope 0.1.0");
  std::vector<opscope::cli::Command> commands;
  commands.push_back(opscope::cli::AddAnalyzeCommand(app));
#ifdef OPSCOPE_HAVE_LLM
  commands.push_back(opscope::cli::AddLlmCommand(app));
  commands.push_back(opscope::cli::AddSweepCommand(app));
  commands.push_back(opscope::cli::AddPlanCommand(app));
#endif
  commands.push_back(opscope::cli::AddDevicesCommand(app));
  commands.push_back(opscope::cli::AddCalibrateCommand(app));
  opscope::cli::RefuseOutOfRangeIntegers(app);
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const auto& command : commands) {
      found = found || command.app->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + command.app->get_name();
    }
    if (!found) {
      return ReportError("unknown command '" + std::string(argv[1]) + "' (commands: " + known +
                         "; see 'opscope --help')");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return ReportError(e.what());
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) {
      auto status = command.run();
      if (!status) return ReportError(status.error().message);
      return *status;
    }
  }
  return ReportError("no command given (try 'opscope --help')");
}
