// Machines are data: machines/<name>.json, one file per machine (docs/machines.md). The list of
// machines is the directory's files; a file written by the user runs with no rebuild, by path from
// a scenario, from --machines / WAKESIM_MACHINES, or installed next to the program.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "experiment/scenario.h"
#include "hw/machine_profile.h"
#include "input/json_input.h"
#include "topology/topology.h"

using namespace wakesim;
using namespace wakesim::clitest;

namespace {

// A copy of kvm-2vcpu.json whose context switch costs 1us instead of 3.478us.
std::string fast_vm_text() {
    nlohmann::json j = nlohmann::json::parse(read_file(kSource / "machines" / "kvm-2vcpu.json"));
    REQUIRE(j["profile"]["ctx_switch"]["value"] == "3.478us");
    j["profile"]["ctx_switch"]["value"] = "1us";
    j["profile"]["ctx_switch"]["source"] = "what if the guest switched as fast as bare metal";
    return j.dump(2);
}

// perf bench sched pipe with both tasks on CPU 0: every round trip pays two context switches.
std::string pipe_scenario(const std::string& machine) {
    return R"({"machine": )" + machine + R"(, "workload": {"kind": "pipe", "loops": 2000, "cpus": "0"},
               "policies": ["plain"], "run": {"warmup_ops": 200, "seeds": [1]}})";
}

// The cells of a Markdown table row ("| a | b |" -> {"a", "b"}); empty when the line is no row.
std::vector<std::string> table_cells(const std::string& line) {
    std::vector<std::string> cells;
    if (line.rfind("| ", 0) != 0) return cells;
    std::istringstream in(line.substr(1));
    std::string cell;
    while (std::getline(in, cell, '|')) {
        const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
        cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    return cells;
}

// Sets a directory for machine_names() for one scope (as --machines does), then restores the lookup.
struct MachinesDirScope {
    explicit MachinesDirScope(const std::string& dir) { set_machines_dir(dir); }
    ~MachinesDirScope() { set_machines_dir(""); }
    MachinesDirScope(const MachinesDirScope&) = delete;
    MachinesDirScope& operator=(const MachinesDirScope&) = delete;
};

}  // namespace

TEST_CASE("machines: the list of machines is the files of machines/, sorted, each named after its file",
          "[machines]") {
    CHECK(fs::equivalent(machines_dir(), kSource / "machines"));
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(kSource / "machines"))
        if (e.path().extension() == ".json") files.push_back(e.path().stem().string());
    std::sort(files.begin(), files.end());
    REQUIRE(machine_names() == files);
    CHECK(files.size() >= 6);
    for (const auto& name : files) {
        INFO(name);
        const MachineFile m = load_machine_file(machine_path(name));
        CHECK(m.topo.name() == name);
        CHECK(m.profile.name == name);
        CHECK(!m.topo.description().empty());
        CHECK(!m.profile.source.empty());
        // Five structured parameters (cpufreq_policies in place of opp and freq_domain where a machine
        // has per-policy clocks), and the optional energy model and turbo bins where a machine has them.
        const size_t structured = m.profile.cpufreq_policies.empty() ? 5 : 4;
        CHECK(m.profile.describe().size() == MachineProfile::params().size() + structured +
                                                 (m.profile.energy_model.empty() ? 0 : 1) + (m.profile.turbo_khz.empty() ? 0 : 1));
    }
    CHECK_THROWS_WITH(machine_path("zen4"), Catch::Contains("epyc-zen4-2s"));
    CHECK_THROWS_AS(make_machine_profile("machines/kvm-2vcpu.json"), std::out_of_range);
}

TEST_CASE("machines: values are written as a user writes them, with units", "[machines]") {
    const MachineProfile altra = make_machine_profile("altra-80");
    CHECK(altra.syscall_ns == 168);
    CHECK(altra.source_of("syscall_ns").rfind("fitted to the perf bench sched pipe figures of", 0) == 0);
    CHECK(altra.source_of("select_probe_ns") == altra.source);  // no source of its own
    CHECK(altra.opp_khz == std::vector<int64_t>{1000000, 1500000, 2000000, 2500000, 3000000});
    const MachineProfile kvm = make_machine_profile("kvm-2vcpu");
    CHECK(kvm.opp_khz.empty());  // "opp": [] is a fixed clock
    CHECK(kvm.ipi_latency_ns == 3704);
    CHECK(kvm.ipi_send_overlaps);
    REQUIRE(kvm.idle_states.size() == 1);
    CHECK(kvm.idle_states[0].name == "HLT");
    CHECK(make_machine_profile("e5-2650-2s").opp_khz.size() == 15);
}

TEST_CASE("machines: a user's copy of kvm-2vcpu.json with one change runs with no rebuild", "[machines][cli]") {
    TempDir tmp;
    fs::create_directories(tmp.path() / "boxes");
    write_file(tmp.path() / "boxes" / "fast-vm.json", fast_vm_text());
    const std::string box = (tmp.path() / "boxes" / "fast-vm.json").string();

    SECTION("in the library: by path, as a preset with overrides, and as a profile base") {
        const MachineFile fast = load_machine_file(box);
        const MachineFile kvm = load_machine_file(machine_path("kvm-2vcpu"));
        CHECK(fast.profile.name == "fast-vm");
        CHECK(fast.profile.ctx_switch_ns == 1000);
        const auto a = fast.profile.describe(), b = kvm.profile.describe();
        REQUIRE(a.size() == b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            INFO(a[i].name);
            CHECK((a[i].value == b[i].value) == (a[i].name != "ctx_switch_ns"));
        }

        const std::string sc = tmp.file("s.json");
        const auto parse = [&](const std::string& machine) {
            return parse_scenario(nlohmann::json::parse(pipe_scenario(machine)), sc).cases.at(0);
        };
        const CaseSpec by_path = parse(R"("boxes/fast-vm.json")");
        CHECK(by_path.topo->name() == "fast-vm");
        CHECK(by_path.profile.ctx_switch_ns == 1000);
        const CaseSpec preset = parse(R"({"preset": "boxes/fast-vm.json", "profile": {"syscall": "1us"}})");
        CHECK(preset.profile.ctx_switch_ns == 1000);
        CHECK(preset.profile.syscall_ns == 1000);
        const CaseSpec base = parse(R"({"preset": "altra-80", "profile": {"base": "boxes/fast-vm.json"}})");
        CHECK(base.topo->nr_cpus() == 80);
        CHECK(base.profile.name == "fast-vm");
        CHECK(parse(R"({"topology": {"cores_per_cluster": 4}, "profile": {"base": ")" + box + R"("}})")
                  .profile.ctx_switch_ns == 1000);

        const MachinesDirScope scope((tmp.path() / "boxes").string());
        CHECK(machine_names() == std::vector<std::string>{"fast-vm"});
        CHECK(parse(R"("fast-vm")").profile.ctx_switch_ns == 1000);
    }

    SECTION("on the command line: run, topo show, --machines and WAKESIM_MACHINES") {
        write_file(tmp.path() / "fast.json", pipe_scenario(R"("boxes/fast-vm.json")"));
        write_file(tmp.path() / "kvm.json", pipe_scenario(R"("kvm-2vcpu")"));
        const CmdResult fast = run_wakesim("run --format json " + shell_quote(tmp.file("fast.json")), false);
        const CmdResult kvm = run_wakesim("run --format json " + shell_quote(tmp.file("kvm.json")), false);
        REQUIRE(fast.rc == 0);
        REQUIRE(kvm.rc == 0);
        const auto fj = nlohmann::json::parse(fast.out), kj = nlohmann::json::parse(kvm.out);
        CHECK(fj["cases"][0]["machine"] == "fast-vm");
        CHECK(fj["cases"][0]["profile"] == "fast-vm");
        CHECK(fj["runs"] != kj["runs"]);  // the cheaper context switch shows

        const CmdResult show = run_wakesim("topo show " + shell_quote(box));
        CHECK(show.rc == 0);
        CHECK(contains(show.out, "profile fast-vm (source: "));
        CHECK(contains(show.out, "what if the guest switched as fast as bare metal"));

        const std::string dir = shell_quote((tmp.path() / "boxes").string());
        write_file(tmp.path() / "by-name.json", pipe_scenario(R"("fast-vm")"));
        const CmdResult by_name =
            run_wakesim("run --format json --machines " + dir + " " + shell_quote(tmp.file("by-name.json")), false);
        REQUIRE(by_name.rc == 0);
        CHECK(nlohmann::json::parse(by_name.out)["runs"] == fj["runs"]);
        const CmdResult listed = run_wakesim("list machines --machines " + dir);
        CHECK(listed.rc == 0);
        CHECK(contains(listed.out, "\nfast-vm: "));
        CHECK_FALSE(contains(listed.out, "altra-80"));
        const CmdResult env =
            run_program("env", "WAKESIM_MACHINES=" + dir + " " + shell_quote(WAKESIM_BINARY) + " topo show fast-vm");
        CHECK(env.rc == 0);
        CHECK(contains(env.out, "profile fast-vm"));
    }
}

TEST_CASE("machines: an installed wakesim reads share/wakesim/machines next to its bin/", "[machines][cli]") {
    TempDir tmp;
    const fs::path bin = tmp.path() / "bin", share = tmp.path() / "share" / "wakesim" / "machines";
    fs::create_directories(bin);
    fs::create_directories(share);
    fs::copy_file(WAKESIM_BINARY, bin / "wakesim");
    fs::permissions(bin / "wakesim", fs::perms::owner_exec, fs::perm_options::add);
    fs::copy_file(kSource / "machines" / "kvm-2vcpu.json", share / "kvm-2vcpu.json");
    write_file(share / "fast-vm.json", fast_vm_text());
    const CmdResult r = run_program((bin / "wakesim").string(), "list machines");
    CHECK(r.rc == 0);
    const fs::path installed = fs::canonical(tmp.path()) / "share/wakesim/machines";
    CHECK(r.out.rfind("machine files in " + installed.string() + " ", 0) == 0);
    CHECK(contains(r.out, "\nfast-vm: "));
    CHECK(contains(r.out, "\nkvm-2vcpu: "));
    CHECK_FALSE(contains(r.out, "altra-80"));
}

TEST_CASE("machines: an error in a machine file or the machines directory is one line each, exit 2", "[machines][cli]") {
    const fs::path bad = kSource / "tests" / "bad_inputs" / "machines" / "syscall_without_unit.json";
    const CmdResult show = run_wakesim("topo show " + shell_quote(bad.string()));
    INFO(show.out);
    CHECK(show.rc == 2);
    CHECK(count_lines(show.out) == 1);
    CHECK(show.out.rfind("wakesim: error: " + bad.string() + ": /profile/syscall/value: expected a duration", 0) == 0);

    const std::string bad_dir = shell_quote((kSource / "tests" / "bad_inputs" / "machines").string());
    const CmdResult list = run_wakesim("list machines --machines " + bad_dir);
    INFO(list.out);
    CHECK(list.rc == 2);
    // Every bad file of the directory, each mistake on its own line, and no listing.
    CHECK(count_lines(list.out) == 16);
    CHECK(contains(list.out, "bad_inputs/machines/em_cpu_twice.json: "));
    CHECK(contains(list.out, "bad_inputs/machines/unknown_top_key.json: /profil: "));
    CHECK_FALSE(contains(list.out, "machine files in"));

    for (const std::string& cmd : {std::string("list machines --machines /no/such/dir"),
                                   std::string("topo show kvm-2vcpu --machines /no/such/dir")}) {
        const CmdResult r = run_wakesim(cmd);
        INFO(cmd << " -> " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
        CHECK(r.out.rfind("wakesim: error: /no/such/dir: /: expected a directory of machine files (from --machines)",
                          0) == 0);
    }
    const CmdResult env =
        run_program("env", "WAKESIM_MACHINES=/no/such/dir " + shell_quote(WAKESIM_BINARY) + " list machines");
    CHECK(env.rc == 2);
    CHECK(contains(env.out, "(from WAKESIM_MACHINES)"));

    const CmdResult unknown = run_wakesim("topo show kvm-2vpcu");
    CHECK(unknown.rc == 2);
    CHECK(contains(unknown.out, "did you mean \"kvm-2vcpu\"?"));
}

TEST_CASE("machines: the per-machine tables of docs/machines.md and docs/topology.md match the files",
          "[machines][docs]") {
    const std::vector<std::string> names = machine_names();
    std::map<std::string, MachineProfile> profiles;
    for (const auto& n : names) profiles.emplace(n, make_machine_profile(n));

    // docs/machines.md: a section "### NAME: ..." per machine, with rows "| key | value | source |".
    std::istringstream md(read_file(kSource / "docs" / "machines.md"));
    std::string line, machine;
    std::set<std::string> sections;
    int rows = 0;
    while (std::getline(md, line)) {
        if (line.rfind("## ", 0) == 0) machine.clear();
        if (line.rfind("### ", 0) == 0) {
            machine = line.substr(4, line.find(':') - 4);
            if (profiles.count(machine))
                sections.insert(machine);
            else
                machine.clear();
        }
        const auto cells = table_cells(line);
        if (machine.empty() || cells.size() < 2) continue;
        for (const auto& param : MachineProfile::params()) {
            if (cells[0] != param.name && cells[0] + "_ns" != param.name) continue;
            INFO(machine << ": " << line);
            const int64_t want = profiles.at(machine).get(param.name);
            std::string text = cells[1];
            if (std::string(param.unit) == "bool") {
                CHECK(text == (want ? "true" : "false"));
            } else if (std::string(param.unit) == "ns") {
                text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
                CHECK(parse_duration_ns(text) == want);
            } else {
                CHECK(std::stoll(text) == want);
            }
            ++rows;
        }
    }
    CHECK(sections == std::set<std::string>(names.begin(), names.end()));
    CHECK(rows >= 17 * static_cast<int>(names.size()));

    // docs/topology.md: a row "| `NAME` | CPUs | ..." per machine.
    std::istringstream topo(read_file(kSource / "docs" / "topology.md"));
    std::set<std::string> listed;
    while (std::getline(topo, line)) {
        const auto cells = table_cells(line);
        if (cells.size() < 2 || cells[0].size() < 3 || cells[0].front() != '`') continue;
        const std::string name = cells[0].substr(1, cells[0].size() - 2);
        if (!profiles.count(name)) continue;
        INFO(line);
        listed.insert(name);
        CHECK(std::stoi(cells[1]) == make_topology_preset(name).nr_cpus());
    }
    CHECK(listed == std::set<std::string>(names.begin(), names.end()));
}
