#pragma once
// Internal to tracker/: libgit2 handles with RAII and error text.
#include <git2.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tracker/git.h"

namespace tracker {

/// libgit2's last error as text ("reference 'x' not found").
std::string git_error_text();
/// Calls git_libgit2_init() once per process.
void ensure_libgit2();

template <class T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const { Free(p); }
};
template <class T, void (*Free)(T*)>
using GitPtr = std::unique_ptr<T, GitDeleter<T, Free>>;

using RepoPtr = GitPtr<git_repository, git_repository_free>;
using CommitPtr = GitPtr<git_commit, git_commit_free>;
using TreePtr = GitPtr<git_tree, git_tree_free>;
using ObjectPtr = GitPtr<git_object, git_object_free>;
using RevwalkPtr = GitPtr<git_revwalk, git_revwalk_free>;
using RefPtr = GitPtr<git_reference, git_reference_free>;
using BlobPtr = GitPtr<git_blob, git_blob_free>;
using IndexPtr = GitPtr<git_index, git_index_free>;
using TreeBuilderPtr = GitPtr<git_treebuilder, git_treebuilder_free>;
using SignaturePtr = GitPtr<git_signature, git_signature_free>;

std::string oid_hex(const git_oid& oid);

struct GitRepo::Impl {
  RepoPtr repo;
  std::filesystem::path location;
};

}  // namespace tracker
