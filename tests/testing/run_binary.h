// Runs the opscope binary as a user does — the one helper of every test that runs it: from
// the source directory, argv without a shell, stdin from /dev/null, exit status, stdout and
// stderr captured; optionally more environment, another copy of the binary, a wall-clock limit
// and an address-space limit. Needs OPSCOPE_SOURCE_DIR and OPSCOPE_BINARY (tests/CMakeLists).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace opscope::testing {

struct Outcome {
  int status = -1;         // exit status, or 128 + the signal that ended it
  bool timed_out = false;  // killed at the time limit
  double seconds = 0;      // wall-clock
  // User + system CPU time of the run: unlike wall-clock, barely moved by other processes on a
  // shared machine (what a test bounds when it checks that work does not blow up).
  double cpu_seconds = 0;
  std::string out, err;
};

struct RunOptions {
  std::string binary = OPSCOPE_BINARY;
  std::vector<std::string> env;      // "NAME=value", added to (or replacing in) the environment
  int time_limit_s = 0;              // 0: none
  uint64_t address_space_bytes = 0;  // RLIMIT_AS; 0: none
};

// The whole file (empty when it cannot be read).
inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A command line written as one string, split at spaces (no quoting).
inline std::vector<std::string> Args(std::string_view line) {
  std::vector<std::string> args;
  size_t start = 0;
  while (start < line.size()) {
    const size_t space = line.find(' ', start);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    if (end > start) args.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

namespace detail {

// The child's environment: ours, with `extra` added (a NAME= already present is replaced).
inline std::vector<std::string> Environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || x.starts_with(name);
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

inline std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace detail

inline Outcome RunOpscope(const std::vector<std::string>& args, const RunOptions& options = {}) {
  namespace fs = std::filesystem;
  std::string scratch_template = (fs::temp_directory_path() / "opscope_run_XXXXXX").string();
  const fs::path scratch = ::mkdtemp(scratch_template.data());
  const fs::path out_path = scratch / "stdout", err_path = scratch / "stderr";
  // Everything the child needs is made before the fork: it only opens, redirects and execs.
  std::vector<std::string> argv_strings{options.binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = detail::Environment(options.env);
  std::vector<char*> argv = detail::Pointers(argv_strings), envp = detail::Pointers(env_strings);
  const std::string source = OPSCOPE_SOURCE_DIR, out_file = out_path, err_file = err_path;

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (::chdir(source.c_str()) != 0 || in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 ||
        ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) {
      ::_exit(126);
    }
    if (options.address_space_bytes != 0) {
      struct rlimit as {};
      as.rlim_cur = as.rlim_max = options.address_space_bytes;
      ::setrlimit(RLIMIT_AS, &as);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  Outcome o;
  int status = 0;
  struct rusage usage {};
  if (options.time_limit_s == 0) {
    ::wait4(pid, &status, 0, &usage);
  } else {
    const auto limit = std::chrono::seconds(options.time_limit_s);
    while (::wait4(pid, &status, WNOHANG, &usage) != pid) {
      if (std::chrono::steady_clock::now() - start > limit) {
        ::kill(pid, SIGKILL);
        ::wait4(pid, &status, 0, &usage);
        o.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto to_s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  o.cpu_seconds = to_s(usage.ru_utime) + to_s(usage.ru_stime);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = ReadAll(out_path);
  o.err = ReadAll(err_path);
  std::error_code ec;
  fs::remove_all(scratch, ec);
  return o;
}

}  // namespace opscope::testing
