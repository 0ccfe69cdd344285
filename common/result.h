#pragma once
// Expected failures (a build that fails, a commit that does not exist) are
// values, not exceptions: Result<T> holds either a T or an Error.
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace common {

/// A failure described in one line, meant for the user.
struct Error {
  std::string message;
  /// The machine's doing (a timeout under load, the OOM killer, a full
  /// disk), not the input's: trying again may succeed.
  bool transient = false;
  /// Transient, and nothing but the machine can have caused it (driftwatch
  /// itself, the disk, a compiler binary that will not start): however often
  /// it comes back, it is never stored as the input's result.
  bool machine_only = false;
};

/// The unrecoverable kind: thrown, caught in main(), printed as one line, exit 2.
class Fatal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Either a value or an Error; a small stand-in for C++23 std::expected.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return check(), std::get<0>(v_); }
  const T& value() const& { return check(), std::get<0>(v_); }
  T&& value() && { return check(), std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const Error& error() const { return std::get<1>(v_); }
  /// The value, or throw Fatal with the error's message.
  T take() && { return ok() ? std::get<0>(std::move(v_)) : throw Fatal(error().message); }

 private:
  void check() const {
    if (!ok()) throw Fatal(std::get<1>(v_).message);
  }
  std::variant<T, Error> v_;
};

/// Result of an operation that yields nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace common
