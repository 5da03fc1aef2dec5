// The folder of static files --public serves under --request-path. cpp-httplib 0.11.4's mount
// point (Server::set_mount_point, handle_file_request) refuses ".." but opens whatever the path
// leads to, so a symbolic link in the folder to /etc/passwd was served. Here a file is served only
// when the file actually opened lies inside the folder's real path.
#ifndef GGML_WHISPER_APPS_SERVER_PUBLIC_DIR_H_
#define GGML_WHISPER_APPS_SERVER_PUBLIC_DIR_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace whisper::server {

// The canonical absolute path (realpath(3)) of the folder `dir` given with --public.
// Errors: InvalidArgument naming --public and `dir` when it is empty, cannot be resolved (the
// errno text) or is not a directory.
absl::StatusOr<std::string> PublicDirRealPath(const std::string& dir);

// A reply from the folder: 200 with the file's bytes, or 403 with a message for a path that leads
// outside it (the message names the request path, never the target).
struct PublicFile {
  int status = 200;
  std::string body;          // the file, or the error message (403)
  std::string content_type;  // by the file name's extension, as cpp-httplib's table; 403: empty
};

// The file that GET `request_path` names under the mount point `mount` ("/" or --request-path)
// in the folder `root_real` (PublicDirRealPath's result), with cpp-httplib's mapping: the path
// after the mount point appended to the folder, "index.html" appended to a path ending in '/'.
// nullopt when the path is not under the mount point (the mount point itself, or followed by '/':
// "/static" does not cover "/staticindex.html"), has a ".." segment or a NUL, or is not a
// regular file that can be opened (missing, a folder, FIFO or device): the request goes on to the
// routes, as with cpp-httplib's mount point. The file is opened first (O_NONBLOCK, so a FIFO
// cannot block), then its real path read from /proc/self/fd: a symbolic link (in the file name or
// in a folder on the way) that leads outside `root_real` gives status 403, including one swapped
// in between a check and the read. Reads the whole file.
std::optional<PublicFile> ReadPublicFile(const std::string& root_real, const std::string& mount,
                                         const std::string& request_path);

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_PUBLIC_DIR_H_
