// Hostile input that a file under tests/bad_inputs/ cannot express: devices, FIFOs, huge files,
// sysfs copies with special files. Each must give one error line and exit code 2, promptly.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

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

// Runs wakesim with `args` (no shell), its stdout and stderr into `out_file`, and returns its exit
// code and peak resident set (KiB) from wait4(). A child still running after 120 s is killed.
struct RssResult {
    int rc = -1;
    long maxrss_kib = 0;
    std::string out;
};
RssResult run_with_rss(const std::vector<std::string>& args, const std::string& out_file) {
    std::vector<std::string> all{WAKESIM_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) ::_exit(126);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::alarm(120);  // survives exec: a hang ends as SIGALRM
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    RssResult r;
    int status = 0;
    struct rusage ru {};
    if (pid > 0 && ::wait4(pid, &status, 0, &ru) == pid) {
        r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        r.maxrss_kib = ru.ru_maxrss;
    }
    r.out = read_file(out_file);
    return r;
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
    // So is a byte that is not UTF-8 (a Latin-1 name): no raw byte reaches the terminal; valid
    // UTF-8 is kept as it is.
    try {
        wakesim::load_json_file("caf\xE9-\xC3\xA9.json");
        FAIL("loaded a file that does not exist");
    } catch (const wakesim::InputError& e) {
        CHECK(std::string(e.what()).rfind("caf\\xE9-\xC3\xA9.json: /: cannot read file", 0) == 0);
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

TEST_CASE("robustness: option mistakes are one line in wakesim's words, and explain --seed takes a scenario seed, "
          "not a wrapped or ignored one", "[cli][robustness]") {
    TempDir dir;
    const std::string s = shell_quote(small_scenario(dir));
    // One line each, in wakesim's words: a number out of range or not whole, a second scenario,
    // an option given twice.
    const auto refused = [](const std::string& cmd, const std::string& text) {
        const CmdResult r = run_wakesim(cmd);
        INFO(cmd << " -> " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
        CHECK(contains(r.out, text));
    };
    refused("explain " + s + " --seed -1", "--seed: expected a whole number of at least 0; got \"-1\"");
    // An empty filter (an unset shell variable) would explain another wakeup than the one meant.
    refused("explain " + s + " --after ''", "--after: expected a time such as 5ms, got an empty string");
    refused("explain " + s + " --wakee ''", "--wakee: expected a task name, got an empty string");
    refused("run " + s + " --seeds 1.5", "--seeds: expected a whole number from 1 to 10000; got \"1.5\"");
    refused("run " + s + " " + s, "wakesim run: expected no more arguments; got ");
    refused("run " + s + " --format json --format csv", "--format: expected once; given 2 times");
    // Seed 0 is a valid scenario seed: it is used, not replaced by the scenario's first (3).
    CHECK(contains(run_wakesim("explain " + s + " --seed 0").out, "seed=0\n"));
    CHECK(contains(run_wakesim("explain " + s).out, "seed=3\n"));
}

TEST_CASE("robustness: -o /dev/null is written without --force, an existing regular file is not", "[cli][robustness]") {
    TempDir dir;
    const std::string s = shell_quote(small_scenario(dir));
    CHECK(run_wakesim("run " + s + " -q -o /dev/null").rc == 0);
    write_file(dir.file("mine.txt"), "kept");
    const CmdResult r = run_wakesim("run " + s + " -q -o " + shell_quote(dir.file("mine.txt")));
    CHECK(r.rc == 2);
    CHECK(read_file(dir.file("mine.txt")) == "kept");
    // The report and the trace in one file would lose one of them; an empty name means no file.
    const std::string both = shell_quote(dir.file("both.txt"));
    const CmdResult same = run_wakesim("run " + s + " -q -o " + both + " --trace " + both);
    CHECK(same.rc == 2);
    CHECK(contains(same.out, "--trace: expected another file than -o's"));
    CHECK_FALSE(fs::exists(dir.file("both.txt")));
    // However the file is spelled: another relative form, its absolute path, a symbolic link to it.
    fs::create_symlink("both.txt", dir.file("link.txt"));
    for (const std::string& t : {std::string("./both.txt"), dir.file("both.txt"), std::string("link.txt")}) {
        const CmdResult spelled = run_program("sh", "-c " + shell_quote("cd " + shell_quote(dir.path().string()) + " && " +
                                                                         shell_quote(WAKESIM_BINARY) + " run " + s +
                                                                         " -q -o both.txt --trace " + shell_quote(t) + " 2>&1"));
        INFO(t << ": " << spelled.out);
        CHECK(spelled.rc == 2);
        CHECK(contains(spelled.out, "--trace: expected another file than -o's: --trace "));
        CHECK_FALSE(fs::exists(dir.file("both.txt")));
    }
    // A run's own trace file (one per run when there are several) is not -o's either.
    write_file(dir.file("two.json"), R"({"name": "t", "machine": "altra-80", "workload": {"kind": "pipe", "loops": 50},
      "policies": ["plain", "wf_sync"], "run": {"seeds": [1]}})");
    const CmdResult per_run = run_wakesim("run " + shell_quote(dir.file("two.json")) + " -q -o " +
                                          shell_quote(dir.file("t.default.wf_sync.s1.txt")) + " --trace " + shell_quote(dir.file("t.txt")));
    INFO(per_run.out);
    CHECK(per_run.rc == 2);
    CHECK(contains(per_run.out, "the trace of case \"default\" policy \"wf_sync\" seed 1, "));
    CHECK_FALSE(fs::exists(dir.file("t.default.plain.s1.txt")));
    const CmdResult empty = run_wakesim("run " + s + " -q --trace ''");
    CHECK(empty.rc == 2);
    CHECK(contains(empty.out, "got an empty string"));
}

TEST_CASE("robustness: names echoed in messages are escaped and cut", "[cli][robustness]") {
    TempDir dir;
    const std::string s = small_scenario(dir);
    const CmdResult r = run_wakesim("run " + shell_quote(s) + " --policy " + shell_quote("pl\nain" + std::string(100, 'x')));
    check_one_line_error(r, s, "/policies", "--policy \"pl\\nainxxxx");
    CHECK(r.out.size() < 300);
    const CmdResult c = run_wakesim("explain " + shell_quote(s) + " --case " + shell_quote("a\tb"));
    check_one_line_error(c, s, "/cases", "--case \"a\\tb\" names no case of the scenario; expected one of: \"c\"");
}

TEST_CASE("robustness: --case on a scenario without cases points at the document, not at a missing /cases", "[cli][robustness]") {
    TempDir dir;
    const std::string s = dir.file("nocases.json");
    write_file(s, R"({"name": "s", "machine": "altra-80", "workload": {"kind": "pipe", "loops": 200},
  "policies": ["plain"], "run": {"seeds": [3]}})");
    check_one_line_error(run_wakesim("run " + shell_quote(s) + " --case pinned"), s, "/",
                         "--case \"pinned\" names no case: the scenario has no \"cases\", so its one case is \"default\"");
    CHECK(run_wakesim("run " + shell_quote(s) + " --case default").rc == 0);
}

TEST_CASE("robustness: a file name in a message is escaped and cut", "[robustness]") {
    const wakesim::InputError e(std::string(300, 'a') + "\n", "/x", "expected y");
    const std::string what = e.what();
    CHECK(what == std::string(256, 'a') + "...: /x: expected y");
    CHECK(wakesim::InputError("a\tb", "", "c").what() == std::string("a\\x09b: /: c"));
}

// Issue 14: hackbench with 50 groups of 1000 fds (100,000 tasks, 50,000 pipes) grew to 6 GB
// (every pipe's wait queues held a slot per task; every sender a copy of a 3,000-step program),
// and a 100,000-instance task with a 1,000-step program to 7.9 GB (a copy per instance). Both
// now run in a fraction of that, and a run the estimate puts beyond --max-memory is refused
// before anything is built for it.
TEST_CASE("robustness: memory follows what a run needs, and a run beyond --max-memory is refused", "[cli][robustness]") {
    TempDir dir;
    // 100,000 workers and perf's main thread; 100,000 program tasks.
    for (const auto& [name, tasks] : {std::pair<const char*, const char*>{"messaging-50x1000.json", "(100001 tasks, "},
                                      {"program-100000x1000.json", "(100000 tasks, "}}) {
        const std::string file = (kSource / "tests" / "data" / "robustness" / name).string();
        INFO(name);
        const RssResult small = run_with_rss({"run", file, "--max-memory", "64MiB"}, dir.file("small.out"));
        INFO("output: " << small.out);
        CHECK(small.rc == 2);
        CHECK(count_lines(small.out) == 1);
        CHECK(small.out.rfind("wakesim: error: " + file + ": /workload: expected a workload within the memory budget "
                              "of 64.0 MiB (--max-memory); case \"one\" needs about ", 0) == 0);
        CHECK(contains(small.out, tasks));
        CHECK(contains(small.out, "raise the limit with --max-memory SIZE"));

        const RssResult ok = run_with_rss({"run", file, "--format", "csv", "--max-memory", "1GiB"}, dir.file("ok.out"));
        INFO("output: " << ok.out.substr(0, 2000));
        CHECK(ok.rc == 0);
        CHECK_FALSE(contains(ok.out, "warning"));  // a short run says nothing
        // Peak RSS well under 1 GiB (it was 6 and 7.9 GB); room left for sanitizer builds.
        CHECK(ok.maxrss_kib > 0);
        CHECK(ok.maxrss_kib < 1024 * 1024);
    }
    // --max-memory takes a size.
    const CmdResult bad = run_wakesim("run " + shell_quote((kSource / "scenarios" / "pipe-altra.json").string()) +
                                      " --max-memory lots");
    CHECK(bad.rc == 2);
    CHECK(count_lines(bad.out) == 1);
    CHECK(contains(bad.out, "expected a size such as 512MiB or 8GiB, got \"lots\""));
}

// Issue 14: 4096 seeds x cases x policies started thousands of runs without a word. A set of runs
// estimated to take long says so first on stderr, then counts the runs done; --quiet hides both.
// (The first run fails at once here -- its trace file's name is taken by a directory -- so the
// test is short.)
TEST_CASE("robustness: a long set of runs warns first, unless --quiet", "[cli][robustness]") {
    TempDir tmp;
    fs::create_directories(tmp.path() / "t.unpinned.plain.s1.txt");
    const std::string sc = shell_quote((kSource / "scenarios" / "pipe-altra.json").string());
    const std::string args = "run " + sc + " --seeds 10000 --jobs 1 --force --trace " + shell_quote(tmp.file("t.txt"));
    const CmdResult loud = run_wakesim(args);
    INFO(loud.out);
    CHECK(loud.rc == 2);
    CHECK(loud.out.rfind("wakesim: warning: ", 0) == 0);
    CHECK(contains(loud.out, "0000 runs estimated at about "));
    CHECK(contains(loud.out, "--quiet hides this\nwakesim: error: " + tmp.file("t.unpinned.plain.s1.txt")));
    const CmdResult quiet = run_wakesim(args + " --quiet");
    CHECK(quiet.rc == 2);
    CHECK(count_lines(quiet.out) == 1);
    CHECK(quiet.out.rfind("wakesim: error: " + tmp.file("t.unpinned.plain.s1.txt"), 0) == 0);
}

// compare, baseline and check run the same runs: their --quiet hides the estimate too. (The
// task is stuck at once, so runs "estimated" at a billion ops take no time.)
TEST_CASE("robustness: compare, baseline and check say nothing of the estimate under --quiet", "[cli][robustness]") {
    TempDir tmp;
    write_file(tmp.file("est.json"), R"({"name": "est", "machine": "kvm-2vcpu", "policies": ["plain", "wf_sync"],
      "run": {"ops": 1000000000, "seeds": [1]}, "workload": {"kind": "program", "channels": {"x": {}},
      "tasks": [{"name": "a", "program": [{"run": "10us"}, {"wait": "x"}, {"op": 1}]}]}})");
    const std::string sc = shell_quote(tmp.file("est.json"));
    const std::string b = shell_quote(tmp.file("b.json"));
    REQUIRE(contains(run_wakesim("compare " + sc + " --seeds 3").out, " runs estimated at about "));
    for (const std::string& cmd : {"compare " + sc + " --seeds 3 -q", "baseline " + sc + " -o " + b + " -q",
                                   "check " + sc + " --baseline " + b + " -q"}) {
        const CmdResult r = run_wakesim(cmd);
        INFO(cmd << ": " << r.out);
        CHECK_FALSE(contains(r.out, "estimated"));
    }
}

// Issue 14: two case names that differ only after a NUL wrote one trace file. A trace file name
// replaces what a file name cannot hold; two runs that would still share a file are refused.
TEST_CASE("robustness: two runs never write the same trace file", "[cli][robustness]") {
    TempDir dir;
    auto scenario = [](const std::string& a, const std::string& b) {
        return R"({"name": "t", "description": "d", "expected": "e", "machine": "altra-80",
  "workload": {"kind": "pipe", "loops": 50}, "policies": ["plain"], "run": {"seeds": [1]},
  "cases": [{"name": ")" + a + R"(", "description": "d"}, {"name": ")" + b + R"(", "description": "d"}]})";
    };
    const std::string nul = dir.file("nul.json");
    write_file(nul, scenario("a\\u0000x", "a\\u0000y"));
    const CmdResult ok = run_wakesim("run " + shell_quote(nul) + " --format csv --trace " + shell_quote(dir.file("t.txt")));
    INFO(ok.out);
    CHECK(ok.rc == 0);
    CHECK(fs::is_regular_file(dir.file("t.a_x.plain.s1.txt")));
    CHECK(fs::is_regular_file(dir.file("t.a_y.plain.s1.txt")));
    CHECK_FALSE(fs::exists(dir.file("t.a")));

    const std::string same = dir.file("same.json");
    write_file(same, scenario("a b", "a_b"));
    const CmdResult refused = run_wakesim("run " + shell_quote(same) + " --trace " + shell_quote(dir.file("u.txt")));
    INFO(refused.out);
    CHECK(refused.rc == 2);
    CHECK(count_lines(refused.out) == 1);
    CHECK(contains(refused.out, ": /cases: expected case and policy names that give each run its own trace file; case "
                                "\"a b\" policy \"plain\" and case \"a_b\" policy \"plain\" would both write "));
    CHECK_FALSE(fs::exists(dir.file("u.a_b.plain.s1.txt")));
}
