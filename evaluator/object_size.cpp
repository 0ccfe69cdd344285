#include "evaluator/object_size.h"

#include <fstream>

#include <llvm/BinaryFormat/Magic.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>

namespace evaluator {

common::Result<ObjectSizes> measure_object(const std::filesystem::path& path) {
  auto binary = llvm::object::ObjectFile::createObjectFile(path.string());
  if (!binary) return common::Error{"cannot read object " + path.string() + ": " + llvm::toString(binary.takeError())};
  ObjectSizes sizes;
  // .text by name is ELF's; Mach-O names its code __text and COFF .text$mn,
  // which the name would miss (0 bytes under both: every module a tie).
  // There, every executable section counts.
  // ELF's .ltext is .text under the large code model (-mcmodel=large):
  // the same code, so the same measure, not 0 bytes under both.
  bool elf = binary->getBinary()->isELF();
  auto elf_text = [](llvm::StringRef n) {
    return n == ".text" || n.starts_with(".text.") || n == ".ltext" || n.starts_with(".ltext.");
  };
  for (const auto& section : binary->getBinary()->sections()) {
    auto name = section.getName();
    if (!name) return common::Error{"bad section in " + path.string() + ": " + llvm::toString(name.takeError())};
    auto size = static_cast<std::int64_t>(section.getSize());
    if (elf ? elf_text(*name) : section.isText()) sizes.text += size;
    if (section.isText()) sizes.code += size;
  }
  return sizes;
}

std::optional<std::string> not_an_object(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[64];
  in.read(head, sizeof head);
  auto n = in.gcount();
  if (n <= 0) return std::nullopt;
  switch (llvm::identify_magic(llvm::StringRef(head, static_cast<std::size_t>(n)))) {
    case llvm::file_magic::bitcode: return "LLVM bitcode";
    case llvm::file_magic::unknown: return "no object format (text, assembly?)";
    default: return std::nullopt;
  }
}

bool is_llvm_bitcode(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8];
  in.read(head, sizeof head);
  auto n = in.gcount();
  return n > 0 && llvm::identify_magic(llvm::StringRef(head, static_cast<std::size_t>(n))) == llvm::file_magic::bitcode;
}

}  // namespace evaluator
