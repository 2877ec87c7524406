// Helpers of the tests that run the wakesim program as a child process: run it, capture its
// output and exit code, and work in a private temporary directory.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif
#ifndef WAKESIM_BINARY
#define WAKESIM_BINARY "wakesim"
#endif

namespace wakesim::clitest {

namespace fs = std::filesystem;

inline const fs::path kSource = WAKESIM_SOURCE_DIR;

inline std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

struct CmdResult {
    int rc = -1;
    std::string out;  // stdout, and stderr too unless the command was run with stderr apart
};

// Runs the program `binary` with ARGS under `timeout 20` (or $WAKESIM_TEST_TIMEOUT seconds:
// scripts/sanitize.sh sets 200, its builds run about ten times slower), so that a hang fails
// (rc 124) instead of blocking. with_stderr: capture stderr with stdout (2>&1); otherwise stderr
// is dropped.
inline std::string hang_guard() {
    const char* t = std::getenv("WAKESIM_TEST_TIMEOUT");
    const std::string s = t && *t ? t : "20";
    for (char c : s)
        if (c < '0' || c > '9') return "timeout 20 ";
    return "timeout " + s + " ";
}
inline CmdResult run_program(const std::string& binary, const std::string& args, bool with_stderr = true) {
    const std::string cmd = hang_guard() + shell_quote(binary) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
    CmdResult r;
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[8192];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = ::pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return r;
}

inline CmdResult run_wakesim(const std::string& args, bool with_stderr = true) {
    return run_program(WAKESIM_BINARY, args, with_stderr);
}

inline size_t count_lines(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += c == '\n' ? 1 : 0;
    if (!s.empty() && s.back() != '\n') ++n;
    return n;
}

inline bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// The lines of a bad-input folder's expected.txt: file, JSON pointer and a piece of the message,
// tab-separated.
struct ExpectedError {
    std::string file, pointer, message;
};
inline std::vector<ExpectedError> read_expected_errors(const fs::path& dir) {
    std::vector<ExpectedError> out;
    std::ifstream list(dir / "expected.txt");
    for (std::string line; std::getline(list, line);) {
        if (line.empty()) continue;
        const auto t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
        if (t1 == std::string::npos || t2 == std::string::npos) continue;
        out.push_back({line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1), line.substr(t2 + 1)});
    }
    return out;
}

// A private temporary directory, removed at scope exit.
class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = fs::temp_directory_path() /
                ("wakesim-cli-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    fs::path path_;
};

}  // namespace wakesim::clitest
