// The layout's one rule (docs/architecture.md): dependencies point down. Every project header a
// folder includes must come from the folder itself or from one it may depend on; in particular the
// kernel mirror includes nothing of the simulator's machinery, and policies see only the kernel.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace {

// Each folder and what it may include (the same direction as CMakeLists.txt's libraries).
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"engine", {}},
    {"input", {}},
    {"topology", {"input"}},
    {"hw", {"engine", "input", "topology"}},
    {"kernel", {"engine", "hw", "topology"}},
    {"metrics", {"engine", "hw", "kernel", "topology"}},
    {"sim", {"engine", "hw", "kernel", "metrics", "topology"}},
    {"policies", {"input", "kernel"}},
    {"workloads", {"engine", "hw", "input", "kernel", "sim", "topology"}},
    {"experiment", {"engine", "hw", "input", "kernel", "metrics", "policies", "sim", "topology", "workloads"}},
    {"cli", {"engine", "hw", "input", "kernel", "metrics", "policies", "sim", "topology", "workloads", "experiment"}},
};

}  // namespace

TEST_CASE("Folders include only the folders below them", "[architecture]") {
    const fs::path src = WAKESIM_SOURCE_DIR;
    const std::regex inc(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
    int files = 0;
    for (const auto& [folder, allowed] : kMayInclude) {
        REQUIRE(fs::is_directory(src / folder));
        for (const auto& e : fs::recursive_directory_iterator(src / folder)) {
            const auto ext = e.path().extension();
            if (ext != ".h" && ext != ".cpp") continue;
            ++files;
            std::ifstream in(e.path());
            for (std::string line; std::getline(in, line);) {
                std::smatch m;
                if (!std::regex_search(line, m, inc)) continue;
                const std::string to = m[1];
                if (to == folder || !kMayInclude.count(to)) continue;
                INFO(fs::relative(e.path(), src).string() << ": " << line);
                CHECK(allowed.count(to) == 1);
            }
        }
    }
    CHECK(files > 50);
}

TEST_CASE("No test name holds a semicolon, which CTest would split into names that run nothing, nor a colon Catch cannot wrap at", "[architecture]") {
    // catch_discover_tests() registers each TEST_CASE by name, and CTest reads a ';' in it as a
    // list separator: the halves match no test, Catch runs nothing and reports success. Catch 2's
    // console reporter indents a wrapped name to just after its first ": "; past its 80 columns
    // that indent is wider than the line, and printing the test's failure calls std::terminate.
    const fs::path tests = fs::path(WAKESIM_SOURCE_DIR) / "tests";
    const std::regex test_case(R"re(TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+),)re");
    const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
    int names = 0;
    for (const auto& entry : fs::directory_iterator(tests)) {
        if (entry.path().extension() != ".cpp") continue;
        std::ifstream in(entry.path());
        std::ostringstream file;
        file << in.rdbuf();
        const std::string text = file.str();
        for (std::sregex_iterator it(text.begin(), text.end(), test_case), end; it != end; ++it) {
            ++names;
            // The name as Catch sees it: its adjacent literals joined.
            const std::string literals = (*it)[1].str();
            std::string name;
            for (std::sregex_iterator l(literals.begin(), literals.end(), literal), lend; l != lend; ++l) name += (*l)[1].str();
            INFO(entry.path().filename().string() << ": " << name);
            CHECK(name.find(';') == std::string::npos);
            const size_t colon = name.find(": ");
            CHECK((colon == std::string::npos || colon < 76));
        }
    }
    CHECK(names > 200);
}
