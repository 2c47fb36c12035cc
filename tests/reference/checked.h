// Tests never dereference a StatusOr they have not checked: OkOrFail(expr, what) returns the
// value, or records a test failure naming `what` and the status, then throws (GoogleTest
// catches the exception and ends the test there, failed) instead of reading a value that is
// not there.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "common/file_util.h"
#include "model/model_file.h"

namespace tokenmill::testing {

template <typename T>
T OkOrFail(absl::StatusOr<T> value, std::string_view what) {
  if (value.ok()) return *std::move(value);
  const std::string message = std::string(what) + ": " + value.status().ToString();
  ADD_FAILURE() << message;
  throw std::runtime_error(message);
}

inline std::string ReadFileOrFail(const std::string& path) {
  return OkOrFail(ReadFile(path), "reading " + path);
}

inline BpeModel LoadBpeModelOrFail(const std::string& path) {
  return OkOrFail(LoadBpeModel(path), "loading " + path);
}

}  // namespace tokenmill::testing
