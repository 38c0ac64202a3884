#include "queue.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "device_state.hpp"

namespace gpulab::sim::detail {
namespace {

// Worker threads for parallel_for. The calling thread (the device thread) works too, so a pool of
// N workers has N - 1 helper threads. They live as long as the process.
class WorkerPool {
 public:
  static WorkerPool& instance() {
    static auto* pool = new WorkerPool(start_workers());  // never destroyed: threads outlive main
    return *pool;
  }

  void run(std::size_t count, const std::function<void(std::size_t)>& body) {
    if (count == 0) {
      return;
    }
    if (helpers_.empty() || count == 1) {
      for (std::size_t i = 0; i < count; ++i) {
        body(i);
      }
      return;
    }
    {
      std::scoped_lock lock(mutex_);
      body_ = &body;
      count_ = count;
      next_.store(0, std::memory_order_relaxed);
      busy_ = helpers_.size();
      ++generation_;
    }
    start_.notify_all();
    drain(body, count);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  explicit WorkerPool(unsigned workers) {
    for (unsigned i = 1; i < workers; ++i) {
      helpers_.emplace_back([this] { help(); }).detach();
    }
  }

  void drain(const std::function<void(std::size_t)>& body, std::size_t count) {
    for (;;) {
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) {
        return;
      }
      body(i);
    }
  }

  void help() {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      const auto* body = body_;
      const std::size_t count = count_;
      lock.unlock();
      drain(*body, count);
      lock.lock();
      if (--busy_ == 0) {
        done_.notify_one();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  const std::function<void(std::size_t)>* body_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t busy_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::thread> helpers_;  // detached: they run until the process exits
};

}  // namespace

void parallel_for(std::size_t count, const std::function<void(std::size_t)>& body) {
  WorkerPool::instance().run(count, body);
}

DeviceQueue& DeviceQueue::instance() {
  static auto* queue = new DeviceQueue();  // never destroyed: the device thread outlives main
  return *queue;
}

std::uint64_t DeviceQueue::push(cudaStream_t stream, std::function<void()> work) {
  std::scoped_lock lock(mutex_);
  if (!started_) {
    std::thread([this] { loop(); }).detach();
    started_ = true;
  }
  const std::uint64_t seq = ++queued_seq_;
  work_.push_back(Work{seq, std::move(work), std::chrono::steady_clock::now()});
  last_by_stream_[stream] = seq;
  queued_.notify_one();
  return seq;
}

void DeviceQueue::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return !work_.empty(); });
    Work work = std::move(work_.front());
    work_.pop_front();
    const bool skip = sticky_ != cudaSuccess;  // after a failed kernel nothing else runs
    lock.unlock();
    ready_ = std::max(work.queued, previous_end_);
    if (!skip) {
      try {
        work.run();
      } catch (const std::exception& e) {
        set_sticky(cudaErrorUnknown, std::string("sim device work failed: ") + e.what());
      }
    }
    work.run = nullptr;  // destroy captured state (kernel arguments) before reporting completion
    previous_end_ = std::chrono::steady_clock::now();
    lock.lock();
    done_seq_ = work.seq;
    finished_.notify_all();
  }
}

void DeviceQueue::wait(std::uint64_t seq) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return done_seq_ >= seq; });
}

bool DeviceQueue::done(std::uint64_t seq) {
  std::scoped_lock lock(mutex_);
  return done_seq_ >= seq;
}

std::uint64_t DeviceQueue::last(cudaStream_t stream) {
  std::scoped_lock lock(mutex_);
  const auto it = last_by_stream_.find(stream);
  return it == last_by_stream_.end() ? 0 : it->second;
}

std::uint64_t DeviceQueue::last_any() {
  std::scoped_lock lock(mutex_);
  return queued_seq_;
}

void DeviceQueue::forget(cudaStream_t stream) {
  std::scoped_lock lock(mutex_);
  last_by_stream_.erase(stream);
}

cudaError_t DeviceQueue::sticky() {
  std::scoped_lock lock(mutex_);
  return sticky_;
}

std::string DeviceQueue::sticky_message() {
  std::scoped_lock lock(mutex_);
  return sticky_message_;
}

void DeviceQueue::set_sticky(cudaError_t error, std::string message) {
  std::fprintf(stderr, "gpulab sim: %s\n", message.c_str());
  std::scoped_lock lock(mutex_);
  if (sticky_ == cudaSuccess) {
    sticky_ = error;
    sticky_message_ = std::move(message);
  }
}

void DeviceQueue::clear_sticky() {
  std::scoped_lock lock(mutex_);
  sticky_ = cudaSuccess;
  sticky_message_.clear();
}

}  // namespace gpulab::sim::detail
