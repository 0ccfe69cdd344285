// The driftwatch binary's side of torch_backend.h: model.h, train.h and
// gate_policy.h as calls into the LibTorch module, loaded on first use.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "policy/gate_policy.h"
#include "policy/torch_backend.h"

#ifndef DRIFTWATCH_TORCH_MODULE
#error "DRIFTWATCH_TORCH_MODULE: the module's path in the build tree, set by policy/CMakeLists.txt"
#endif

namespace policy {
namespace fs = std::filesystem;

namespace {

constexpr const char* kModuleName = "driftwatch-torch.so";

/// Where the module may be: as DRIFTWATCH_TORCH_MODULE says, next to the
/// binary, under ../lib/driftwatch (an installed tree), or where it was built.
std::vector<fs::path> module_candidates() {
  std::vector<fs::path> out;
  // Absolute: dlopen would look a bare name up on the library path instead.
  if (const char* env = std::getenv("DRIFTWATCH_TORCH_MODULE"); env && *env) return {fs::absolute(env)};
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back(self.parent_path() / kModuleName);
    out.push_back(self.parent_path().parent_path() / "lib" / "driftwatch" / kModuleName);
  }
  out.emplace_back(DRIFTWATCH_TORCH_MODULE);
  return out;
}

const PolicyModel::Backend* load_module() {
  auto candidates = module_candidates();
  for (const auto& path : candidates) {
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    // RTLD_NOW: a symbol the module needs and this binary lacks is named
    // here, not as a crash in the middle of a sweep.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw common::Fatal("cannot load driftwatch's LibTorch module " + path.string() + ": " + dlerror());
    // A refused module is closed again (LibTorch's libraries, once mapped,
    // may stay): the caller may catch the error and go on without a network.
    auto refuse = [&](const std::string& why) {
      dlclose(handle);
      throw common::Fatal(why);
    };
    auto entry = reinterpret_cast<const void* (*)()>(dlsym(handle, "driftwatch_torch_backend"));
    if (!entry) refuse("cannot load driftwatch's LibTorch module " + path.string() + ": not a driftwatch module");
    auto* table = static_cast<const PolicyModel::Backend*>(entry());
    if (std::strcmp(table->abi, torch_backend_abi()) != 0 || table->size != sizeof(PolicyModel::Backend))
      refuse("driftwatch's LibTorch module " + path.string() +
             " comes from another build of driftwatch: rebuild both (cmake --build)");
    return table;
  }
  std::string looked;
  for (const auto& path : candidates) looked += (looked.empty() ? "" : ", ") + path.string();
  throw common::Fatal("cannot find driftwatch's LibTorch module " + std::string(kModuleName) + " (looked in " + looked +
                      "; DRIFTWATCH_TORCH_MODULE names another)");
}

const PolicyModel::Backend& backend() {
  // Loaded once, by whichever thread needs it first (a static's
  // initialization is thread-safe; one that throws is tried again).
  static const PolicyModel::Backend* table = load_module();
  return *table;
}

}  // namespace

void use_one_thread() { backend().use_one_thread(); }
void load_network_runtime() { (void)backend(); }

PolicyModel::PolicyModel(Impl* impl) : impl_(impl) {}
PolicyModel::PolicyModel(PolicyModel&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
PolicyModel& PolicyModel::operator=(PolicyModel&& other) noexcept {
  std::swap(impl_, other.impl_);  // the old network goes with `other`
  return *this;
}
// A network exists only once the module is loaded.
PolicyModel::~PolicyModel() {
  if (impl_) backend().destroy(impl_);
}
PolicyModel::PolicyModel(const PolicyModel& other) : PolicyModel(backend().copy(other)) {}

PolicyModel PolicyModel::create(PolicyMetadata metadata) { return backend().create(std::move(metadata)); }
common::Result<PolicyModel> PolicyModel::load(const fs::path& path) { return backend().load(path); }
common::Status PolicyModel::save(const fs::path& path) { return backend().save(*this, path); }
const PolicyMetadata& PolicyModel::metadata() const { return backend().metadata(*impl_); }
PolicyMetadata& PolicyModel::metadata() { return backend().metadata(*impl_); }
double PolicyModel::score(const float* normalized) const { return backend().score(*this, normalized); }
std::vector<bool> PolicyModel::features_read() const { return backend().features_read(*this); }

common::Result<TrainResult> train(const TrainOptions& options) { return backend().train(options); }
bool can_resume(const TrainOptions& options) { return backend().can_resume(options); }
PolicyModel gate_policy(const GateRule* rule, PolicyMetadata meta) {
  return backend().gate_policy(rule, std::move(meta));
}

}  // namespace policy
