// Every shipped scenario under scenarios/ loads and says what it shows. (Running them and checking
// the numbers is the validation tests' job.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "experiment/scenario.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

TEST_CASE("every scenario in scenarios/ (and scenarios/validation/) loads and is described", "[scenarios]") {
    const fs::path dir = fs::path(WAKESIM_SOURCE_DIR) / "scenarios";
    REQUIRE(fs::is_directory(dir));
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    REQUIRE(!files.empty());
    for (const auto& f : files) {
        INFO(f.string());
        wakesim::Scenario sc;
        try {
            sc = wakesim::load_scenario(f.string());
        } catch (const std::exception& e) {
            FAIL_CHECK("load failed: " << e.what());
            continue;
        }
        CHECK(!sc.name.empty());
        CHECK(!sc.description.empty());
        CHECK(!sc.expected.empty());
        CHECK(!sc.cases.empty());
        CHECK(!sc.policies.empty());
        CHECK(!sc.seeds.empty());
        for (const auto& c : sc.cases) {
            INFO("case " << c.name);
            CHECK(c.topo != nullptr);
            CHECK(c.domains != nullptr);
            CHECK(!c.workload.tasks.empty());
        }
    }
}
