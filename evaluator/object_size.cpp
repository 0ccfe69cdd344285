#include "evaluator/object_size.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>

namespace evaluator {

common::Result<ObjectSizes> measure_object(const std::filesystem::path& path) {
  auto binary = llvm::object::ObjectFile::createObjectFile(path.string());
  if (!binary) return common::Error{"cannot read object " + path.string() + ": " + llvm::toString(binary.takeError())};
  ObjectSizes sizes;
  for (const auto& section : binary->getBinary()->sections()) {
    auto name = section.getName();
    if (!name) return common::Error{"bad section in " + path.string() + ": " + llvm::toString(name.takeError())};
    auto size = static_cast<std::int64_t>(section.getSize());
    if (*name == ".text" || name->starts_with(".text.")) sizes.text += size;
    if (section.isText()) sizes.code += size;
  }
  return sizes;
}

}  // namespace evaluator
