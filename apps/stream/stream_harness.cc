#include "apps/stream/stream_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace whisper::stream {

absl::StatusOr<PacedRun> RunPaced(const std::string& binary, const std::vector<std::string>& args,
                                  const std::vector<float>& audio, double speed, const std::string& stderr_path) {
  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) return absl::InternalError(std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, stderr_path.empty() ? "/dev/null" : stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) posix_spawn_file_actions_addclose(&fa, fd);
  std::vector<std::string> argv_s = {binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    return absl::InternalError(absl::StrCat("posix_spawn ", binary, ": ", std::strerror(rc)));
  }
  signal(SIGPIPE, SIG_IGN);

  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  double input_done = 0;
  std::thread writer([&] {
    constexpr size_t kChunk = 320;  // 20 ms
    std::vector<int16_t> pcm(kChunk);
    for (size_t pos = 0; pos < audio.size(); pos += kChunk) {
      const size_t n = std::min(kChunk, audio.size() - pos);
      for (size_t i = 0; i < n; ++i) {
        const float v = std::max(-1.0f, std::min(1.0f, audio[pos + i])) * 32767.0f;
        pcm[i] = static_cast<int16_t>(std::lrint(v));
      }
      const char* p = reinterpret_cast<const char*>(pcm.data());
      size_t left = n * 2;
      while (left > 0) {
        const ssize_t w = write(in_pipe[1], p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          left = 0;
          pos = audio.size();
          break;
        }
        p += w;
        left -= static_cast<size_t>(w);
      }
      if (speed <= 0) continue;
      const double due = static_cast<double>(pos + n) / 16000.0 / speed;
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(due)));
    }
    close(in_pipe[1]);
    input_done = std::chrono::duration<double>(Clock::now() - t0).count();
  });
  PacedRun run;
  char buf[4096];
  for (;;) {
    const ssize_t r = read(out_pipe[0], buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    run.out.push_back({std::chrono::duration<double>(Clock::now() - t0).count(), std::string(buf, static_cast<size_t>(r))});
  }
  close(out_pipe[0]);
  writer.join();
  run.input_done_s = input_done;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return absl::InternalError("waitpid failed");
  run.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

absl::StatusOr<AudioCounts> ParseAudioCounts(const std::string& stderr_text) {
  const size_t at = stderr_text.rfind("audio: ");
  AudioCounts c;
  double seconds = 0, ms = 0;
  if (at == std::string::npos ||
      std::sscanf(stderr_text.c_str() + at, "audio: %lld samples (%lf s) read, %lld processed, %lld dropped (%lf ms)",
                  &c.read, &seconds, &c.processed, &c.dropped, &ms) != 5) {
    return absl::NotFoundError(absl::StrCat("no 'audio: N samples (S s) read, N processed, N dropped (M ms)' line in: ",
                                            stderr_text));
  }
  return c;
}

std::string VisibleText(const std::vector<StdoutPiece>& pieces, size_t n_pieces) {
  std::string all;
  for (size_t i = 0; i < n_pieces && i < pieces.size(); ++i) all += pieces[i].bytes;
  std::string screen, line;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all.compare(i, 4, "\33[2K") == 0) {
      i += 3;
      continue;
    }
    const char c = all[i];
    if (c == '\r') {
      line.clear();
    } else if (c == '\n') {
      screen += line;
      screen += '\n';
      line.clear();
    } else {
      line += c;
    }
  }
  return screen + line;
}

}  // namespace whisper::stream
