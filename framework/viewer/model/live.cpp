#include "gpulab/viewer/live.hpp"

#include <exception>
#include <system_error>
#include <utility>

namespace gpulab::viewer {

std::string_view to_string(RunState state) noexcept {
  switch (state) {
    case RunState::idle:
      return "idle";
    case RunState::running:
      return "running";
    case RunState::finished:
      return "finished";
    case RunState::cancelled:
      return "cancelled";
    case RunState::failed:
      return "failed";
  }
  return "unknown";
}

LiveRunner::~LiveRunner() {
  cancel();
  if (worker_.joinable()) {
    worker_.join();
  }
}

bool LiveRunner::start(RunPlan plan) {
  {
    std::scoped_lock lock(mutex_);
    if (status_.state == RunState::running) {
      return false;
    }
  }
  // The previous worker has finished its plan (its state is no longer running); join it before
  // starting the next one.
  if (worker_.joinable()) {
    worker_.join();
  }
  {
    std::scoped_lock lock(mutex_);
    status_ =
        RunStatus{RunState::running, status_.run + 1, plan.name, 0, plan.steps.size(), "", "", 0};
    started_ = std::chrono::steady_clock::now();
  }
  try {
    worker_ = std::jthread([this, plan = std::move(plan)](std::stop_token stop) mutable {
      work(std::move(stop), std::move(plan));
    });
  } catch (const std::system_error& e) {
    // No thread (out of threads or memory): the run ends at once, failed, with the reason.
    {
      std::scoped_lock lock(mutex_);
      status_.state = RunState::failed;
      status_.error = std::string("cannot start the worker thread: ") + e.what();
    }
    ended_.notify_all();
  }
  return true;
}

void LiveRunner::cancel() {
  worker_.request_stop();
}

RunStatus LiveRunner::status() const {
  std::scoped_lock lock(mutex_);
  RunStatus status = status_;
  if (status.state == RunState::running) {
    status.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  return status;
}

std::vector<Result> LiveRunner::take_results() {
  std::scoped_lock lock(mutex_);
  return std::exchange(finished_, {});
}

void LiveRunner::wait() {
  std::unique_lock lock(mutex_);
  ended_.wait(lock, [this] { return status_.state != RunState::running; });
}

void LiveRunner::work(std::stop_token stop, RunPlan plan) {
  RunState end = RunState::finished;
  std::string error;
  for (RunStep& step : plan.steps) {
    if (stop.stop_requested()) {
      end = RunState::cancelled;
      break;
    }
    {
      std::scoped_lock lock(mutex_);
      status_.current = step.label;
    }
    try {
      std::vector<Result> results = step.run(stop);
      std::scoped_lock lock(mutex_);
      for (Result& result : results) {
        finished_.push_back(std::move(result));
      }
      // A step that saw the stop may have returned early: it does not count as done.
      if (stop.stop_requested()) {
        end = RunState::cancelled;
        break;
      }
      ++status_.done;
    } catch (const std::exception& e) {
      end = RunState::failed;
      error = step.label + ": " + e.what();
      break;
    } catch (...) {
      end = RunState::failed;
      error = step.label + ": unknown error";
      break;
    }
  }
  {
    std::scoped_lock lock(mutex_);
    status_.state = end;
    status_.error = std::move(error);
    status_.current.clear();
    status_.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  ended_.notify_all();
}

}  // namespace gpulab::viewer
