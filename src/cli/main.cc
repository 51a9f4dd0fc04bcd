// The opscope binary: parses the command line and dispatches to one subcommand. Every error
// ends as one line "opscope: error: ..." on stderr and exit status 2.
#include <cctype>
#include <cstdio>
#include <vector>

#include "cli/commands.h"

namespace {

int ReportError(std::string message) {
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(message[0]));
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
#endif
  commands.push_back(opscope::cli::AddDevicesCommand(app));
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
