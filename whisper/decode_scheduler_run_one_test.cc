// DecodeScheduler::RunOne (jobs that arrive over time on their callers' threads: the server's
// continuous batching) on a small synthetic model: each job's logits are the bytes the same
// sequence gets alone on a state of its own; steps of the jobs in flight run together (counted
// exactly, with barriers that hold every job at the same point); a job that starts later joins at
// the next step; a failing job leaves the others' results intact; a caller waiting for a slot;
// misuse errors; and no heap allocation in the steps after warm-up.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/alloc_counter.h"
#include "whisper/decode_scheduler.h"
#include "whisper/state.h"
#include "whisper/synthetic_model.h"

namespace whisper {
namespace {

using ::testing::HasSubstr;

constexpr int kFrames = 45;

std::vector<float> RandomMel(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.5f);
  std::vector<float> mel(80 * kFrames);
  for (float& v : mel) v = u(rng);
  return mel;
}

// n threads meet here; reusable.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen_ != gen; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0, gen_ = 0;
};

// One job: encode mel `mel` from frame `seek`, a prompt pass, then n_steps greedy steps (the
// argmax of the last logits), keeping every step's logits. fail_after >= 0: returns an error
// after that many steps.
struct JobSpec {
  int mel = 0;
  int seek = 0;
  std::vector<int32_t> prompt;
  int n_steps = 0;
  int fail_after = -1;
};

struct JobResult {
  std::vector<std::vector<float>> logits;  // [n_steps][n_vocab]
  std::vector<int32_t> tokens;
};

int32_t Argmax(const float* v, int n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

class RunOneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticModelOptions o;
    o.hparams.n_audio_layer = 2;
    o.hparams.n_text_layer = 2;
    const std::string path = WriteTempFile("decode_scheduler_run_one_test.bin", MakeSyntheticModel(o).bytes);
    absl::StatusOr<std::unique_ptr<WhisperModel>> m = WhisperModel::Load(path);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::move(*m);
    mels_ = {RandomMel(7), RandomMel(11), RandomMel(13)};
    n_vocab_ = model_->hparams().n_vocab;
  }

  std::unique_ptr<InferenceState> NewState(int n_decoders, int n_windows) {
    absl::StatusOr<std::unique_ptr<InferenceState>> s =
        InferenceState::Create(*model_, n_decoders, 2, nullptr, EncoderOptions(), n_windows);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // The job alone on a state of its own (Encode, Decode: no scheduler).
  JobResult Alone(const JobSpec& spec) {
    JobResult r;
    std::unique_ptr<InferenceState> st = NewState(1, 1);
    EXPECT_TRUE(st->Encode(mels_[spec.mel].data(), kFrames, spec.seek).ok());
    EXPECT_TRUE(st->Decode(0, spec.prompt.data(), static_cast<int>(spec.prompt.size()), 0).ok());
    int n_past = static_cast<int>(spec.prompt.size());
    for (int i = 0; i < spec.n_steps; ++i) {
      const int32_t tok = Argmax(st->logits(0), n_vocab_);
      EXPECT_TRUE(st->Decode(0, &tok, 1, n_past++).ok());
      r.tokens.push_back(tok);
      r.logits.emplace_back(st->logits(0), st->logits(0) + n_vocab_);
    }
    return r;
  }

  // What a RunOne job runs: the same calls through the slot's backend. `meet` (may be null) is
  // waited at after the prompt pass (every job of the test must reach it).
  struct JobArgs {
    RunOneTest* self;
    const JobSpec* spec;
    JobResult* out;
    Barrier* meet;
    std::function<void(int step)> before_step;  // may be empty
  };
  static absl::Status Job(void* arg, int job, SlotBackend& b) {
    (void)job;
    JobArgs& a = *static_cast<JobArgs*>(arg);
    const JobSpec& s = *a.spec;
    const int n_vocab = a.self->n_vocab_;
    absl::Status st = b.Encode(a.self->mels_[s.mel].data(), kFrames, s.seek, 0, -1);
    if (st.ok()) st = b.Decode(0, s.prompt.data(), static_cast<int>(s.prompt.size()), 0);
    if (!st.ok()) return st;
    if (a.meet != nullptr) a.meet->Wait();
    int n_past = static_cast<int>(s.prompt.size());
    // Only when the caller has not sized them: the fill value is a vector of its own, an allocation
    // that StepsAllocateNothing's other job made inside job 0's counted steps when it passed the
    // barrier late (1 allocation in 1-2 of 6 runs under load).
    if (a.out->logits.size() != static_cast<size_t>(s.n_steps)) {
      a.out->logits.resize(s.n_steps, std::vector<float>(n_vocab));
    }
    a.out->tokens.resize(s.n_steps);
    for (int i = 0; i < s.n_steps; ++i) {
      if (i == s.fail_after) return absl::InternalError("job fails on purpose");
      if (a.before_step) a.before_step(i);
      const int32_t tok = Argmax(b.logits(0), n_vocab);
      const int d = 0;
      st = b.DecodeBatch(&d, &tok, 1, n_past++);
      if (!st.ok()) return st;
      a.out->tokens[i] = tok;
      std::memcpy(a.out->logits[i].data(), b.logits(0), sizeof(float) * n_vocab);
    }
    // No barrier here: a job that waits while it holds its slot holds every other job's step.
    return absl::OkStatus();
  }

  void ExpectSame(const JobResult& got, const JobResult& want, int n_steps, const std::string& what) {
    ASSERT_GE(got.logits.size(), static_cast<size_t>(n_steps)) << what;
    for (int i = 0; i < n_steps; ++i) {
      EXPECT_EQ(got.tokens[i], want.tokens[i]) << what << " step " << i;
      EXPECT_EQ(0, std::memcmp(got.logits[i].data(), want.logits[i].data(), sizeof(float) * n_vocab_))
          << what << " step " << i;
    }
  }

  std::unique_ptr<WhisperModel> model_;
  std::vector<std::vector<float>> mels_;
  int n_vocab_ = 0;
};

const std::vector<JobSpec> kSpecs = {
    {0, 0, {50257, 50363}, 4},
    {1, 13, {50257, 50363, 464, 2068}, 6},
    {2, 5, {50257, 50362}, 8},  // prompts of >= 2 tokens: a 1-token prompt pass is a batched step
};

// Three callers at once, held together after their prompt passes: every step holds every job
// still stepping, so 8 steps (the longest job's) carry 4 + 6 + 8 = 18 sequences; each job's
// logits are its own alone, byte for byte.
TEST_F(RunOneTest, ConcurrentCallersShareEveryStep) {
  std::unique_ptr<InferenceState> st = NewState(3, 3);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 3);
  ASSERT_TRUE(sched.ok()) << sched.status();
  Barrier meet(3);
  std::vector<JobResult> got(3);
  std::vector<absl::Status> status(3);
  std::vector<JobArgs> args;
  for (int j = 0; j < 3; ++j) args.push_back(JobArgs{this, &kSpecs[j], &got[j], &meet, {}});
  std::vector<std::thread> threads;
  for (int j = 0; j < 3; ++j) {
    threads.emplace_back([&, j] { status[j] = (*sched)->RunOne(Job, &args[j], j); });
  }
  for (std::thread& t : threads) t.join();
  for (int j = 0; j < 3; ++j) {
    ASSERT_TRUE(status[j].ok()) << status[j];
    ExpectSame(got[j], Alone(kSpecs[j]), kSpecs[j].n_steps, "job " + std::to_string(j));
  }
  int64_t n_steps = 0, n_seq = 0;
  (*sched)->StepCounts(&n_steps, &n_seq);
  EXPECT_EQ(n_steps, 8);
  EXPECT_EQ(n_seq, 18);
  EXPECT_EQ((*sched)->n_callers_running(), 0);
}

// Job 1 starts while job 0 is stepping: job 0 waits before its step 3 until job 1 holds a slot,
// so job 0's steps 3 .. 7 run with job 1's first five steps (and job 1's sixth alone, as job 0
// has ended): 3 + 5 + 1 = 9 steps of 8 + 6 = 14 sequences.
TEST_F(RunOneTest, ALaterJobJoinsAtTheNextStep) {
  std::unique_ptr<InferenceState> st = NewState(2, 2);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 2);
  ASSERT_TRUE(sched.ok());
  std::vector<JobResult> got(2);
  std::atomic<bool> start_second{false};
  const JobSpec first = kSpecs[2], second = kSpecs[1];
  JobArgs a0{this, &first, &got[0], nullptr, [&](int step) {
               if (step != 3) return;
               start_second = true;
               while ((*sched)->n_callers_running() < 2) std::this_thread::yield();
             }};
  JobArgs a1{this, &second, &got[1], nullptr, {}};
  absl::Status s1;
  std::thread later([&] {
    while (!start_second) std::this_thread::yield();
    s1 = (*sched)->RunOne(Job, &a1, 1);
  });
  const absl::Status s0 = (*sched)->RunOne(Job, &a0, 0);
  later.join();
  ASSERT_TRUE(s0.ok()) << s0;
  ASSERT_TRUE(s1.ok()) << s1;
  ExpectSame(got[0], Alone(first), first.n_steps, "first");
  ExpectSame(got[1], Alone(second), second.n_steps, "second");
  int64_t n_steps = 0, n_seq = 0;
  (*sched)->StepCounts(&n_steps, &n_seq);
  EXPECT_EQ(n_steps, 9);
  EXPECT_EQ(n_seq, 14);
}

// Job 1 fails after two steps: RunOne returns its error to its caller only; jobs 0 and 2 finish
// with their own logits (their steps go on without job 1's).
TEST_F(RunOneTest, AFailingJobLeavesTheOthersIntact) {
  std::unique_ptr<InferenceState> st = NewState(3, 3);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 3);
  ASSERT_TRUE(sched.ok());
  std::vector<JobSpec> specs = kSpecs;
  specs[1].fail_after = 2;
  std::vector<JobResult> got(3);
  std::vector<absl::Status> status(3);
  std::vector<JobArgs> args;
  for (int j = 0; j < 3; ++j) args.push_back(JobArgs{this, &specs[j], &got[j], nullptr, {}});
  std::vector<std::thread> threads;
  for (int j = 0; j < 3; ++j) {
    threads.emplace_back([&, j] { status[j] = (*sched)->RunOne(Job, &args[j], j); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(status[0].ok()) << status[0];
  EXPECT_TRUE(status[2].ok()) << status[2];
  EXPECT_THAT(status[1].message(), HasSubstr("job fails on purpose"));
  ExpectSame(got[0], Alone(specs[0]), specs[0].n_steps, "job 0");
  ExpectSame(got[2], Alone(specs[2]), specs[2].n_steps, "job 2");
  ExpectSame(got[1], Alone(specs[1]), 2, "job 1 before its failure");
}

// Five callers on two slots: three wait for a slot (holding no step back), every job ends with
// its own logits, and the slots are free at the end.
TEST_F(RunOneTest, CallersWaitForAFreeSlot) {
  std::unique_ptr<InferenceState> st = NewState(2, 2);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 2);
  ASSERT_TRUE(sched.ok());
  const int n = 5;
  std::vector<JobSpec> specs;
  for (int j = 0; j < n; ++j) specs.push_back(kSpecs[j % 3]);
  std::vector<JobResult> got(n);
  std::vector<absl::Status> status(n);
  std::vector<JobArgs> args;
  for (int j = 0; j < n; ++j) args.push_back(JobArgs{this, &specs[j], &got[j], nullptr, {}});
  std::vector<std::thread> threads;
  for (int j = 0; j < n; ++j) {
    threads.emplace_back([&, j] { status[j] = (*sched)->RunOne(Job, &args[j], j); });
  }
  for (std::thread& t : threads) t.join();
  for (int j = 0; j < n; ++j) {
    ASSERT_TRUE(status[j].ok()) << status[j];
    ExpectSame(got[j], Alone(specs[j]), specs[j].n_steps, "job " + std::to_string(j));
  }
  EXPECT_EQ((*sched)->n_callers_running(), 0);
  EXPECT_EQ((*sched)->n_callers_waiting(), 0);
}

TEST_F(RunOneTest, Misuse) {
  std::unique_ptr<InferenceState> st = NewState(2, 2);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 2);
  ASSERT_TRUE(sched.ok());
  EXPECT_THAT((*sched)->RunOne(nullptr, nullptr).message(), HasSubstr("fn is null"));
  // RunOne inside a Run's job, and Run inside a RunOne job: one mode at a time.
  struct Ctx {
    DecodeScheduler* sched;
    absl::Status inner;
  } c{sched->get(), absl::OkStatus()};
  auto run_one_inside = [](void* arg, int, SlotBackend&) -> absl::Status {
    auto* c = static_cast<Ctx*>(arg);
    c->inner = c->sched->RunOne([](void*, int, SlotBackend&) { return absl::OkStatus(); }, nullptr);
    return absl::OkStatus();
  };
  ASSERT_TRUE((*sched)->Run(1, run_one_inside, &c).ok());
  EXPECT_EQ(c.inner.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(c.inner.message(), HasSubstr("a Run is in progress"));
  auto run_inside = [](void* arg, int, SlotBackend&) -> absl::Status {
    auto* c = static_cast<Ctx*>(arg);
    c->inner = c->sched->Run(1, [](void*, int, SlotBackend&) { return absl::OkStatus(); }, nullptr);
    return absl::OkStatus();
  };
  ASSERT_TRUE((*sched)->RunOne(run_inside, &c).ok());
  EXPECT_EQ(c.inner.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(c.inner.message(), HasSubstr("1 RunOne jobs hold slots"));
}

// After a warm-up run, two callers' steps (between the barriers, counting process-wide) make no
// heap allocation: the scheduler's bookkeeping is sized at Create, the state's step at its Create.
TEST_F(RunOneTest, StepsAllocateNothing) {
  if (!ggml_testing::AllocCounter::Supported()) GTEST_SKIP() << "no allocation counting in this build";
  std::unique_ptr<InferenceState> st = NewState(2, 2);
  absl::StatusOr<std::unique_ptr<DecodeScheduler>> sched = DecodeScheduler::Create(st.get(), 2);
  ASSERT_TRUE(sched.ok());
  const JobSpec specs[2] = {kSpecs[1], kSpecs[1]};
  for (int round = 0; round < 2; ++round) {
    Barrier meet(2);
    std::vector<JobResult> got(2);
    for (int j = 0; j < 2; ++j) {  // the job's own buffers, before counting
      got[j].logits.assign(specs[j].n_steps, std::vector<float>(n_vocab_));
      got[j].tokens.assign(specs[j].n_steps, 0);
    }
    std::atomic<int64_t> allocations{-1};
    // Job 0 counts from its first step to its last; job 1 steps in the same batches.
    JobArgs a0{this, &specs[0], &got[0], &meet, [&](int step) {
                 if (step == 0) ggml_testing::AllocCounter::Start();
                 if (step == specs[0].n_steps - 1) allocations = ggml_testing::AllocCounter::Allocations();
               }};
    JobArgs a1{this, &specs[1], &got[1], &meet, {}};
    absl::Status s1;
    std::thread other([&] { s1 = (*sched)->RunOne(Job, &a1, 1); });
    const absl::Status s0 = (*sched)->RunOne(Job, &a0, 0);
    other.join();
    ggml_testing::AllocCounter::Stop();
    ASSERT_TRUE(s0.ok() && s1.ok()) << s0 << s1;
    if (round == 1) {
      EXPECT_EQ(allocations.load(), 0);
    }
  }
}

}  // namespace
}  // namespace whisper
