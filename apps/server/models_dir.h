// The folder POST /load may read models from (--models-dir), and the check that turns a client's
// `model` field into a file inside it. whisper-server 1.8.5 (examples/server/server.cpp, the
// "/load" handler) opens whatever path a client sends; here a client can only name a file the
// operator put in the folder, and an error never shows a file's content.
#ifndef GGML_WHISPER_APPS_SERVER_MODELS_DIR_H_
#define GGML_WHISPER_APPS_SERVER_MODELS_DIR_H_

#include <string>

#include "absl/status/statusor.h"

namespace whisper::server {

// The canonical absolute path (realpath(3)) of the folder `dir` given with --models-dir.
// Errors: InvalidArgument naming --models-dir and `dir` when it is empty, does not exist, cannot be
// resolved (the errno text) or is not a directory.
absl::StatusOr<std::string> ModelsDirRealPath(const std::string& dir);

// The canonical path of the model file or folder a /load request names in its `model` field, inside the
// folder `models_dir_real` (ModelsDirRealPath's result). The rules, in this order:
//   - `name` is not empty, is at most 255 bytes (NAME_MAX) and has no control byte (NUL included);
//   - it is a plain file name: no '/' (so no absolute path and no subfolder), not "." or "..";
//   - the file exists in the folder, and realpath(folder/name) is inside the folder (a symbolic
//     link in the folder may point to another file in it, never outside);
//   - it is a regular file (not a FIFO, device or socket) the server can open, or a folder
//     (a CTranslate2 model folder, tools/convert/ct2_folder.h) other than `models_dir_real`
//     itself, whose files the converter reads (model.bin, vocabulary.json, vocabulary.txt,
//     config.json, preprocessor_config.json), when present, are regular files whose realpath is
//     inside the folder too (a symbolic link to a file outside it is refused, as for a file).
// Errors: InvalidArgument, one line naming field 'model', the name as sent (control bytes as
// \xNN, cut at 64 bytes) and the rule it breaks. Never the folder's path or anything read from a
// file. Does not read the file.
absl::StatusOr<std::string> ResolveModelName(const std::string& models_dir_real, const std::string& name);

// `name` for an error message: control bytes and '\' as \xNN, at most 64 bytes then "...".
std::string QuotedName(const std::string& name);

}  // namespace whisper::server

#endif  // GGML_WHISPER_APPS_SERVER_MODELS_DIR_H_
