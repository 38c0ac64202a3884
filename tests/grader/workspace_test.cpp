// The build workspace's choices (gpulab/grader/workspace.hpp) on made-up manifests: which labs a
// command line names, which code variant and which backend it gets, the cuda backend's devices
// asked only when cuda could be the answer, and the build's failure in lines.
#include "gpulab/grader/workspace.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/exit_codes.hpp"

namespace gpulab {
namespace {

LabManifest manifest_of(const std::vector<std::string>& backends, bool solutions) {
  LabManifest manifest;
  for (const std::string id : {"lab01", "lab02", "lab10"}) {
    LabEntry lab;
    lab.id = id;
    for (const std::string& backend : backends) {
      for (const char* variant : {"student", "solution"}) {
        if (solutions || std::string(variant) == "student") {
          LabRun run;
          run.variant = variant;
          run.backend = backend;
          lab.runs.push_back(run);
        }
      }
    }
    manifest.labs.push_back(lab);
  }
  return manifest;
}

// A stand-in for the cuda backend's device query that counts how often it is asked.
CudaDevices devices(bool usable, int& asked) {
  return [usable, &asked] {
    ++asked;
    DeviceQuery query;
    query.backend = "cuda";
    if (usable) {
      DeviceInfo device;
      device.name = "NVIDIA H100";
      query.devices.push_back(device);
    } else {
      query.unavailable = DeviceUnavailable{.error_code = 100,
                                            .error_name = "cudaErrorNoDevice",
                                            .reason = "no CUDA-capable device is detected"};
    }
    return query;
  };
}

TEST(Workspace, SelectLabsTakesIdsNumbersAndAll) {
  const LabManifest manifest = manifest_of({"sim"}, true);
  EXPECT_EQ(select_labs(manifest, {}).size(), 3U);
  EXPECT_EQ(select_labs(manifest, {"all"}).size(), 3U);
  const std::vector<const LabEntry*> chosen = select_labs(manifest, {"2", "lab01", "10"});
  ASSERT_EQ(chosen.size(), 3U);
  EXPECT_EQ(chosen[0]->id, "lab02");
  EXPECT_EQ(chosen[1]->id, "lab01");
  EXPECT_EQ(chosen[2]->id, "lab10");
  try {
    (void)select_labs(manifest, {"7"});
    FAIL() << "lab 7 does not exist";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "no lab \"7\" (labs: lab01, lab02, lab10, or all)");
  }
}

TEST(Workspace, ChooseVariantPrefersTheSolutionWhereThereIsOne) {
  const LabManifest instructor = manifest_of({"sim"}, true);
  const LabManifest student = manifest_of({"sim"}, false);
  EXPECT_TRUE(has_variant(instructor, "solution"));
  EXPECT_FALSE(has_variant(student, "solution"));
  EXPECT_EQ(choose_variant(instructor, false, false), "solution");
  EXPECT_EQ(choose_variant(instructor, false, true), "student");
  EXPECT_EQ(choose_variant(student, false, false), "student");
  EXPECT_THROW((void)choose_variant(student, true, false), UsageError);
}

TEST(Workspace, AutomaticBackendIsCudaOnlyWhereItIsBuiltAndADeviceIsUsable) {
  int asked = 0;
  const LabManifest both = manifest_of({"cuda", "sim"}, true);
  EXPECT_EQ(choose_backend(both, "", devices(true, asked)), "cuda");
  EXPECT_EQ(choose_backend(both, "auto", devices(false, asked)), "sim");
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(choose_backend(both, "", CudaDevices{}), "sim");  // the command links the sim
  // A build without the cuda backend never asks for devices.
  EXPECT_EQ(choose_backend(manifest_of({"sim"}, true), "", devices(true, asked)), "sim");
  EXPECT_EQ(choose_backend(both, "sim", devices(true, asked)), "sim");
  EXPECT_EQ(asked, 2);
}

TEST(Workspace, AskedForCudaWithoutADeviceSaysWhy) {
  int asked = 0;
  const LabManifest both = manifest_of({"cuda", "sim"}, true);
  EXPECT_EQ(choose_backend(both, "cuda", devices(true, asked)), "cuda");
  try {
    (void)choose_backend(both, "cuda", devices(false, asked));
    FAIL() << "no usable device";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "--backend cuda: no usable CUDA device: no CUDA-capable device is detected");
  }
  try {
    (void)choose_backend(both, "cuda", CudaDevices{});
    FAIL() << "the command has no cuda backend";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "--backend cuda: no usable CUDA device: the cuda backend is not built");
  }
  EXPECT_THROW((void)choose_backend(manifest_of({"sim"}, true), "cuda", devices(true, asked)),
               UsageError);
  EXPECT_THROW((void)choose_backend(both, "rocm", devices(true, asked)), UsageError);
}

TEST(Workspace, BuildFailureSaysWhyInLinesAndNothingForASuccess) {
  ProcessResult built;
  built.started = true;
  built.exit_code = 0;
  EXPECT_TRUE(build_failure(built).empty());
  built.exit_code = 1;
  built.output = "a.cu:3:5: error: 'x' was not declared in this scope\n";
  const std::vector<std::string> lines = build_failure(built);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("'x' was not declared"), std::string::npos) << lines.front();
  built.timed_out = true;
  EXPECT_EQ(build_failure(built), std::vector<std::string>{"the build took too long"});
  ProcessResult not_started;
  not_started.start_error = "cannot start cmake";
  EXPECT_EQ(build_failure(not_started), std::vector<std::string>{"cannot start cmake"});
}

}  // namespace
}  // namespace gpulab
