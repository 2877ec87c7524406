// The registry of workload kinds, the generic part of reading a workload object, and the helpers
// the kind files share. Adding a kind: a file like pipe.cpp that defines its entry, and its line
// below (declaration and table row).
#include "workloads/workloads.h"

#include <stdexcept>

#include "input/json_input.h"
#include "workloads/kind.h"

namespace wakesim {

// Each kind file defines its entry.
const WorkloadKind& pipe_workload();
const WorkloadKind& messaging_workload();
const WorkloadKind& program_workload();
const WorkloadKind& fio_workload();
const WorkloadKind& bonnie_workload();
const WorkloadKind& extract_workload();

const std::vector<WorkloadKind>& workload_kinds() {
    static const std::vector<WorkloadKind> kinds = {
        pipe_workload(),       // perf bench sched pipe
        messaging_workload(),  // perf bench sched messaging (hackbench)
        program_workload(),    // rt-app-style task programs
        fio_workload(),        // fio psync reads through FUSE (/dev/fuse, fuse-over-io-uring)
        bonnie_workload(),     // bonnie++ -s0 -n: metadata requests through FUSE
        extract_workload(),    // an app extracting small files through FUSE (Android shared storage)
    };
    return kinds;
}

const WorkloadKind* find_workload_kind(std::string_view kind) {
    for (const WorkloadKind& k : workload_kinds())
        if (k.kind == kind) return &k;
    return nullptr;
}

const std::vector<ParamSection>& workload_param_sections() {
    static const std::vector<ParamSection> sections = [] {
        std::vector<ParamSection> out;
        for (const WorkloadKind& k : workload_kinds()) {
            out.push_back({k.kind, k.kind + ": " + k.description, k.keys, &k.params});
            for (const ParamSection& s : k.sections) out.push_back(s);
        }
        out.push_back({"hogs", "hogs: CPU-bound background tasks (every kind)", {}, &hogs_params()});
        out.push_back({"noise", "noise: periodic background tasks (every kind)", {}, &noise_params()});
        return out;
    }();
    return sections;
}

const ParamSection* find_workload_section(std::string_view name) {
    for (const ParamSection& s : workload_param_sections())
        if (s.name == name) return &s;
    return nullptr;
}

std::string section_markdown(const ParamSection& s) {
    std::string out = params_markdown_header();
    for (const KeyDoc& k : s.keys) out += "| `" + k.name + "` | " + k.type + " | " + k.default_text + " |  | " + k.help + " |\n";
    return out + params_markdown_rows(*s.table);
}

WorkloadBuild build_workload(const JsonNode& w, const MachineProfile& prof, const Topology& topo) {
    w.require_object();
    std::vector<std::string> kinds;
    for (const WorkloadKind& k : workload_kinds()) kinds.push_back(k.kind);
    const WorkloadKind& k = *find_workload_kind(w.at("kind").as_enum(kinds));
    std::vector<std::string> before = {"kind"};
    for (const KeyDoc& d : k.keys) before.push_back(d.name);
    const std::vector<std::string> keys = keys_around(before, k.params, {"hogs", "noise"});
    const ParamValues params = read_params(w, k.params, keys);  // checks the keys too
    WorkloadBuild b = k.build(WorkloadInput{w, params, prof, topo});
    b.params = params;
    add_background(read_background(w, topo), b);
    return b;
}

// ---- shared by the kind files -------------------------------------------------------------------

CpuSet read_cpus(const JsonNode& obj, const ParamValues& v, std::string_view name, const Topology& topo) {
    CpuSet s;
    if (!v.given(name)) return s;
    const JsonNode n = obj.at(name);
    std::vector<int> ids;
    try {
        ids = parse_cpu_list(v.cpulist(name));
    } catch (const std::invalid_argument& e) {
        n.fail(std::string("expected a CPU list like \"0-3,8\": ") + e.what());
    }
    for (int c : ids) {
        if (c >= topo.nr_cpus())
            n.fail("expected CPUs of this machine (0-" + std::to_string(topo.nr_cpus() - 1) + "), got cpu " + std::to_string(c));
        s.set(c);
    }
    return s;
}

std::vector<std::string> keys_around(std::vector<std::string> before, const ParamTable& table,
                                     const std::vector<std::string>& after) {
    for (const ParamSpec& s : table) before.push_back(s.name);
    before.insert(before.end(), after.begin(), after.end());
    return before;
}

}  // namespace wakesim
