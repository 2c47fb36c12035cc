// Outputs written atomically (common/file_util.h): a temporary stays locked from its making to
// its rename, so that RemoveStaleTemporaries (run by every writer of the same path first) takes
// only what a killed run left, also in the window between closing a temporary and renaming it
// (encode closes its ids' file, then writes and closes its index, then renames both).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "reference/cli_runner.h"

namespace tokenmill {
namespace {

using testing::FilesStartingWith;

TEST(StreamingFile, ItsTemporaryIsNotRemovedAsStaleBetweenCloseAndPublish) {
  testing::TempDir dir;
  const std::string path = dir.File("out.u32");
  absl::StatusOr<std::unique_ptr<StreamingFile>> file = StreamingFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Write("ids").ok());
  const std::vector<std::string> temporary = FilesStartingWith(dir.path(), "out.u32.tmp.tokenmill-");
  ASSERT_EQ(temporary.size(), 1u);
  RemoveStaleTemporaries(path);  // another run starting to write the same path
  EXPECT_EQ(FilesStartingWith(dir.path(), "out.u32.tmp.tokenmill-"), temporary) << "while written";
  ASSERT_TRUE((*file)->Close().ok());
  RemoveStaleTemporaries(path);
  EXPECT_EQ(FilesStartingWith(dir.path(), "out.u32.tmp.tokenmill-"), temporary) << "closed, not renamed";
  ASSERT_TRUE((*file)->Publish().ok());
  EXPECT_EQ(testing::ReadAll(path), "ids");
  EXPECT_TRUE(FilesStartingWith(dir.path(), "out.u32.tmp.").empty());
  // One that no run holds: removed.
  dir.Write("out.u32.tmp.tokenmill-AbC123", "left by a killed run");
  RemoveStaleTemporaries(path);
  EXPECT_TRUE(FilesStartingWith(dir.path(), "out.u32.tmp.").empty());
}

// A run whose output is a link writes the file the link leads to, beside it; its stale
// temporaries are looked for there.
TEST(StreamingFile, ALinkedOutputsTemporaryIsBesideTheFileItLeadsTo) {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.File("data"));
  const std::string target = dir.File("data/ids.u32"), link = dir.File("ids.u32");
  std::filesystem::create_symlink("data/ids.u32", link);  // relative, and dangling at first
  dir.Write("data/ids.u32.tmp.tokenmill-Zz9yY8", "left by a killed run");
  RemoveStaleTemporaries(link);
  EXPECT_TRUE(FilesStartingWith(dir.File("data"), "ids.u32.tmp.").empty());
  absl::StatusOr<std::unique_ptr<StreamingFile>> file = StreamingFile::Create(link);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Write("ids").ok());
  EXPECT_EQ(FilesStartingWith(dir.File("data"), "ids.u32.tmp.tokenmill-").size(), 1u);
  ASSERT_TRUE((*file)->Close().ok());
  ASSERT_TRUE((*file)->Publish().ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(testing::ReadAll(target), "ids");
  ASSERT_TRUE(WriteFileAtomically(link, std::string_view("again")).ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(testing::ReadAll(target), "again");
  EXPECT_EQ(FilesStartingWith(dir.path(), "ids.u32.tmp.").size() +
                FilesStartingWith(dir.File("data"), "ids.u32.tmp.").size(),
            0u);
}

}  // namespace
}  // namespace tokenmill
