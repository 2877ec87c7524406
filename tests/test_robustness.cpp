// Hostile input that a file under tests/bad_inputs/ cannot express: devices, FIFOs, huge files,
// sysfs copies with special files. Each must give one error line and exit code 2, promptly.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "cli_test_util.h"
#include "input/json_input.h"

using namespace wakesim::clitest;

namespace {

// The whole output is one line "wakesim: error: <file>: <pointer>: ..." with `message` in it.
void check_one_line_error(const CmdResult& r, const std::string& file, const std::string& pointer,
                          const std::string& message) {
    INFO("rc " << r.rc << ", output: " << r.out);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.out) == 1);
    CHECK(r.out.rfind("wakesim: error: " + file + ": " + pointer + ": ", 0) == 0);
    CHECK(contains(r.out, message));
}

// A valid scenario on a topology read from `topology` (a path).
std::string scenario_with_topology(const std::string& topology) {
    return R"({"name": "t", "description": "d", "expected": "e",
  "machine": {"topology": )" + topology + R"(, "profile": {"base": "altra-80"}},
  "workload": {"kind": "pipe", "loops": 100}, "policies": ["plain"], "run": {"seeds": [1]},
  "cases": [{"name": "c", "description": "d"}]})";
}

}  // namespace

TEST_CASE("robustness: input that is not a regular file is refused", "[cli][robustness]") {
    check_one_line_error(run_wakesim("run /dev/zero"), "/dev/zero", "/",
                         "expected a JSON file (a regular file), got a character device");
    TempDir dir;
    check_one_line_error(run_wakesim("run " + shell_quote(dir.path().string())), dir.path().string(), "/",
                         "got a directory");
    // A FIFO without a writer: opening it must not block (run_wakesim's timeout would give 124).
    const std::string fifo = dir.file("fifo.json");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_one_line_error(run_wakesim("run " + shell_quote(fifo)), fifo, "/", "got a FIFO");

    // A topology path naming a device, from inside a scenario.
    const std::string s = dir.file("s.json");
    write_file(s, scenario_with_topology("\"/dev/zero\""));
    check_one_line_error(run_wakesim("run " + shell_quote(s)), "/dev/zero", "/", "got a character device");
}

TEST_CASE("robustness: JSON files are read up to 64 MiB", "[cli][robustness]") {
    TempDir dir;
    const std::string big = dir.file("big.json");
    write_file(big, "{}");
    fs::resize_file(big, wakesim::kMaxJsonFileBytes + 1);  // sparse: costs no disk
    check_one_line_error(run_wakesim("run " + shell_quote(big)), big, "/", "expected a JSON file of at most 64 MiB");
}

TEST_CASE("robustness: a file name is refused when it holds a NUL", "[robustness]") {
    CHECK_THROWS_WITH(wakesim::load_json_file(std::string("a.json\0junk", 11)),
                      Catch::Contains("expected a file name without NUL characters"));
    // The file name is escaped in the message: it stays on one line.
    try {
        wakesim::load_json_file("no\nsuch.json");
        FAIL("loaded a file that does not exist");
    } catch (const wakesim::InputError& e) {
        CHECK(std::string(e.what()).rfind("no\\x0Asuch.json: /: cannot read file", 0) == 0);
    }
}

namespace {

// A tiny valid pipe scenario (one case, one policy) in `dir`.
std::string small_scenario(const TempDir& dir) {
    const std::string path = dir.file("small.json");
    write_file(path, R"({"name": "s", "description": "d", "expected": "e", "machine": "altra-80",
  "workload": {"kind": "pipe", "loops": 200}, "policies": ["plain"], "run": {"seeds": [3]},
  "cases": [{"name": "c", "description": "d"}]})");
    return path;
}

}  // namespace

TEST_CASE("robustness: a failed write is an error, not a silent success", "[cli][robustness]") {
    TempDir dir;
    const std::string s = shell_quote(small_scenario(dir));
    check_one_line_error(run_wakesim("run " + s + " -o /dev/full --force"), "/dev/full", "/",
                         "cannot write the output file: No space left on device");
    // stdout on a full device: the error goes to stderr.
    const CmdResult out = run_program("/bin/sh", "-c " + shell_quote(shell_quote(WAKESIM_BINARY) + " run " + s +
                                                                     " 2>&1 >/dev/full"));
    CHECK(out.rc == 2);
    CHECK(out.out == "wakesim: error: <stdout>: /: cannot write the output: No space left on device\n");
    check_one_line_error(run_wakesim("run " + s + " --trace /dev/full --force"), "/dev/full", "/",
                         "cannot write the trace file");
    const CmdResult list = run_program("/bin/sh", "-c " + shell_quote(shell_quote(WAKESIM_BINARY) +
                                                                      " list policies 2>&1 >/dev/full"));
    CHECK(list.rc == 2);
    CHECK(list.out == "wakesim: error: <stdout>: /: cannot write the output: No space left on device\n");
}

TEST_CASE("robustness: explain --seed takes a scenario seed, not a wrapped or ignored one", "[cli][robustness]") {
    TempDir dir;
    const std::string s = shell_quote(small_scenario(dir));
    const CmdResult neg = run_wakesim("explain " + s + " --seed -1");
    CHECK(neg.rc == 2);
    CHECK(count_lines(neg.out) == 1);
    CHECK(contains(neg.out, "--seed: Value -1 not in range 0 to 9223372036854775807"));
    // Seed 0 is a valid scenario seed: it is used, not replaced by the scenario's first (3).
    CHECK(contains(run_wakesim("explain " + s + " --seed 0").out, "seed=0\n"));
    CHECK(contains(run_wakesim("explain " + s).out, "seed=3\n"));
}

TEST_CASE("robustness: names echoed in messages are escaped and cut", "[cli][robustness]") {
    TempDir dir;
    const std::string s = small_scenario(dir);
    const CmdResult r = run_wakesim("run " + shell_quote(s) + " --policy " + shell_quote("pl\nain" + std::string(100, 'x')));
    check_one_line_error(r, s, "/", "unknown policy \"pl\\nainxxxx");
    CHECK(r.out.size() < 300);
    const CmdResult c = run_wakesim("explain " + shell_quote(s) + " --case " + shell_quote("a\tb"));
    check_one_line_error(c, s, "/", "unknown case \"a\\tb\"; expected one of: \"c\"");
}

TEST_CASE("robustness: a file name in a message is escaped and cut", "[robustness]") {
    const wakesim::InputError e(std::string(300, 'a') + "\n", "/x", "expected y");
    const std::string what = e.what();
    CHECK(what == std::string(256, 'a') + "...: /x: expected y");
    CHECK(wakesim::InputError("a\tb", "", "c").what() == std::string("a\\x09b: /: c"));
}
