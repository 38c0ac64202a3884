// The roster's pieces that need no grading (gpulab/grader/roster.hpp): the submissions of a
// roster folder and of a Gradescope export, the stamp that decides what is graded again, and the
// gradebook's CSV. Grading a class end to end: tests/cli/roster_class_test.cpp.
#include "gpulab/grader/roster.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpulab/core/exit_codes.hpp"
#include "temp_dir.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Roster, FindsOneSubmissionPerFolderSortedAndSkipsHiddenOnes) {
  const testing::TempDir dir("gpulab-roster");
  write(dir.path() / "bob" / "labs" / "a.cu", "b");
  write(dir.path() / "alice" / "labs" / "a.cu", "a");
  write(dir.path() / ".git" / "HEAD", "x");
  write(dir.path() / "notes.txt", "not a submission");
  const std::vector<RosterSubmission> found = find_roster(dir.path());
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].student, "alice");
  EXPECT_EQ(found[0].folder, dir.path() / "alice");
  EXPECT_EQ(found[1].student, "bob");
}

TEST(Roster, NamesAGradescopeExportsSubmissionsByEmailElseName) {
  const testing::TempDir dir("gpulab-roster");
  write(dir.path() / "submission_1" / "a.cu", "1");
  write(dir.path() / "submission_2" / "a.cu", "2");
  write(dir.path() / "submission_metadata.yml",
        "submission_1:\n"
        "  :submitters:\n"
        "  - :name: Ada Lovelace\n"
        "    :email: ada@example.edu\n"
        "submission_2:\n"
        "  :submitters:\n"
        "  - :name: Alan Turing\n");
  const std::vector<RosterSubmission> found = find_roster(dir.path());
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].student, "Alan Turing");
  EXPECT_EQ(found[0].folder, dir.path() / "submission_2");
  EXPECT_EQ(found[1].student, "ada@example.edu");
}

TEST(Roster, RefusesWhatIsNoRoster) {
  const testing::TempDir dir("gpulab-roster");
  EXPECT_THROW((void)find_roster(dir.path() / "missing"), UsageError);
  EXPECT_THROW((void)find_roster(dir.path()), UsageError);  // no submission in it
  write(dir.path() / "submission_1" / "a.cu", "1");
  write(dir.path() / "submission_metadata.yml", "submission_1:\n  - :name: A\tB\n");
  EXPECT_THROW((void)find_roster(dir.path()), UsageError);  // a control character in a name
}

TEST(Roster, TheStampChangesWithTheFilesTheLabsAndTheBackendOnly) {
  const testing::TempDir dir("gpulab-roster");
  write(dir.path() / "labs" / "a.cu", "one");
  write(dir.path() / ".git" / "index", "git's own");
  const std::string stamp = submission_stamp(dir.path(), {"lab01"}, "sim");
  EXPECT_EQ(stamp.size(), 64U);
  EXPECT_EQ(submission_stamp(dir.path(), {"lab01"}, "sim"), stamp);
  write(dir.path() / ".git" / "index", "changed");
  EXPECT_EQ(submission_stamp(dir.path(), {"lab01"}, "sim"), stamp);
  EXPECT_NE(submission_stamp(dir.path(), {"lab01", "lab02"}, "sim"), stamp);
  EXPECT_NE(submission_stamp(dir.path(), {"lab01"}, "cuda"), stamp);
  write(dir.path() / "labs" / "a.cu", "two");
  EXPECT_NE(submission_stamp(dir.path(), {"lab01"}, "sim"), stamp);
}

TEST(Roster, TheGradebookQuotesFieldsAndNeverStartsAFormula) {
  GradebookRow alice;
  alice.student = "alice";
  alice.earned = {{"lab01", 80}, {"lab02", 100}};
  alice.possible = {{"lab01", 100}, {"lab02", 100}};
  alice.status = "graded";
  GradebookRow ungraded;
  ungraded.student = "=cmd()";
  ungraded.status = "build failed, \"twice\"";
  const std::vector<GradebookRow> rows = {alice, ungraded};
  EXPECT_EQ(gradebook_csv({"lab01", "lab02"}, rows),
            "student,lab01,lab02,total,possible,status\n"
            "alice,80,100,180,200,graded\n"
            "'=cmd(),,,,,\"build failed, \"\"twice\"\"\"\n");
}

}  // namespace
}  // namespace gpulab
