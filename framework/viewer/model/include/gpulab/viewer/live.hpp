// Live runs: a worker thread works through a plan of configurations (one benchmark size, one
// attention shape, one block size, ...) and hands over each configuration's results as soon as it
// finishes, so the window stays responsive and the panels fill in while the run goes on.
//
// The runner knows nothing about kernels: a plan is a list of steps, each a function returning
// results (experiments.hpp builds the real plans). The model takes finished results once per frame
// (take_results) and the panels show status() as progress. cancel() stops the run after the step
// in progress (each step checks its stop_token where it can stop early).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpulab/core/results.hpp"

namespace gpulab::viewer {

/// One configuration of a run.
struct RunStep {
  std::string label;  ///< shown while it runs, e.g. "vector_add n=1048576"
  /// Does the work and returns its results; may throw (the run then fails with the message).
  std::function<std::vector<Result>(std::stop_token)> run;
};

/// What a run does.
struct RunPlan {
  std::string name;            ///< e.g. "bandwidth sweep"
  std::vector<RunStep> steps;  ///< in order
};

/// Where a run is.
enum class RunState {
  idle,       ///< nothing started yet
  running,    ///< a step is in progress
  finished,   ///< every step done
  cancelled,  ///< stopped by cancel()
  failed,     ///< a step threw; RunStatus::error says what
};

/// "idle", "running", "finished", "cancelled", "failed".
[[nodiscard]] std::string_view to_string(RunState state) noexcept;

/// A snapshot of the run for the panels.
struct RunStatus {
  RunState state = RunState::idle;
  std::size_t run = 0;    ///< how many runs this runner has started (1 for the first)
  std::string plan;       ///< RunPlan::name of the current or last run
  std::size_t done = 0;   ///< steps finished
  std::size_t total = 0;  ///< steps in the plan
  std::string current;    ///< label of the step in progress; empty when none
  std::string error;      ///< one line when state is failed
  double elapsed_s = 0;   ///< wall time since the run started (until it ended)
};

/// Runs plans on one worker thread, one plan at a time. Neither copyable nor movable (the worker
/// refers to it); the destructor cancels a run in progress and waits for its step to end.
class LiveRunner {
 public:
  LiveRunner() = default;
  ~LiveRunner();
  LiveRunner(const LiveRunner&) = delete;
  LiveRunner& operator=(const LiveRunner&) = delete;
  LiveRunner(LiveRunner&&) = delete;
  LiveRunner& operator=(LiveRunner&&) = delete;

  /// Starts `plan` on the worker; false (and nothing started) while another run is in progress.
  bool start(RunPlan plan);
  /// Asks the run to stop: no new step starts, the step in progress sees its stop_token.
  void cancel();
  /// A snapshot of the run.
  [[nodiscard]] RunStatus status() const;
  /// Results finished since the last call, in order.
  [[nodiscard]] std::vector<Result> take_results();
  /// Blocks until no run is in progress.
  void wait();

 private:
  void work(std::stop_token stop, RunPlan plan);

  mutable std::mutex mutex_;
  std::condition_variable ended_;  // notified when a run leaves the running state
  RunStatus status_;
  std::chrono::steady_clock::time_point started_;
  std::vector<Result> finished_;
  std::jthread worker_;
};

}  // namespace gpulab::viewer
