#include "cli/railyardd/slurm_sync.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>

#include "controller/rail_health.h"
#include "controller/slurm_drain_sync.h"

extern char** environ;

namespace railyard::railyardd {

namespace {

struct Run {
  int status = -1;  // exit status; -1 when it could not run or was killed
  std::string output;  // stdout and stderr
};

// Runs argv (no shell) with SLURM_CONF set when given, for at most `timeout`,
// or until *stop (railyardd stopping: scontrol may retry an absent slurmctld
// for many seconds); then the child is killed by its PID.
Run run_command(const std::vector<std::string>& args, const std::string& slurm_conf, std::chrono::seconds timeout,
                const std::atomic<bool>* stop) {
  Run out;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) {
    if (!slurm_conf.empty() && std::string_view(*e).rfind("SLURM_CONF=", 0) == 0) continue;
    env_store.emplace_back(*e);
  }
  if (!slurm_conf.empty()) env_store.push_back("SLURM_CONF=" + slurm_conf);
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    out.output = std::string("cannot run ") + args[0] + ": " + std::strerror(rc);
    return out;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  bool killed = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stop->load()) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.output.size() < (1u << 24)) out.output.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    out.output += "\n(killed after " + std::to_string(timeout.count()) + " s)";
  } else if (WIFEXITED(status)) {
    out.status = WEXITSTATUS(status);
  }
  return out;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

SlurmSync::SlurmSync(controller::Controller& c, const controller::ControllerConfig& config)
    : c_(c), scontrol_(config.slurm_scontrol), slurm_conf_(config.slurm_conf), interval_s_(config.slurm_interval_s) {}

SlurmSync::~SlurmSync() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlurmSync::start() {
  spdlog::info("slurm drain sync: every {} s through {}{}", interval_s_, scontrol_,
               slurm_conf_.empty() ? "" : " (SLURM_CONF=" + slurm_conf_ + ")");
  thread_ = std::thread([this] { run(); });
}

void SlurmSync::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    try {
      sync_once();
    } catch (const std::exception& e) {
      spdlog::error("slurm drain sync: {}", e.what());
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(interval_s_), [this] { return stop_; });
  }
}

void SlurmSync::sync_once() {
  auto view = c_.view();
  if (!view) return;
  const controller::RailHealthMap health = controller::rail_health(*view, *c_.links());
  const Run show =
      run_command({scontrol_, "show", "node", "--oneliner"}, slurm_conf_, std::chrono::seconds(20), &stopping_);
  if (stopping_) return;
  if (show.status != 0) {
    spdlog::warn("slurm drain sync: `{} show node --oneliner` failed: {}", scontrol_, one_line(show.output));
    return;
  }
  const auto nodes = controller::parse_scontrol_nodes(show.output);
  for (const controller::SlurmAction& a : controller::plan_drain_sync(health, nodes)) {
    std::vector<std::string> args = {scontrol_, "update", "NodeName=" + a.node};
    if (a.kind == controller::SlurmAction::Kind::kDrain) {
      args.push_back("State=DRAIN");
      args.push_back("Reason=" + a.reason);
    } else {
      args.push_back("State=UNDRAIN");  // clears our drain, leaves the base state (DOWN stays DOWN)
    }
    if (stopping_) return;
    const Run r = run_command(args, slurm_conf_, std::chrono::seconds(20), &stopping_);
    const char* what = a.kind == controller::SlurmAction::Kind::kDrain ? "drain" : "undrain";
    bool done = r.status == 0;
    if (!done && a.kind == controller::SlurmAction::Kind::kResume) {
      // Without a slurmd answering, scontrol clears the drain and still
      // exits 1 ("Invalid node state specified"): look.
      const Run check =
          run_command({scontrol_, "show", "node", "--oneliner", a.node}, slurm_conf_, std::chrono::seconds(20), &stopping_);
      const auto now = controller::parse_scontrol_nodes(check.output);
      done = check.status == 0 && now.size() == 1 && !now[0].drain;
    }
    if (done) {
      spdlog::info("slurm drain sync: {} {}{}", what, a.node, a.reason.empty() ? "" : " (" + a.reason + ")");
    } else {
      spdlog::warn("slurm drain sync: {} {} failed: {}", what, a.node, one_line(r.output));
    }
  }
}

}  // namespace railyard::railyardd
