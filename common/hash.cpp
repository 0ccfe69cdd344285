#include "common/hash.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/read_file.h"

namespace common {
namespace {

struct Sha256 {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Sha256() { EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr); }
  void update(const void* data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md, &len);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

Result<std::string> sha256_file(const std::filesystem::path& path) {
  Sha256 h;
  if (auto s = read_file_chunks(path, [&](const char* data, std::size_t n) { h.update(data, n); }); !s)
    return s.error();
  return h.hex();
}

}  // namespace common
