// A module that says it is driftwatch's LibTorch module of another build
// (policy/torch_backend.h: the table starts with its ABI hash and size); with
// FAKE_TORCH_MODULE_EMPTY, a shared library that is no such module at all.
#include <cstddef>

#ifndef FAKE_TORCH_MODULE_EMPTY
namespace {
struct TableHead {
  const char* abi;
  std::size_t size;
};
const TableHead kHead{"another-build", sizeof(TableHead)};
}  // namespace

extern "C" const void* driftwatch_torch_backend() { return &kHead; }
#else
extern "C" int not_driftwatch() { return 0; }
#endif
