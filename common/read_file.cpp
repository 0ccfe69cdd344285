#include "common/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace common {

Status read_file_chunks(const std::filesystem::path& path, const std::function<void(const char*, std::size_t)>& chunk) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot read " + path.string() + ": " + std::strerror(errno)};
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error e{"cannot read " + path.string() + ": " + std::strerror(errno)};
      close(fd);
      return e;
    }
    if (n == 0) break;
    chunk(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return Ok{};
}

Result<std::string> read_file(const std::filesystem::path& path) {
  std::string bytes;
  if (auto s = read_file_chunks(path, [&](const char* data, std::size_t n) { bytes.append(data, n); }); !s)
    return s.error();
  return bytes;
}

}  // namespace common
