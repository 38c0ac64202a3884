// gpulab-grade-runner: runs ONE graded test case and judges it, for ctest and `gpulab grade`.
//
//   gpulab-grade-runner --test Suite.Name --out DIR --timeout SECONDS
//                       [--sandbox auto|on|off] [--visible DIR]... [--hide DIR]...
//                       -- PROGRAM [ARGS...]
//   gpulab-grade-runner --stage-stub FILE STAGED
//
// PROGRAM (a graded suite) runs with --gtest_filter=Suite.Name and --gtest_output=xml:DIR/...,
// in its own process group, with the time limit; when it ends, every process it started is
// killed (see process.hpp). With --sandbox on (auto: where bubblewrap works) it runs in the
// sandbox (sandbox.hpp): the system read-only, PROGRAM and the --visible files and folders
// read-only (the --hide folders inside them empty), DIR/Suite.Name/ writable (its XML and gtest's
// premature-exit file go there), a private /tmp; and the test locks itself down
// (lockdown.hpp; GPULAB_LOCKDOWN_CPU_S bounds its CPU time by the time limit). The verdict
// (gpulab/grader/verdict.hpp) goes to DIR/Suite.Name.verdict.json, written after every process of
// the run is dead, and decides the exit status: 0 passed, 77 skipped or not graded (ctest:
// "skipped"), 1 anything else. A test earns points only where the runner exited 0 AND the verdict
// file agrees.
//
// --stage-stub stages a lab's stub for the build's submission variant the way `gpulab grade`
// stages the files it grades (stage_student_file), unless STAGED exists: the build runs it for a
// submission not staged yet (cmake/GpulabLabs.cmake).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/sandbox.hpp"
#include "gpulab/grader/staging.hpp"
#include "gpulab/grader/verdict.hpp"

namespace {

namespace fs = std::filesystem;

struct Arguments {
  std::string test;
  fs::path out;
  double timeout_s = 0;
  std::string sandbox = "off";  ///< on, off or auto
  gpulab::SandboxSpec sandbox_spec;
  std::vector<std::string> program;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "gpulab-grade-runner: " << problem
            << "\nusage: gpulab-grade-runner --test Suite.Name --out DIR --timeout SECONDS "
               "[--sandbox auto|on|off] [--visible DIR]... [--hide DIR]... -- PROGRAM "
               "[ARGS...]\n       gpulab-grade-runner --stage-stub FILE STAGED\n";
  std::exit(2);
}

double parse_seconds(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value > 0)) {
    usage(what + " must be a positive number of seconds, not '" + text + "'");
  }
  return value;
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) {
      usage("missing value after " + arg);
    }
    const std::string value = argv[++i];
    if (arg == "--test") {
      args.test = value;
    } else if (arg == "--out") {
      args.out = value;
    } else if (arg == "--timeout") {
      args.timeout_s = parse_seconds(value, "--timeout");
    } else if (arg == "--sandbox") {
      if (value != "on" && value != "off" && value != "auto") {
        usage("--sandbox must be on, off or auto, not '" + value + "'");
      }
      args.sandbox = value;
    } else if (arg == "--visible") {
      args.sandbox_spec.visible.emplace_back(value);
    } else if (arg == "--hide") {
      args.sandbox_spec.hidden.emplace_back(value);
    } else {
      usage("unknown option " + arg);
    }
  }
  for (; i < argc; ++i) {
    args.program.emplace_back(argv[i]);
  }
  if (args.test.empty() || args.test.find('.') == std::string::npos ||
      args.test.find_first_of("*?:-/ ") != std::string::npos) {
    usage("--test must name one test case, Suite.Name");
  }
  if (args.out.empty() || args.timeout_s <= 0 || args.program.empty()) {
    usage("--out, --timeout and the program are required");
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--stage-stub") {
    if (argc != 4) {
      usage("--stage-stub takes FILE and STAGED");
    }
    try {
      gpulab::stage_student_file(argv[2], argv[3], /*keep_existing=*/true);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "gpulab-grade-runner: " << e.what() << std::endl;
      return 1;
    }
  }
  const Arguments args = parse(argc, argv);
  try {
    // The test writes into a folder of its own, made anew: nothing of an earlier run counts, and
    // in the sandbox it is the one place the test can write.
    const fs::path files = fs::absolute(args.out / args.test);
    const fs::path xml = files / "result.xml";
    const fs::path premature = files / "premature-exit";
    const fs::path verdict_file = args.out / (args.test + ".verdict.json");
    fs::remove(verdict_file);
    fs::remove_all(files);
    fs::create_directories(files);

    gpulab::ProcessSpec spec;
    spec.argv = args.program;
    spec.argv.front() = fs::absolute(spec.argv.front()).string();
    spec.argv.push_back("--gtest_filter=" + args.test);
    spec.argv.push_back("--gtest_output=xml:" + xml.string());
    // The test locks itself down (gpulab/grader/lockdown.hpp) with at most the CPU time of
    // every core busy for its whole time limit.
    const double cpu_s = args.timeout_s * std::max(1U, std::thread::hardware_concurrency());
    spec.env = {{"TEST_PREMATURE_EXIT_FILE", premature.string()},
                {"GPULAB_LOCKDOWN_CPU_S", std::to_string(static_cast<long>(std::ceil(cpu_s)))}};
    spec.timeout_s = args.timeout_s;
    spec.forward = true;  // for ctest --output-on-failure, and `gpulab grade`'s log
    // --sandbox on comes from `gpulab grade`, which tried the sandbox once for all its tests:
    // no second try per test (where bwrap then fails, the test fails with what it said).
    std::optional<std::string> unavailable;
    if (args.sandbox == "off") {
      unavailable = "--sandbox off";
    } else if (args.sandbox == "auto") {
      unavailable = gpulab::sandbox_unavailable();
    }
    const bool sandboxed = !unavailable;
    if (sandboxed) {
      gpulab::SandboxSpec sandbox = args.sandbox_spec;
      sandbox.visible.emplace_back(spec.argv.front());  // the test program, and no other
      sandbox.writable = {files};
      spec.argv = gpulab::sandboxed_command(sandbox, spec.argv);
    }
    gpulab::ProcessResult run = gpulab::run_process(spec);
    if (sandboxed) {
      gpulab::read_sandboxed_status(run);
    }

    gpulab::TestEvidence evidence;
    evidence.test = args.test;
    evidence.started = run.started;
    evidence.start_error = run.start_error;
    evidence.timed_out = run.timed_out;
    evidence.timeout_s = args.timeout_s;
    evidence.exit_code = run.exit_code;
    evidence.signal = run.signal;
    if (run.signal) {
      evidence.signal_name = gpulab::signal_description(*run.signal);
    }
    evidence.premature_exit = fs::exists(fs::symlink_status(premature));
    // Only a file the test wrote itself: a link could point at another run's passing result.
    if (fs::is_regular_file(fs::symlink_status(xml))) {
      evidence.xml = gpulab::read_file(xml);
    }
    evidence.output = run.output;
    gpulab::Verdict verdict = gpulab::judge_test(evidence);
    if (run.strays_killed > 0) {
      verdict.detail += (verdict.detail.empty() ? "" : "; ") + std::to_string(run.strays_killed) +
                        " process(es) it left running were killed";
    }
    gpulab::write_file_atomically(verdict_file,
                                  gpulab::verdict_to_json(args.test, verdict, run.duration_s));

    std::cout << "\ngpulab-grade-runner: " << args.test << ": "
              << gpulab::to_string(verdict.disposition)
              << (verdict.detail.empty() ? "" : " (" + verdict.detail + ")")
              << (sandboxed ? " [sandboxed]" : " [unsandboxed: " + *unavailable + "]") << std::endl;
    switch (verdict.disposition) {
      case gpulab::Disposition::passed:
        return 0;
      case gpulab::Disposition::skipped:
      case gpulab::Disposition::not_graded:
        return 77;
      default:
        return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "gpulab-grade-runner: " << args.test << ": " << e.what() << std::endl;
    return 1;
  }
}
