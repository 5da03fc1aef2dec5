// A persistent thread pool for the CPU graph executor, in the style of ggml's ggml_threadpool
// (ggml/src/ggml-cpu/ggml-cpu.c): the threads are created once by ggml_threadpool_new and reused
// by every ggml_threadpool_run; a run hands one work function to `nth` threads, which receive
// their index ith in [0, nth) and split the work among themselves (ggml's ith/nth convention).
// Inside a run, ggml_threadpool_barrier separates dependent phases (e.g. graph nodes).
//
// The calling thread takes part as ith = 0, so a pool of n threads owns n - 1 worker threads.
// Waiting (for a run, or at a barrier) spins briefly, yields the core for up to 300 us and then
// sleeps on a condition variable, so idle pools use no CPU. ggml_threadpool_run and ggml_threadpool_barrier allocate no memory.
//
// Usage:
//   struct ggml_threadpool* tp = ggml_threadpool_new(4);   // caller + 3 workers
//   if (tp == NULL) fprintf(stderr, "%s\n", ggml_last_error());
//   ggml_threadpool_run(tp, 4, MyWork, &my_args);          // MyWork(&my_args, ith, 4), ith 0..3
//   ggml_threadpool_free(tp);
//
// Highway 1.0.3 has no hwy::ThreadPool (see ../shared/reference/style.md), hence this file.
#ifndef GGML_WHISPER_CPU_THREADPOOL_H_
#define GGML_WHISPER_CPU_THREADPOOL_H_

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_threadpool;

// The largest pool ggml_threadpool_new accepts (ggml's GGML_MAX_N_THREADS is 512).
#define GGML_THREADPOOL_MAX_THREADS 512

// Work function of a run: called once on each of nth threads with that thread's ith in [0, nth).
// `arg` is the pointer given to ggml_threadpool_run, shared by all threads.
typedef void (*ggml_threadpool_fn)(void* arg, int ith, int nth);

// Creates a pool of n_threads threads in total: the caller of ggml_threadpool_run plus
// n_threads - 1 worker threads started now (they sleep until the first run). Returns NULL with a
// message (ggml_last_error()) when n_threads is not in [1, GGML_THREADPOOL_MAX_THREADS] or a
// thread cannot be started.
struct ggml_threadpool* ggml_threadpool_new(int n_threads);

// Stops and joins the worker threads and frees the pool. NULL is a no-op. Must not be called
// while a run is in progress.
void ggml_threadpool_free(struct ggml_threadpool* tp);

// n_threads of ggml_threadpool_new.
int ggml_threadpool_get_n_threads(const struct ggml_threadpool* tp);

// Calls fn(arg, ith, nth) on nth threads (ith = 0 on the calling thread, 1..nth-1 on workers)
// and returns when every call has returned; the writes of all threads are then visible to the
// caller. Workers with index >= nth stay idle for this run. Returns false with a message when
// tp or fn is NULL, nth is not in [1, ggml_threadpool_get_n_threads(tp)], or another run of this
// pool is in progress (one run at a time; runs are not reentrant). Allocates nothing.
bool ggml_threadpool_run(struct ggml_threadpool* tp, int nth, ggml_threadpool_fn fn, void* arg);

// Blocks until all nth threads of the current run have called it; every write made before the
// barrier by any of them is visible after it to all of them. Call only from inside a work
// function, the same number of times on every thread of the run. tp NULL (a single-threaded run
// without a pool) returns at once.
void ggml_threadpool_barrier(struct ggml_threadpool* tp);

#ifdef __cplusplus
}
#endif

#endif  // GGML_WHISPER_CPU_THREADPOOL_H_
