// rt-app to wakesim. rt-app's events run in the order the file lists them, and an event key may
// carry a suffix to repeat it ("run0", "sleep1"): the file is read with its key order kept.
//
// Mapping (rt-app's doc/tutorial.txt names):
//   task "instance": N        -> program task "count": N
//   task "loop": N            -> the events in {"loop": N, "do": [...]}; -1 (forever) loops until
//                                the scenario's "duration" (global "duration", default 10 s)
//   "phases": {...}           -> each phase in turn, each with its own "loop"
//   "run"/"runtime": us       -> {"run": "Nus"}   (rt-app's run is calibrated CPU work)
//   "sleep": us               -> {"sleep": "Nus"}
//   "signal": "q"             -> {"post": "q"}    (a channel; see below)
//   "wait": "q" or {"ref": q} -> {"wait": "q"}; with "mutex": m, the mutex is released around it
//   "lock"/"unlock": m        -> {"wait"/"post": "mutex_m"}: a channel holding one token, which a
//                                task "init_mutex_m" posts at the start
//   "cpus": [0, 1]            -> "cpus": [0, 1]
//   "policy"/"priority"       -> SCHED_OTHER/BATCH/IDLE with priority as nice
// rt-app's signal wakes a waiter of a condition variable and is lost when none waits; a channel
// keeps the token for the next wait. The import says so in the scenario's description.
// Refused with a message: "timer" (an absolute period: the program kind has no timer step), the real-time and deadline policies (wakesim models the fair
// class), and every other event (mem, iorun, fork, barrier, suspend, resume, yield, ...).
#include "experiment/rtapp_import.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "input/json_input.h"

namespace wakesim {

namespace {

using ojson = nlohmann::ordered_json;

constexpr int64_t kMaxUs = int64_t{3600} * 1000000;  // wakesim's longest step, 1 hour
constexpr int64_t kDefaultDurationS = 10;

struct Reader {
    std::string file;
    std::vector<std::string> channels;  // in order of first use

    [[noreturn]] void fail(const std::string& ptr, const std::string& expected) const { throw InputError(file, ptr, expected); }

    int64_t integer(const ojson& v, const std::string& ptr, int64_t min, int64_t max, const char* what) const {
        if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max)
            fail(ptr, std::string("expected ") + what + ", an integer in [" + std::to_string(min) + ", " +
                          std::to_string(max) + "], got " + quote_for_message(v.dump()));
        return v.get<int64_t>();
    }

    std::vector<std::string> mutexes;  // their channels, each given its one token at the start

    // A mutex is a channel holding one token: lock waits for it, unlock posts it back.
    std::string mutex_channel(const std::string& name) {
        const std::string c = channel("mutex_" + name);
        bool known = false;
        for (const auto& m : mutexes) known |= m == c;
        if (!known) mutexes.push_back(c);
        return c;
    }

    std::string channel(const std::string& name) {
        for (const auto& c : channels)
            if (c == name) return c;
        channels.push_back(name);
        return name;
    }

    // The event's kind: the key without the digits rt-app lets one append ("run0" -> "run").
    static std::string kind_of(const std::string& key) {
        size_t end = key.size();
        while (end > 0 && key[end - 1] >= '0' && key[end - 1] <= '9') --end;
        return key.substr(0, end);
    }

    // Appends the events of `obj` (a task or a phase) to `steps`; skips the keys `skip`.
    void events(const ojson& obj, const std::string& ptr, const std::vector<std::string>& skip, ojson& steps) {
        for (const auto& [key, v] : obj.items()) {
            bool skipped = false;
            for (const auto& s : skip) skipped |= key == s;
            if (skipped) continue;
            const std::string at = ptr + "/" + json_pointer_escape(key);
            const std::string kind = kind_of(key);
            if (kind == "run" || kind == "runtime") {
                steps.push_back({{"run", std::to_string(integer(v, at, 1, kMaxUs, "a run time in microseconds")) + "us"}});
            } else if (kind == "sleep") {
                steps.push_back({{"sleep", std::to_string(integer(v, at, 1, kMaxUs, "a sleep time in microseconds")) + "us"}});
            } else if (kind == "signal") {
                if (!v.is_string() || v.get<std::string>().empty()) fail(at, "expected the name of the condition to signal");
                steps.push_back({{"post", channel(v.get<std::string>())}});
            } else if (kind == "wait") {
                const ojson* ref = v.is_object() && v.contains("ref") ? &v["ref"] : &v;
                if (!ref->is_string() || ref->get<std::string>().empty())
                    fail(at, "expected the name of the condition to wait for, or {\"ref\": NAME, \"mutex\": NAME}");
                const ojson* mutex = v.is_object() && v.contains("mutex") ? &v["mutex"] : nullptr;
                if (mutex && (!mutex->is_string() || mutex->get<std::string>().empty()))
                    fail(at + "/mutex", "expected the name of the mutex the wait releases");
                // pthread_cond_wait: release the mutex, wait, take it again.
                if (mutex) steps.push_back({{"post", mutex_channel(mutex->get<std::string>())}});
                steps.push_back({{"wait", channel(ref->get<std::string>())}});
                if (mutex) steps.push_back({{"wait", mutex_channel(mutex->get<std::string>())}});
            } else if (kind == "lock" || kind == "unlock") {
                if (!v.is_string() || v.get<std::string>().empty()) fail(at, "expected the name of the mutex");
                steps.push_back({{kind == "lock" ? "wait" : "post", mutex_channel(v.get<std::string>())}});
            } else if (kind == "timer") {
                fail(at, "expected no \"timer\": a timer wakes at absolute period boundaries and wakesim's program "
                         "workload has no timer step; write the period's sleep as \"sleep\" if drift is acceptable");
            } else {
                fail(at, "expected an rt-app event wakesim can model (run, runtime, sleep, signal, wait); \"" + kind +
                             "\" has no program step");
            }
        }
    }
};

}  // namespace

ojson import_rtapp(const std::string& path, const std::string& machine) {
    const std::string text = read_text_file(path, kMaxJsonFileBytes, "an rt-app file");
    ojson doc;
    try {
        doc = ojson::parse(text);
    } catch (const std::exception&) {
        throw InputError(path, "", "expected an rt-app file in JSON (rt-app's own format); this is not valid JSON");
    }
    Reader r{path, {}, {}};
    if (!doc.is_object() || !doc.contains("tasks") || !doc["tasks"].is_object() || doc["tasks"].empty())
        r.fail(doc.is_object() && doc.contains("tasks") ? "/tasks" : "",
               "expected an rt-app file: an object with \"tasks\", an object of at least one task");
    int64_t duration_s = kDefaultDurationS;
    if (doc.contains("global")) {
        const ojson& g = doc["global"];
        if (!g.is_object()) r.fail("/global", "expected an object");
        if (g.contains("duration")) {
            const int64_t d = r.integer(g["duration"], "/global/duration", -1, 3600, "a duration in seconds (-1: until the tasks end)");
            duration_s = d <= 0 ? 3600 : d;
        }
        if (g.contains("default_policy")) {
            const ojson& p = g["default_policy"];
            if (!p.is_string() || (p != "SCHED_OTHER" && p != "SCHED_BATCH" && p != "SCHED_IDLE"))
                r.fail("/global/default_policy", "expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE: wakesim models the fair class");
        }
    }
    ojson tasks = ojson::array();
    for (const auto& [name, t] : doc["tasks"].items()) {
        const std::string at = "/tasks/" + json_pointer_escape(name);
        if (!t.is_object()) r.fail(at, "expected a task: an object of its properties and events");
        if (name.empty() || name.find(' ') != std::string::npos) r.fail(at, "expected a task name without spaces");
        ojson task = ojson::object();
        task["name"] = name;
        if (t.contains("instance")) task["count"] = r.integer(t["instance"], at + "/instance", 1, 100000, "a number of instances");
        if (t.contains("cpus")) {
            const ojson& c = t["cpus"];
            if (!c.is_array() || c.empty()) r.fail(at + "/cpus", "expected a non-empty array of CPU ids such as [0, 1]");
            for (size_t i = 0; i < c.size(); ++i) r.integer(c[i], at + "/cpus/" + std::to_string(i), 0, 1023, "a CPU id");
            task["cpus"] = c;
        }
        if (t.contains("policy")) {
            const ojson& p = t["policy"];
            if (p == "SCHED_BATCH")
                task["policy"] = "batch";
            else if (p == "SCHED_IDLE")
                task["policy"] = "idle";
            else if (p != "SCHED_OTHER")
                r.fail(at + "/policy", "expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE: wakesim models the fair class, not " +
                                           quote_for_message(p.is_string() ? p.get<std::string>() : p.dump()));
        }
        if (t.contains("priority")) task["nice"] = r.integer(t["priority"], at + "/priority", -20, 19, "a nice value");
        const std::vector<std::string> props = {"instance", "cpus", "policy", "priority", "loop", "phases", "delay"};
        if (t.contains("delay")) r.fail(at + "/delay", "expected no \"delay\": wakesim starts every task at once");
        ojson body = ojson::array();
        if (t.contains("phases")) {
            const ojson& ph = t["phases"];
            if (!ph.is_object() || ph.empty()) r.fail(at + "/phases", "expected an object of at least one phase");
            for (const auto& [pname, p] : ph.items()) {
                const std::string pat = at + "/phases/" + json_pointer_escape(pname);
                if (!p.is_object()) r.fail(pat, "expected a phase: an object of events");
                ojson steps = ojson::array();
                r.events(p, pat, {"loop", "cpus", "policy", "priority"}, steps);
                for (const char* k : {"cpus", "policy", "priority"})
                    if (p.contains(k)) r.fail(pat + "/" + k, std::string("expected \"") + k + "\" per task, not per phase");
                if (steps.empty()) r.fail(pat, "expected at least one event (run, sleep, ...)");
                const int64_t n = p.contains("loop") ? r.integer(p["loop"], pat + "/loop", 1, 1000000000, "a loop count") : 1;
                if (n == 1)
                    for (auto& s : steps) body.push_back(s);
                else
                    body.push_back({{"loop", n}, {"do", steps}});
            }
            for (const auto& [key, v] : t.items()) {
                bool prop = false;
                for (const auto& p : props) prop |= key == p;
                if (!prop) r.fail(at + "/" + json_pointer_escape(key), "expected events inside \"phases\" when a task has phases");
            }
        } else {
            r.events(t, at, props, body);
        }
        if (body.empty()) r.fail(at, "expected at least one event (run, sleep, ...)");
        int64_t loops = 1;
        if (t.contains("loop")) {
            loops = r.integer(t["loop"], at + "/loop", -1, 1000000000, "a loop count (-1: until the run's duration)");
            if (loops == 0) r.fail(at + "/loop", "expected -1 or a positive loop count");
        }
        // A program loop must take time: rt-app's events without run or sleep would spin.
        if (loops == -1)
            task["program"] = ojson::array({{{"loop", 1000000000}, {"do", body}}});
        else if (loops > 1)
            task["program"] = ojson::array({{{"loop", loops}, {"do", body}}});
        else
            task["program"] = body;
        tasks.push_back(task);
    }
    // Each mutex's token: one task that posts it at the start and exits.
    for (const auto& m : r.mutexes)
        tasks.push_back({{"name", "init_" + m}, {"program", ojson::array({{{"post", m}}})}});
    ojson channels = ojson::object();
    for (const auto& c : r.channels) channels[c] = ojson::object();
    ojson sc;
    const std::string stem = std::filesystem::path(path).stem().string();
    sc["name"] = stem;
    sc["description"] = "imported from rt-app file " + std::filesystem::path(path).filename().string() +
                        (r.channels.empty() ? std::string()
                                            : "; rt-app's signal/wait became channel post/wait, which keep a signal "
                                              "that no task waits for (a condition variable loses it)");
    sc["machine"] = machine;
    ojson w;
    w["kind"] = "program";
    if (!channels.empty()) w["channels"] = channels;
    w["tasks"] = tasks;
    sc["workload"] = w;
    sc["policies"] = ojson::array({"plain"});
    sc["run"] = {{"duration", std::to_string(duration_s) + "s"}};
    return sc;
}

}  // namespace wakesim
