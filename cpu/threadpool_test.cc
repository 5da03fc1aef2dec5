#include "cpu/threadpool.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ggml/ggml.h"
#include "gtest/gtest.h"

namespace {

struct Calls {
  std::vector<std::atomic<int>> count;     // calls seen per ith
  std::vector<std::atomic<int>> nth_seen;  // nth passed to that ith
  explicit Calls(int n) : count(n), nth_seen(n) {}
};

void CountCall(void* arg, int ith, int nth) {
  auto* calls = static_cast<Calls*>(arg);
  calls->count[ith].fetch_add(1);
  calls->nth_seen[ith].store(nth);
}

TEST(ThreadpoolTest, RunCallsEachIthExactlyOnce) {
  constexpr int kThreads = 5;
  ggml_threadpool* tp = ggml_threadpool_new(kThreads);
  ASSERT_NE(tp, nullptr) << ggml_last_error();
  EXPECT_EQ(ggml_threadpool_get_n_threads(tp), kThreads);
  for (int nth = 1; nth <= kThreads; ++nth) {
    Calls calls(kThreads);
    ASSERT_TRUE(ggml_threadpool_run(tp, nth, CountCall, &calls)) << ggml_last_error();
    for (int i = 0; i < kThreads; ++i) {
      EXPECT_EQ(calls.count[i].load(), i < nth ? 1 : 0) << "nth " << nth << " ith " << i;
      if (i < nth) {
        EXPECT_EQ(calls.nth_seen[i].load(), nth);
      }
    }
  }
  ggml_threadpool_free(tp);
}

// ith 0 runs on the calling thread, the others on distinct worker threads.
struct ThreadIds {
  std::vector<std::thread::id> id;
};
void RecordThread(void* arg, int ith, int) { static_cast<ThreadIds*>(arg)->id[ith] = std::this_thread::get_id(); }

TEST(ThreadpoolTest, CallerIsThreadZeroAndWorkersAreDistinct) {
  ggml_threadpool* tp = ggml_threadpool_new(4);
  ASSERT_NE(tp, nullptr);
  ThreadIds ids{std::vector<std::thread::id>(4)};
  ASSERT_TRUE(ggml_threadpool_run(tp, 4, RecordThread, &ids));
  EXPECT_EQ(ids.id[0], std::this_thread::get_id());
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) EXPECT_NE(ids.id[i], ids.id[j]);
  }
  // The same workers serve the next run: threads are persistent.
  ThreadIds again{std::vector<std::thread::id>(4)};
  ASSERT_TRUE(ggml_threadpool_run(tp, 4, RecordThread, &again));
  EXPECT_EQ(ids.id, again.id);
  ggml_threadpool_free(tp);
}

// A chain of dependent phases: phase p reads what the neighbour wrote in phase p - 1. Without a
// working barrier a thread would read a stale value and the result would differ from the serial
// computation.
constexpr int64_t kPrime = 1000003;

struct Phases {
  ggml_threadpool* tp;
  int n_phases;
  std::vector<std::vector<int64_t>> v;  // [phase][ith], plain (non-atomic) data
};

void PhaseWork(void* arg, int ith, int nth) {
  auto* p = static_cast<Phases*>(arg);
  for (int phase = 1; phase < p->n_phases; ++phase) {
    p->v[phase][ith] = (p->v[phase - 1][(ith + 1) % nth] + 2 * p->v[phase - 1][ith] + 1) % kPrime;
    ggml_threadpool_barrier(p->tp);
  }
}

TEST(ThreadpoolTest, BarrierOrdersDependentPhases) {
  constexpr int kThreads = 4;
  constexpr int kPhases = 300;
  ggml_threadpool* tp = ggml_threadpool_new(kThreads);
  ASSERT_NE(tp, nullptr);
  for (int nth = 1; nth <= kThreads; ++nth) {
    std::vector<std::vector<int64_t>> expect(kPhases, std::vector<int64_t>(nth, 0));
    for (int i = 0; i < nth; ++i) expect[0][i] = i + 1;
    for (int phase = 1; phase < kPhases; ++phase) {
      for (int i = 0; i < nth; ++i) {
        expect[phase][i] = (expect[phase - 1][(i + 1) % nth] + 2 * expect[phase - 1][i] + 1) % kPrime;
      }
    }
    for (int rep = 0; rep < 20; ++rep) {
      Phases p{tp, kPhases, std::vector<std::vector<int64_t>>(kPhases, std::vector<int64_t>(nth, 0))};
      p.v[0] = expect[0];
      ASSERT_TRUE(ggml_threadpool_run(tp, nth, PhaseWork, &p));
      ASSERT_EQ(p.v, expect) << "nth " << nth << " rep " << rep;
    }
  }
  ggml_threadpool_free(tp);
}

void Increment(void* arg, int ith, int) {
  if (ith == 0) ++*static_cast<int64_t*>(arg);
}

// Many short runs back to back (the executor's pattern for small graphs); also exercises the
// sleep/wake path when the caller is slower than the spin window.
TEST(ThreadpoolTest, ManyRunsReuseTheSameThreads) {
  ggml_threadpool* tp = ggml_threadpool_new(3);
  ASSERT_NE(tp, nullptr);
  int64_t counter = 0;
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(ggml_threadpool_run(tp, 1 + i % 3, Increment, &counter));
  EXPECT_EQ(counter, 20000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the workers fall asleep
  ASSERT_TRUE(ggml_threadpool_run(tp, 3, Increment, &counter));
  EXPECT_EQ(counter, 20001);
  ggml_threadpool_free(tp);
}

TEST(ThreadpoolTest, SingleThreadPoolHasNoWorkers) {
  ggml_threadpool* tp = ggml_threadpool_new(1);
  ASSERT_NE(tp, nullptr);
  Calls calls(1);
  ASSERT_TRUE(ggml_threadpool_run(tp, 1, CountCall, &calls));
  EXPECT_EQ(calls.count[0].load(), 1);
  EXPECT_FALSE(ggml_threadpool_run(tp, 2, CountCall, &calls));
  ggml_threadpool_free(tp);
}

TEST(ThreadpoolTest, BadArgumentsReturnErrors) {
  EXPECT_EQ(ggml_threadpool_new(0), nullptr);
  EXPECT_NE(std::string(ggml_last_error()).find("n_threads 0 is not in [1, 512]"), std::string::npos)
      << ggml_last_error();
  EXPECT_EQ(ggml_threadpool_new(GGML_THREADPOOL_MAX_THREADS + 1), nullptr);

  ggml_threadpool* tp = ggml_threadpool_new(2);
  ASSERT_NE(tp, nullptr);
  Calls calls(2);
  EXPECT_FALSE(ggml_threadpool_run(tp, 0, CountCall, &calls));
  EXPECT_NE(std::string(ggml_last_error()).find("nth 0 is not in [1, 2]"), std::string::npos) << ggml_last_error();
  EXPECT_FALSE(ggml_threadpool_run(tp, 3, CountCall, &calls));
  EXPECT_FALSE(ggml_threadpool_run(tp, 2, nullptr, &calls));
  EXPECT_FALSE(ggml_threadpool_run(nullptr, 1, CountCall, &calls));
  EXPECT_EQ(calls.count[0].load() + calls.count[1].load(), 0);
  ggml_threadpool_free(tp);
  ggml_threadpool_free(nullptr);  // no-op
  ggml_threadpool_barrier(nullptr);  // no-op outside a pool
}

struct Nested {
  ggml_threadpool* tp;
  bool inner_ok = true;
  std::string error;
};
void TryNestedRun(void* arg, int ith, int) {
  auto* n = static_cast<Nested*>(arg);
  if (ith != 0) return;
  n->inner_ok = ggml_threadpool_run(n->tp, 1, Increment, nullptr);
  n->error = ggml_last_error();
}

TEST(ThreadpoolTest, NestedRunIsRefused) {
  Nested n{ggml_threadpool_new(2), true, ""};
  ASSERT_NE(n.tp, nullptr);
  ASSERT_TRUE(ggml_threadpool_run(n.tp, 2, TryNestedRun, &n));
  EXPECT_FALSE(n.inner_ok);
  EXPECT_NE(n.error.find("another run of this pool is in progress"), std::string::npos) << n.error;
  ggml_threadpool_free(n.tp);
}

}  // namespace
