#include "testing/alloc_counter.h"

#include <stdlib.h>

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ggml_testing {
namespace {

// Stores results where the compiler cannot prove them unused (it may elide a malloc/free pair).
void* volatile g_sink;

class AllocCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!AllocCounter::Supported()) GTEST_SKIP() << "allocation counting is not supported in this build";
  }
};

TEST_F(AllocCounterTest, CountsEachAllocationFunctionOnce) {
  struct Case {
    const char* name;
    void* (*alloc)();
    void (*release)(void*);
  };
  const Case cases[] = {
      {"malloc", [] { return malloc(24); }, [](void* p) { free(p); }},
      {"calloc", [] { return calloc(3, 8); }, [](void* p) { free(p); }},
      {"aligned_alloc", [] { return aligned_alloc(64, 128); }, [](void* p) { free(p); }},
      {"posix_memalign",
       [] {
         void* p = nullptr;
         return posix_memalign(&p, 64, 100) == 0 ? p : nullptr;
       },
       [](void* p) { free(p); }},
      {"new", [] { return static_cast<void*>(new int(7)); }, [](void* p) { delete static_cast<int*>(p); }},
      {"new[]", [] { return static_cast<void*>(new double[5]); }, [](void* p) { delete[] static_cast<double*>(p); }},
      {"aligned new",
       [] {
         struct alignas(128) Big {
           char c[256];
         };
         return static_cast<void*>(new Big);
       },
       [](void* p) { ::operator delete(p, std::align_val_t(128)); }},
      {"nothrow new", [] { return static_cast<void*>(new (std::nothrow) char[3]); },
       [](void* p) { delete[] static_cast<char*>(p); }},
  };
  for (const Case& c : cases) {
    AllocCounter::Start();
    void* p = c.alloc();
    g_sink = p;
    const int64_t n = AllocCounter::Stop();
    EXPECT_NE(p, nullptr) << c.name;
    EXPECT_EQ(n, 1) << c.name;
    c.release(p);
  }
}

TEST_F(AllocCounterTest, CountsReallocAndBytes) {
  void* p = malloc(16);
  AllocCounter::Start();
  p = realloc(p, 4096);
  g_sink = p;
  EXPECT_EQ(AllocCounter::Allocations(), 1);
  EXPECT_EQ(AllocCounter::Bytes(), 4096);
  EXPECT_EQ(AllocCounter::Stop(), 1);
  free(p);
}

TEST_F(AllocCounterTest, CountsVectorGrowthAndStrings) {
  AllocCounter::Start();
  std::vector<int> v;
  for (int i = 0; i < 100; ++i) v.push_back(i);  // grows 1, 2, 4, ..., 128: 8 allocations
  const int64_t vector_allocs = AllocCounter::Stop();
  EXPECT_EQ(vector_allocs, 8);

  AllocCounter::Start();
  std::string s(100, 'x');  // beyond the small-string buffer
  g_sink = &s[0];
  EXPECT_EQ(AllocCounter::Stop(), 1);
}

TEST_F(AllocCounterTest, NothingOutsideStartStop) {
  AllocCounter::Start();
  EXPECT_EQ(AllocCounter::Stop(), 0);
  g_sink = malloc(8);  // after Stop: not counted
  EXPECT_EQ(AllocCounter::Allocations(), 0);
  free(g_sink);
  AllocCounter::Start();
  int64_t sum = 0;
  for (int i = 0; i < 1000; ++i) sum += i;  // no heap use
  EXPECT_EQ(AllocCounter::Stop(), 0);
  EXPECT_EQ(sum, 499500);
}

TEST_F(AllocCounterTest, CountsOtherThreads) {
  // 0: starting, 1: worker running, 2: counting, 3: worker done. The worker is running before
  // Start() so that thread start-up (which may allocate under sanitizers) is not counted.
  std::atomic<int> phase{0};
  std::thread worker([&] {
    phase.store(1);
    while (phase.load() != 2) {
    }
    for (int i = 0; i < 100; ++i) {
      g_sink = malloc(32);
      free(g_sink);
    }
    phase.store(3);
  });
  while (phase.load() != 1) {
  }
  AllocCounter::Start();
  phase.store(2);
  while (phase.load() != 3) {
  }
  EXPECT_EQ(AllocCounter::Stop(), 100);
  worker.join();
}

TEST_F(AllocCounterTest, ScopedCounter) {
  ScopedAllocCounter count;
  auto p = std::make_unique<int[]>(10);
  g_sink = p.get();
  EXPECT_EQ(count.allocations(), 1);
  EXPECT_EQ(count.bytes(), 40);
}

}  // namespace
}  // namespace ggml_testing
