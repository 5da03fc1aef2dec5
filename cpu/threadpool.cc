// Persistent thread pool (see threadpool.h).
//
// Synchronization, all through std::atomic (so ThreadSanitizer understands it):
//   - A run is published by writing fn/arg/nth and then incrementing `epoch`; a worker reads the
//     fields only after it has seen the new epoch. The caller returns only after every worker
//     has incremented `n_done`, after its last read of the fields, so the next run may overwrite
//     them.
//   - The barrier is a counter plus a phase: the last thread to arrive resets the counter and
//     bumps the phase; the others wait for the phase to change.
//   - Waiting spins, then yields for up to 300 us, then sleeps on one condition variable per pool.
//     A sleeper registers in `n_sleepers` (under the mutex) before re-checking its condition; a
//     waker changes the condition and then reads `n_sleepers`. Both are sequentially consistent,
//     so either the waker sees the sleeper and notifies it (after taking the mutex, which the
//     sleeper holds until it is inside wait()), or the sleeper sees the new condition.
#include "cpu/threadpool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "ggml/ggml.h"

namespace {

// Waiting escalates: kSpinIterations pause instructions (about 12 us on an AMD EPYC, 48 ns per
// pause; less on Intel), enough to bridge the gap between two graph nodes when every thread has
// a core; then sched_yield calls for kYieldMicros, which hand the core to a runnable thread when
// the pool has more threads than free cores (another thread of the pool may be the one everybody
// waits for); then sleep on the condition variable.
//
// kYieldMicros covers the gap between two decoder steps (the caller samples the token and builds
// and allocates the next graph: 100-150 us for tiny.en), so that the workers are awake when the
// next graph starts. Waking a sleeper through the condition variable took 40-50 us on a 2-vCPU
// VM (AMD Zen 5): with 64 yields (a few us) instead, thread 0 waited that long at the first node
// of every decoder step, 3.5% of a 2-thread step (bench -p: GET_ROWS wait 11 ms per 256 steps,
// 0.4 ms with this deadline).
constexpr int kSpinIterations = 256;
constexpr auto kYieldMicros = std::chrono::microseconds(300);
constexpr int kYieldsPerClockRead = 16;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

struct ggml_threadpool {
  int n_threads = 1;
  std::vector<std::thread> workers;  // n_threads - 1, started in ggml_threadpool_new

  // The current run: written by the caller before `epoch` is incremented, read-only afterwards.
  ggml_threadpool_fn fn = nullptr;
  void* arg = nullptr;
  int nth = 1;

  std::atomic<uint64_t> epoch{0};   // number of runs published to the workers
  std::atomic<int> n_done{0};       // workers finished with the current run
  std::atomic<bool> stop{false};    // set once, by ggml_threadpool_free
  std::atomic<bool> busy{false};    // a run is in progress

  std::atomic<int> n_arrived{0};        // threads waiting at the current barrier
  std::atomic<uint32_t> barrier_phase{0};  // incremented when a barrier opens

  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int> n_sleepers{0};
};

namespace {

// Returns once done() is true: spins, then sleeps until a WakeAll. done() must read atomics with
// sequentially consistent loads.
template <class Done>
void WaitUntil(ggml_threadpool* tp, const Done& done) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (done()) return;
    CpuRelax();
  }
  const auto deadline = std::chrono::steady_clock::now() + kYieldMicros;
  do {
    for (int i = 0; i < kYieldsPerClockRead; ++i) {
      if (done()) return;
      std::this_thread::yield();
    }
  } while (std::chrono::steady_clock::now() < deadline);
  std::unique_lock<std::mutex> lock(tp->mu);
  tp->n_sleepers.fetch_add(1);
  while (!done()) tp->cv.wait(lock);
  tp->n_sleepers.fetch_sub(1);
}

// Wakes every sleeper; call after the (sequentially consistent) store that satisfies a waiter.
void WakeAll(ggml_threadpool* tp) {
  if (tp->n_sleepers.load() == 0) return;
  { std::lock_guard<std::mutex> lock(tp->mu); }
  tp->cv.notify_all();
}

void WorkerMain(ggml_threadpool* tp, int ith) {
  const int n_workers = tp->n_threads - 1;
  uint64_t seen = 0;
  for (;;) {
    WaitUntil(tp, [&] { return tp->stop.load() || tp->epoch.load() != seen; });
    if (tp->stop.load()) return;
    seen = tp->epoch.load();
    if (ith < tp->nth) tp->fn(tp->arg, ith, tp->nth);
    if (tp->n_done.fetch_add(1) + 1 == n_workers) WakeAll(tp);
  }
}

void StopAndJoin(ggml_threadpool* tp) {
  tp->stop.store(true);
  WakeAll(tp);
  for (std::thread& t : tp->workers) {
    if (t.joinable()) t.join();
  }
}

}  // namespace

extern "C" {

ggml_threadpool* ggml_threadpool_new(int n_threads) {
  if (n_threads < 1 || n_threads > GGML_THREADPOOL_MAX_THREADS) {
    ggml_set_error("ggml_threadpool_new: n_threads %d is not in [1, %d]", n_threads,
                   GGML_THREADPOOL_MAX_THREADS);
    return nullptr;
  }
  ggml_threadpool* tp = new (std::nothrow) ggml_threadpool;
  if (tp == nullptr) {
    ggml_set_error("ggml_threadpool_new: out of memory");
    return nullptr;
  }
  tp->n_threads = n_threads;
  try {
    tp->workers.reserve(static_cast<size_t>(n_threads - 1));
    for (int ith = 1; ith < n_threads; ++ith) tp->workers.emplace_back(WorkerMain, tp, ith);
  } catch (const std::exception& e) {
    const int started = static_cast<int>(tp->workers.size());
    StopAndJoin(tp);
    delete tp;
    ggml_set_error("ggml_threadpool_new: could not start worker thread %d of %d: %s", started + 1,
                   n_threads - 1, e.what());
    return nullptr;
  }
  return tp;
}

void ggml_threadpool_free(ggml_threadpool* tp) {
  if (tp == nullptr) return;
  StopAndJoin(tp);
  delete tp;
}

int ggml_threadpool_get_n_threads(const ggml_threadpool* tp) { return tp == nullptr ? 0 : tp->n_threads; }

bool ggml_threadpool_run(ggml_threadpool* tp, int nth, ggml_threadpool_fn fn, void* arg) {
  if (tp == nullptr || fn == nullptr) {
    ggml_set_error("ggml_threadpool_run: %s is NULL", tp == nullptr ? "the pool" : "the work function");
    return false;
  }
  if (nth < 1 || nth > tp->n_threads) {
    ggml_set_error("ggml_threadpool_run: nth %d is not in [1, %d] (the pool's n_threads)", nth, tp->n_threads);
    return false;
  }
  bool idle = false;
  if (!tp->busy.compare_exchange_strong(idle, true)) {
    ggml_set_error("ggml_threadpool_run: another run of this pool is in progress (runs are not reentrant)");
    return false;
  }
  tp->fn = fn;
  tp->arg = arg;
  tp->nth = nth;
  if (nth == 1) {
    fn(arg, 0, 1);  // the workers stay asleep
  } else {
    const int n_workers = tp->n_threads - 1;
    tp->n_done.store(0);
    tp->epoch.fetch_add(1);
    WakeAll(tp);
    fn(arg, 0, nth);
    WaitUntil(tp, [&] { return tp->n_done.load() == n_workers; });
  }
  tp->busy.store(false);
  return true;
}

void ggml_threadpool_barrier(ggml_threadpool* tp) {
  if (tp == nullptr) return;
  const int nth = tp->nth;
  if (nth <= 1) return;
  const uint32_t phase = tp->barrier_phase.load();
  if (tp->n_arrived.fetch_add(1) == nth - 1) {
    // Last to arrive: nobody can arrive at the next barrier before the phase changes.
    tp->n_arrived.store(0);
    tp->barrier_phase.fetch_add(1);
    WakeAll(tp);
  } else {
    WaitUntil(tp, [&] { return tp->barrier_phase.load() != phase; });
  }
}

}  // extern "C"
