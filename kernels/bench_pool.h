// A minimal persistent thread pool for the kernels/ benchmarks only: `nth` threads run
// fn(ith, nth) and the caller waits; workers spin between runs (benchmarks want no wake-up
// latency). The graph executor has its own pool (cpu/threadpool.h).
#ifndef GGML_WHISPER_KERNELS_BENCH_POOL_H_
#define GGML_WHISPER_KERNELS_BENCH_POOL_H_

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace ggml_cpu {

class BenchPool {
 public:
  explicit BenchPool(int nth) : nth_(nth) {
    for (int i = 1; i < nth; ++i) workers_.emplace_back([this, i] { Loop(i); });
  }
  ~BenchPool() {
    stop_.store(true);
    generation_.fetch_add(1);
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return nth_; }

  // Runs fn(ith, nth) on all threads (ith 0 on the caller) and returns when all are done.
  void Run(const std::function<void(int, int)>& fn) {
    fn_ = &fn;
    pending_.store(nth_ - 1);
    generation_.fetch_add(1, std::memory_order_release);
    fn(0, nth_);
    while (pending_.load(std::memory_order_acquire) != 0) {
    }
  }

 private:
  void Loop(int ith) {
    unsigned seen = 0;
    for (;;) {
      unsigned g;
      while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      }
      seen = g;
      if (stop_.load()) return;
      (*fn_)(ith, nth_);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  const int nth_;
  std::vector<std::thread> workers_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int, int)>* fn_ = nullptr;
};

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_BENCH_POOL_H_
