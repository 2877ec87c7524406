// Machines are data: one JSON file per machine in the machines directory (docs/machines.md). This
// file finds that directory, lists its machines and reads a machine file's topology; the profile
// part is read in hw/machine_profile.cpp.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "input/json_input.h"
#include "topology/topology.h"

namespace wakesim {

namespace fs = std::filesystem;

namespace {

std::string& dir_option() {
    static std::string dir;
    return dir;
}

std::string explicit_dir(const std::string& dir, const char* from) {
    if (!fs::is_directory(dir))
        throw InputError(dir, "", std::string("expected a directory of machine files (from ") + from + ")");
    return dir;
}

}  // namespace

void set_machines_dir(std::string dir) { dir_option() = std::move(dir); }

std::string machines_dir() {
    if (!dir_option().empty()) return explicit_dir(dir_option(), "--machines");
    if (const char* env = std::getenv("WAKESIM_MACHINES"); env && *env) return explicit_dir(env, "WAKESIM_MACHINES");
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed = exe.parent_path().parent_path() / "share" / "wakesim" / "machines";
        if (fs::is_directory(installed)) return installed.string();
    }
#ifdef WAKESIM_SOURCE_MACHINES_DIR
    if (fs::is_directory(WAKESIM_SOURCE_MACHINES_DIR)) return WAKESIM_SOURCE_MACHINES_DIR;
#endif
    throw InputError("machines", "",
                     "expected a directory of machine files: give --machines DIR or set WAKESIM_MACHINES (none is "
                     "installed next to the program)");
}

std::vector<std::string> machine_names() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(machines_dir()))
        if (e.path().extension() == ".json" && e.is_regular_file()) names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The machine a mistyped name most likely meant: the nearest by edit distance, else the one
// machine whose name starts with it or has it as a part ("xeon" -> "xeon-2s-16c32t").
std::string machine_name_hint(const std::string& s) {
    const std::vector<std::string> names = machine_names();
    if (std::string near = nearest_name(s, names); !near.empty()) return near;
    if (s.size() < 2) return {};
    auto lower = [](std::string t) {
        for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return t;
    };
    const std::string ls = lower(s);
    std::string pick;
    for (const auto& n : names) {
        if (lower(n).find(ls) == std::string::npos) continue;
        if (!pick.empty()) return {};  // two candidates: no guess
        pick = n;
    }
    return pick;
}

std::string machine_names_text() {
    std::string text;
    for (const auto& n : machine_names()) text += (text.empty() ? "" : ", ") + n;
    return text;
}

bool is_machine_path(const std::string& s) {
    return s.find('/') != std::string::npos || (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

bool is_machine_name(const std::string& s) {
    return !s.empty() && !is_machine_path(s) && fs::is_regular_file(fs::path(machines_dir()) / (s + ".json"));
}

std::string machine_path(const std::string& name) {
    if (!is_machine_name(name))
        throw std::out_of_range("unknown machine \"" + name + "\"; valid values are: " + machine_names_text());
    return (fs::path(machines_dir()) / (name + ".json")).string();
}

std::string machine_name_of(const std::string& path) { return fs::path(path).stem().string(); }

Topology machine_topology_from_json(const JsonNode& doc) {
    doc.require_object();
    InputErrorCollector errors;  // every mistake of the machine's keys and topology, each on its own line
    const bool keys_ok = errors.attempt([&] { doc.check_keys({"description", "topology", "profile"}); });
    // A misspelt key is one mistake: the required key it stands for is not reported missing too.
    std::string description;
    if (keys_ok || doc.has("description")) errors.attempt([&] { description = doc.at("description").as_string(); });
    Topology topo;
    if (keys_ok || doc.has("topology")) errors.attempt([&] {
        const JsonNode t = doc.at("topology");
        t.require_object();
        for (const char* k : {"name", "description"})
            if (t.has(k))
                errors.attempt([&] {
                    t.at(k).fail("expected no \"name\" or \"description\" here: a machine's name is its file name and "
                                 "its description is the file's \"description\"");
                });
        topo = topology_from_json(t, machine_name_of(doc.file()), description);
    });
    errors.finish();
    return topo;
}

Topology make_topology_preset(const std::string& name) {
    const std::string path = machine_path(name);
    const nlohmann::json doc = load_json_file(path);
    return machine_topology_from_json(JsonNode(doc, path));
}

}  // namespace wakesim
