// The Slurm pieces of `gpulab grade --roster --slurm` (framework/grader/slurm.hpp): the array's
// shape, sbatch's command line, the job script, sbatch's answer, and the rounds' files and queue
// read back (with a stand-in squeue). The whole path, with a real Slurm, is
// tests/cli/slurm_roster.sh.
#include "gpulab/grader/slurm.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {

using gpulab::array_shape;
using gpulab::ArrayShape;

TEST(SlurmArray, OneTaskPerSubmissionUpToTheLimitThenChunks) {
  const auto shape = [](int n, int max) {
    const ArrayShape s = array_shape(n, max);
    return std::vector<int>{s.tasks, s.per_task};
  };
  EXPECT_EQ(shape(0, 1000), (std::vector<int>{0, 1}));
  EXPECT_EQ(shape(1, 1000), (std::vector<int>{1, 1}));
  EXPECT_EQ(shape(1000, 1000), (std::vector<int>{1000, 1}));
  EXPECT_EQ(shape(1001, 1000), (std::vector<int>{501, 2}));  // 500 tasks of 2 and one of 1
  EXPECT_EQ(shape(2500, 1000), (std::vector<int>{834, 3}));
  EXPECT_EQ(shape(7, 3), (std::vector<int>{3, 3}));
  for (int n = 1; n < 3000; n += 37) {  // every submission in exactly one task, none empty
    const ArrayShape s = array_shape(n);
    EXPECT_LE(s.tasks, gpulab::kMaxArrayTasks);
    EXPECT_GE(s.tasks * s.per_task, n);
    EXPECT_LT((s.tasks - 1) * s.per_task, n);
  }
}

TEST(SlurmTime, AcceptsSbatchsFormatsOnly) {
  for (const char* time : {"30", "30:00", "1:30:00", "2-0", "2-12", "2-12:30", "2-12:30:15",
                           "infinite", "UNLIMITED"}) {
    EXPECT_TRUE(gpulab::is_slurm_time(time)) << time;
  }
  for (const char* time :
       {"", "1h", "1:2:3:4", "-1", "2-", "2-1:2:3:4", ":30", "30:", "a-1", "1 0", "1.5"}) {
    EXPECT_FALSE(gpulab::is_slurm_time(time)) << time;
  }
}

TEST(SlurmSbatch, AsksForWhatWasGiven) {
  gpulab::SlurmOptions options;
  const std::vector<std::string> plain =
      gpulab::sbatch_command("/usr/bin/sbatch", options, "/g/round-1.sh", "/g/round-1.%a.log",
                             "gpulab-grade", 20, 2, false);
  EXPECT_EQ(plain,
            (std::vector<std::string>{"/usr/bin/sbatch", "--parsable", "--job-name=gpulab-grade",
                                      "--array=0-19%2", "--ntasks=1", "--cpus-per-task=1",
                                      "--output=/g/round-1.%a.log", "/g/round-1.sh"}));
  options.partition = "gpu";
  options.gpus_per_task = 1;
  options.time = "0:30:00";
  options.cpus_per_task = 4;
  const std::vector<std::string> full =
      gpulab::sbatch_command("sbatch", options, "s.sh", "l.%a.log", "g", 1, 8, true);
  EXPECT_EQ(full, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=g", "--array=0-0%8",
                                            "--ntasks=1", "--cpus-per-task=4", "--output=l.%a.log",
                                            "--partition=gpu", "--gpus-per-task=1",
                                            "--time=0:30:00", "--wait", "s.sh"}));
}

TEST(SlurmScript, RunsTheCommandWithTheTaskIndexAndQuotesEveryWord) {
  EXPECT_EQ(gpulab::shell_word("/a/b-c_d.e"), "/a/b-c_d.e");
  EXPECT_EQ(gpulab::shell_word(""), "''");
  EXPECT_EQ(gpulab::shell_word("it's $HOME"), "'it'\\''s $HOME'");
  const std::string script =
      gpulab::job_script({"/opt/gpulab", "grade", "--roster", "/class/CS 101 (fall)"});
  EXPECT_EQ(script.rfind("#!/bin/sh\n", 0), 0U) << script;
  EXPECT_NE(script.find("\nexec /opt/gpulab grade --roster '/class/CS 101 (fall)' "
                        "\"$SLURM_ARRAY_TASK_ID\"\n"),
            std::string::npos)
      << script;

  // What the shell makes of it: the words as given, the task's index last.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpulab-slurm-test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path out = dir / "words";
  const std::string odd = "a 'quoted' $word; `not run`\\";
  std::ofstream(dir / "job.sh") << gpulab::job_script({"/usr/bin/printf", "%s\\n", odd, "second"});
  ASSERT_EQ(
      std::system(
          ("SLURM_ARRAY_TASK_ID=7 sh " + (dir / "job.sh").string() + " > " + out.string()).c_str()),
      0);
  std::ifstream words(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(words, line);) {
    lines.push_back(line);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{odd, "second", "7"}));
  std::filesystem::remove_all(dir);
}

TEST(SlurmSbatch, ReadsTheJobIdOfParsableOutput) {
  EXPECT_EQ(gpulab::parse_job_id("1234\n"), "1234");
  EXPECT_EQ(gpulab::parse_job_id("1234;cluster-a\n"), "1234");
  EXPECT_EQ(gpulab::parse_job_id("sbatch: warning: something\n56\n"), "56");
  EXPECT_EQ(gpulab::parse_job_id("78\nsbatch: error: a warning after the id\n"), "78");
  EXPECT_EQ(gpulab::parse_job_id("  \n91;gpu-cluster \r\n"), "91");
  EXPECT_FALSE(gpulab::parse_job_id(""));
  EXPECT_FALSE(gpulab::parse_job_id("sbatch: error: Batch job submission failed\n"));
}

TEST(SlurmRounds, TaskListsAreOneStudentALine) {
  EXPECT_EQ(gpulab::task_list_lines("alice\nbob\n"), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE(gpulab::task_list_lines("").empty());
}

// PATH holds only a stand-in squeue printing `listing` for the test's life.
class StandInQueue {
 public:
  StandInQueue(const std::filesystem::path& dir, const std::string& listing) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "squeue") << "#!/bin/sh\nprintf '" << listing << "'\n";
    std::filesystem::permissions(dir / "squeue", std::filesystem::perms::owner_all);
    const char* path = std::getenv("PATH");
    saved_ = path == nullptr ? "" : path;
    setenv("PATH", dir.c_str(), 1);
  }
  ~StandInQueue() { setenv("PATH", saved_.c_str(), 1); }
  StandInQueue(const StandInQueue&) = delete;
  StandInQueue& operator=(const StandInQueue&) = delete;

 private:
  std::string saved_;
};

TEST(SlurmRounds, SayWhyAStudentHasNoGradeFromTheRoundsFilesAndTheQueue) {
  const gpulab::testing::TempDir out("gpulab-slurm-rounds");
  const std::filesystem::path dir = out.path() / "slurm";
  gpulab::SlurmRounds none(dir);
  EXPECT_TRUE(none.rounds().empty());
  EXPECT_EQ(none.missing_reason("alice"), "not graded (no --slurm round has listed it)");

  std::filesystem::create_directories(dir);
  std::ofstream(dir / "round-1.tasks") << "alice\nbob\ncarol\n";
  std::ofstream(dir / "round-1.job") << "12\n";
  std::ofstream(dir / "round-1.0.state") << "alice\tgraded\n";
  std::ofstream(dir / "round-1.2.state") << "carol\tfailed: gpulab grade exited with 1\n";
  {
    const StandInQueue queue(out.path() / "bin", "12_1 PENDING\\n");
    gpulab::SlurmRounds rounds(dir);
    ASSERT_EQ(rounds.rounds().size(), 1u);
    EXPECT_EQ(rounds.rounds()[0].job, "12");
    EXPECT_EQ(rounds.missing_reason("alice"),
              "round-1 task 0: graded, but the submission has changed since");
    EXPECT_EQ(rounds.still_queued("bob"), "PENDING in job 12 (round-1 task 1)");
    EXPECT_EQ(rounds.missing_reason("bob"), "PENDING in job 12 (round-1 task 1)");
    EXPECT_EQ(rounds.missing_reason("carol"),
              "round-1 task 2: failed: gpulab grade exited with 1 (log: " +
                  (dir / "round-1.2.log").string() + ")");
    EXPECT_EQ(rounds.missing_reason("dave"), "not graded (not in any --slurm round: added since?)");
  }
  const StandInQueue empty(out.path() / "bin", "");
  gpulab::SlurmRounds rounds(dir);
  EXPECT_FALSE(rounds.still_queued("bob"));
  EXPECT_EQ(rounds.missing_reason("bob"),
            "round-1 task 1 (job 12) ended before grading it: killed at its time limit, "
            "preempted, out of memory or its node failed (log: " +
                (dir / "round-1.1.log").string() + ")");
  // A later round takes bob; the rounds are read again only after forget().
  std::ofstream(dir / "round-2.tasks") << "bob\n";
  std::ofstream(dir / "round-2.job") << "13\n";
  EXPECT_EQ(rounds.rounds().size(), 1u);
  rounds.forget();
  ASSERT_EQ(rounds.rounds().size(), 2u);
  const auto task = rounds.latest_task("bob");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->first->name, "round-2");
  EXPECT_EQ(task->second, 0u);
}

}  // namespace
