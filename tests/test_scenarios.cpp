// Every shipped scenario under scenarios/ loads and says what it shows. (Running them and checking
// the numbers is the validation tests' job.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "experiment/scenario.h"
#include "experiment/sweep.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

TEST_CASE("every scenario in scenarios/ (and scenarios/validation/) loads and is described in a paragraph", "[scenarios]") {
    const fs::path dir = fs::path(WAKESIM_SOURCE_DIR) / "scenarios";
    REQUIRE(fs::is_directory(dir));
    std::vector<fs::path> files;
    std::vector<fs::path> sweeps;  // scenarios/sweeps/: sweep files, each point a scenario
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json")
            (e.path().parent_path().filename() == "sweeps" ? sweeps : files).push_back(e.path());
    REQUIRE(!files.empty());
    REQUIRE(!sweeps.empty());
    std::vector<std::pair<fs::path, wakesim::Scenario>> all;
    for (const auto& f : files) {
        try {
            all.emplace_back(f, wakesim::load_scenario(f.string()));
        } catch (const std::exception& e) {
            FAIL_CHECK(f.string() << ": load failed: " << e.what());
        }
    }
    for (const auto& f : sweeps) {
        try {
            const wakesim::Sweep sw = wakesim::load_sweep(f.string());
            CHECK(sw.points.size() > 1);
            CHECK(!sw.description.empty());
            for (size_t p = 0; p < sw.points.size(); ++p) all.emplace_back(f, sw.scenario(p));
        } catch (const std::exception& e) {
            FAIL_CHECK(f.string() << ": load failed: " << e.what());
        }
    }
    for (const auto& [f, sc] : all) {
        INFO(f.string());
        CHECK(!sc.name.empty());
        CHECK(!sc.description.empty());
        CHECK(!sc.expected.empty());
        // What the scenario gives now; how its figures moved belongs in docs/scenario-history.md.
        CHECK(sc.expected.size() <= 1400);
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
