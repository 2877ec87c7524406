// rt-app to wakesim. rt-app's events run in the order the file lists them, and an event key may
// carry a suffix ("run0", "sleep_long"): rt-app matches an event by the start of its key
// (src/rt-app_parse_config.c, obj_is_event), so the file is read with its key order kept.
// The file is read as rt-app's json-c and its workgen script read it: C comments, trailing commas,
// and a key repeated in one object (workgen renames the second "run" to "run1").
//
// Mapping (rt-app's doc/tutorial.txt names; docs/scenarios.md, "import rtapp", says the same):
//   task "instance": N        -> program task "count": N
//   task "delay": us          -> "delay": the task sleeps until then after the start
//   task "loop": N            -> N rounds of its events; none or -1 loops until the run's duration
//   "phases": {...}           -> each phase in turn, each with its own "loop" (default 1)
//   "run"/"runtime": us       -> {"run": "Nus"}   (0: no step)
//   "sleep": us               -> {"sleep": "Nus"} (0: no step)
//   "timer": {ref, period, mode} -> {"timer": ref, "period": "Nus"} on a declared timer: a ref
//                                starting with "unique" is per instance, any other is shared
//   "signal": q / "wait": q   -> {"post"/"wait": q} on a channel; "wait" with "mutex" releases it
//   "lock"/"unlock": m        -> {"wait"/"post": "mutex_m"}: a channel holding one token, which a
//                                task "init_mutex_m" posts at the start
//   "sem_post"/"sem_wait": s  -> {"post"/"wait": "sem_s"} (a POSIX semaphore is a counting channel)
//   "suspend" / "resume": t   -> {"suspend": true} / {"resume": t} (t a task of one instance)
//   "barrier": b              -> a barrier of as many participants as rt-app counts
//   "cpus", "policy", "priority" per task -> "cpus", SCHED_OTHER/BATCH/IDLE, priority as nice
//   "util_min", "util_max" per task -> "uclamp_min", "uclamp_max" (rt-app's sched_setattr() clamps)
// rt-app's signal and resume are lost when nobody waits (a condition variable); a channel and a
// pending resume keep them. The import says so in the scenario's description.
// Refused with one line each: what wakesim does not model (real-time and deadline policies, task
// groups, per-phase uclamp, NUMA binding, memory and I/O load, yield, fork, broadcast, sync, the old task
// format of exec/lock_order/resources).
#include "experiment/rtapp_import.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "input/json_input.h"

namespace wakesim {

namespace {

using ojson = nlohmann::ordered_json;

constexpr int64_t kMaxUs = int64_t{3600} * 1000000;  // wakesim's longest step, 1 hour
constexpr int64_t kDefaultDurationS = 10;

// json-c (rt-app's parser) takes a comma before '}' or ']'; nlohmann does not. Blank those commas
// (a space keeps the line and column of every later error).
std::string blank_trailing_commas(std::string text) {
    const size_t n = text.size();
    auto skip_blank = [&](size_t i) {
        while (i < n) {
            const char c = text[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++i;
            } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
                while (i < n && text[i] != '\n') ++i;
            } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
                const size_t end = text.find("*/", i + 2);
                i = end == std::string::npos ? n : end + 2;
            } else {
                break;
            }
        }
        return i;
    };
    for (size_t i = 0; i < n;) {
        const char c = text[i];
        if (c == '"') {
            for (++i; i < n && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
            ++i;
        } else if (c == '/' && i + 1 < n && (text[i + 1] == '/' || text[i + 1] == '*')) {
            i = skip_blank(i);
        } else if (c == ',') {
            const size_t next = skip_blank(i + 1);
            if (next < n && (text[next] == '}' || text[next] == ']')) text[i] = ' ';
            ++i;
        } else {
            ++i;
        }
    }
    return text;
}

// Builds the document as workgen leaves it: a key repeated in one object gets the first free
// numeric suffix ("run", "run" -> "run", "run1"), keeping the order of the events.
class LenientSax : public nlohmann::json_sax<ojson> {
public:
    ojson root;
    std::string error;  // the parser's message, set on a parse error
    size_t error_byte = 0;

    bool null() override { return put(nullptr); }
    bool boolean(bool v) override { return put(v); }
    bool number_integer(number_integer_t v) override { return put(v); }
    bool number_unsigned(number_unsigned_t v) override { return put(v); }
    bool number_float(number_float_t v, const string_t&) override { return put(v); }
    bool string(string_t& v) override { return put(v); }
    bool binary(binary_t&) override { return false; }
    bool start_object(std::size_t) override { return open(ojson::object()); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(ojson::array()); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        key_ = k;
        const ojson& top = *stack_.back();
        for (int n = 1; top.contains(key_); ++n) key_ = k + std::to_string(n);
        return true;
    }
    bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
        error = e.what();
        error_byte = byte;
        return false;
    }

private:
    // Containers open now: a child is added only to the innermost, so these pointers stay valid.
    std::vector<ojson*> stack_;
    std::string key_;

    ojson* insert(ojson v) {
        if (stack_.empty()) {
            root = std::move(v);
            return &root;
        }
        ojson& top = *stack_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        return &(top[key_] = std::move(v));
    }
    bool put(ojson v) {
        insert(std::move(v));
        return true;
    }
    bool open(ojson v) {
        if (stack_.size() >= kMaxJsonDepth) {
            error = "nested more than " + std::to_string(kMaxJsonDepth) + " deep";
            return false;
        }
        stack_.push_back(insert(std::move(v)));
        return true;
    }
    bool close() {
        stack_.pop_back();
        return true;
    }
};

ojson parse_rtapp(const std::string& path, const std::string& text) {
    const std::string expected = "expected an rt-app file in JSON (rt-app's format: comments, trailing commas and "
                                 "repeated event keys allowed)";
    LenientSax sax;
    const std::string clean = blank_trailing_commas(text);
    const bool ok = ojson::sax_parse(clean, &sax, nlohmann::detail::input_format_t::json, true, true);
    if (ok) return sax.root;
    std::string why = sax.error;
    if (auto p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);  // "[json.exception...] "
    if (auto p = why.find("parse error at "); p == 0) why = why.substr(15);
    if (why.empty()) why = "malformed JSON";
    throw InputError(path, "", expected + "; " + why);
}

// rt-app's event names, in the order its parser tries them (a key "runtime" is a runtime).
const std::vector<std::string>& event_names() {
    static const std::vector<std::string> k = {"lock",    "unlock", "wait",   "signal", "broad", "sync",
                                               "sleep",   "runtime", "run",   "timer",  "suspend", "resume",
                                               "memrun",  "mem",    "iorun",  "yield",  "barrier", "fork",
                                               "sem_post", "sem_wait"};
    return k;
}

std::string event_kind(const std::string& key) {
    for (const auto& e : event_names())
        if (key.compare(0, e.size(), e) == 0) return e;
    return "";
}

// Task and phase properties rt-app reads (src/rt-app_parse_config.c, parse_task_data and
// parse_task_phase_data), with what wakesim makes of those it cannot model.
const std::vector<std::string> kTaskProps = {"instance", "delay", "loop", "phases", "cpus", "policy", "priority",
                                             "nodes_membind", "taskgroup", "util_min", "util_max", "dl-runtime",
                                             "dl-period", "dl-deadline"};
const std::vector<std::string> kPhaseProps = {"loop", "cpus", "policy", "priority", "nodes_membind", "taskgroup",
                                              "util_min", "util_max", "dl-runtime", "dl-period", "dl-deadline"};
// "global" keys that only steer rt-app's measurement, logging and calibration.
const std::vector<std::string> kIgnoredGlobals = {"calibration", "pi_enabled", "lock_pages", "logdir",
                                                  "log_basename", "log_size", "ftrace", "gnuplot",
                                                  "io_device", "mem_buffer_size", "cumulative_slack"};

bool one_of(const std::string& s, const std::vector<std::string>& list) {
    for (const auto& x : list)
        if (x == s) return true;
    return false;
}

std::string list_text(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

struct TimerUse {
    bool shared = false;
    bool absolute = false;
};

struct Reader {
    std::string file;
    std::vector<std::string> channels;  // in order of first use
    std::vector<std::string> mutexes;   // their channels, each given its one token at the start
    std::map<std::string, int64_t> instances;  // task name -> instances
    std::vector<std::pair<std::string, int64_t>> barriers;  // name -> participants, in order of first use
    std::vector<std::pair<std::string, TimerUse>> timers;   // wakesim name -> kind, in order of first use
    bool lossy_signals = false, lossy_resumes = false;

    [[noreturn]] void fail(const std::string& ptr, const std::string& expected) const { throw InputError(file, ptr, expected); }

    // A value as a message shows it: a number as written, a string quoted and said to be one.
    static std::string shown(const ojson& v) {
        if (v.is_string()) return "string " + quote_for_message(v.get<std::string>());
        if (v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
        return v.is_array() ? "an array" : "an object";
    }

    int64_t integer(const ojson& v, const std::string& ptr, int64_t min, int64_t max, const char* what) const {
        if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max)
            fail(ptr, std::string("expected ") + what + ", an integer in [" + std::to_string(min) + ", " +
                          std::to_string(max) + "], got " + shown(v));
        return v.get<int64_t>();
    }

    std::string name(const ojson& v, const std::string& ptr, const char* what) const {
        if (!v.is_string() || v.get<std::string>().empty()) fail(ptr, std::string("expected the name of ") + what);
        return v.get<std::string>();
    }

    std::string channel(const std::string& name) {
        for (const auto& c : channels)
            if (c == name) return c;
        channels.push_back(name);
        return name;
    }

    // A mutex is a channel holding one token: lock waits for it, unlock posts it back.
    std::string mutex_channel(const std::string& name) {
        const std::string c = channel("mutex_" + name);
        if (!one_of(c, mutexes)) mutexes.push_back(c);
        return c;
    }

    std::string timer(const std::string& task, const ojson& v, const std::string& at, int64_t& period_us) {
        if (!v.is_object()) fail(at, "expected a timer: {\"ref\": NAME, \"period\": MICROSECONDS, \"mode\": \"relative\" or \"absolute\"}");
        for (const auto& [k, x] : v.items())
            if (k != "ref" && k != "period" && k != "mode")
                fail(at + "/" + json_pointer_escape(k), "expected only \"ref\", \"period\" and \"mode\" in a timer");
        if (!v.contains("ref")) fail(at, "expected \"ref\": the timer's name (rt-app shares a timer by name)");
        const std::string ref = name(v["ref"], at + "/ref", "the timer");
        if (!is_plain_name(ref)) fail(at + "/ref", "expected a timer name without spaces or control characters");
        if (!v.contains("period")) fail(at, "expected \"period\": the timer's period in microseconds");
        period_us = integer(v["period"], at + "/period", 0, kMaxUs, "a period in microseconds");
        bool absolute = false;
        if (v.contains("mode")) {
            const ojson& m = v["mode"];
            if (m != "relative" && m != "absolute") fail(at + "/mode", "expected \"relative\" (rt-app's default) or \"absolute\"");
            absolute = m == "absolute";
        }
        // rt-app: a ref starting with "unique" is a timer of each thread; any other is one timer.
        const bool shared = ref.compare(0, 6, "unique") != 0;
        const std::string wname = shared ? ref : ref + "@" + task;  // never collides: starts with "unique"
        for (auto& [n, use] : timers)
            if (n == wname) {
                use.absolute |= absolute;  // rt-app: any event saying absolute makes the timer absolute
                return wname;
            }
        timers.push_back({wname, {shared, absolute}});
        return wname;
    }

    // Appends the events of `obj` (a task or a phase) to `steps`; `props` are its property keys.
    void events(const std::string& task, const ojson& obj, const std::string& ptr, const std::vector<std::string>& props,
                ojson& steps, InputErrorCollector& errors) {
        for (const auto& item : obj.items()) {  // (lambdas capture no structured bindings: clang 14)
            const std::string& key = item.key();
            const ojson& v = item.value();
            if (one_of(key, props)) continue;
            const std::string at = ptr + "/" + json_pointer_escape(key);
            errors.attempt([&] { event(task, key, v, at, steps); });
        }
    }

    void event(const std::string& task, const std::string& key, const ojson& v, const std::string& at, ojson& steps) {
        // rt-app's task format before its events (the fragments of its doc/examples/merge).
        if (key == "exec" || key == "lock_order" || key == "resources")
            fail(at, "expected events (run, sleep, lock, ...): \"" + key + "\" is rt-app's old task format, which it no longer reads");
        // Read by rt-app at task level for SCHED_DEADLINE only (legacy names of dl-period, dl-deadline).
        if (key == "period" || key == "deadline")
            fail(at, "expected no \"" + key + "\": rt-app reads it for SCHED_DEADLINE, which wakesim does not model");
        const std::string kind = event_kind(key);
        if (kind == "run" || kind == "runtime") {
            const int64_t us = integer(v, at, 0, kMaxUs, "a run time in microseconds");
            if (us > 0) steps.push_back({{"run", std::to_string(us) + "us"}});
        } else if (kind == "sleep") {
            const int64_t us = integer(v, at, 0, kMaxUs, "a sleep time in microseconds");
            if (us > 0) steps.push_back({{"sleep", std::to_string(us) + "us"}});
        } else if (kind == "timer") {
            int64_t period = 0;
            const std::string t = timer(task, v, at, period);
            if (period > 0) steps.push_back({{"timer", t}, {"period", std::to_string(period) + "us"}});
        } else if (kind == "signal") {
            lossy_signals = true;
            steps.push_back({{"post", channel(name(v, at, "the condition to signal"))}});
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
            steps.push_back({{kind == "lock" ? "wait" : "post", mutex_channel(name(v, at, "the mutex"))}});
        } else if (kind == "sem_post" || kind == "sem_wait") {
            steps.push_back({{kind == "sem_post" ? "post" : "wait", channel("sem_" + name(v, at, "the semaphore"))}});
        } else if (kind == "suspend") {
            // rt-app suspends the thread on its own name; the value is not read.
            steps.push_back({{"suspend", true}});
        } else if (kind == "resume") {
            const std::string t = name(v, at, "the task to resume");
            auto it = instances.find(t);
            if (it == instances.end())
                fail(at, "expected the name of a task of this file; " + quote_for_message(t) +
                             " is none (rt-app's resume of a name that no task suspends on does nothing: delete it)");
            if (it->second != 1)
                fail(at, "expected a task of one instance: rt-app's resume wakes every suspended instance of " +
                             quote_for_message(t) + ", wakesim's resume one task");
            lossy_resumes = true;
            steps.push_back({{"resume", t}});
        } else if (kind == "barrier") {
            const std::string b = name(v, at, "the barrier");
            // rt-app counts each reference times its task's instances (parse_task_event_data).
            const int64_t n = instances.at(task);
            bool found = false;
            for (auto& [bn, size] : barriers)
                if (bn == b) {
                    size += n;
                    found = true;
                }
            if (!found) barriers.push_back({b, n});
            steps.push_back({{"barrier", b}});
        } else if (kind == "sync") {
            fail(at, "expected no \"sync\": it signals and then waits on one condition, and wakesim's channels keep a "
                     "signal nobody waits for, so the task would take its own; write the partner's wait and signal "
                     "as \"signal\" and \"wait\" events");
        } else if (kind == "broad") {
            fail(at, "expected no \"broad\": a broadcast wakes every waiter and wakesim's channels wake one");
        } else if (kind == "mem" || kind == "memrun" || kind == "iorun") {
            fail(at, "expected no \"" + kind + "\": wakesim models no memory or I/O load; write it as \"run\" time");
        } else if (kind == "yield") {
            fail(at, "expected no \"yield\": wakesim's programs have no sched_yield step");
        } else if (kind == "fork") {
            fail(at, "expected no \"fork\": wakesim starts every task at once (\"delay\" starts one later)");
        } else {
            fail(at, "expected an rt-app event (" + list_text(event_names()) + ") or property (" + list_text(kTaskProps) +
                         "); " + quote_for_message(key) + " is neither");
        }
    }

    // Properties wakesim cannot model, at task or phase level.
    void unmodelled(const ojson& obj, const std::string& at, InputErrorCollector& errors) const {
        auto refuse = [&](const char* key, const std::string& why) {
            if (obj.contains(key)) errors.attempt([&] { fail(at + "/" + key, std::string("expected no \"") + key + "\": " + why); });
        };
        refuse("nodes_membind", "wakesim models no NUMA memory binding");
        for (const char* dl : {"dl-runtime", "dl-period", "dl-deadline"})
            refuse(dl, "wakesim models the fair class without custom slices, and no SCHED_DEADLINE");
    }

    // rt-app's "taskgroup": the cpu-controller cgroup the task runs in ("/" or "": the root). One
    // level below the root becomes a scenario group with fair_group; "" when the root.
    std::string taskgroup(const ojson& g, const std::string& at) const {
        if (!g.is_string()) fail(at, "expected a cgroup path such as \"/tg1\" (\"/\": the root)");
        std::string path = g.get<std::string>();
        if (path.empty() || path == "/") return "";
        if (path.front() == '/') path.erase(0, 1);
        if (path.empty() || path.find('/') != std::string::npos || path.find(' ') != std::string::npos)
            fail(at, "expected a task group one level below the root, such as \"/tg1\": wakesim's task groups do not "
                     "nest, and their names have no spaces");
        return path;
    }

};

}  // namespace

ojson import_rtapp(const std::string& path, const std::string& machine) {
    const ojson doc = parse_rtapp(path, read_text_file(path, kMaxJsonFileBytes, "an rt-app file"));
    Reader r{path, {}, {}, {}, {}, {}, false, false};
    if (!doc.is_object() || !doc.contains("tasks") || !doc["tasks"].is_object() || doc["tasks"].empty())
        r.fail(doc.is_object() && doc.contains("tasks") ? "/tasks" : "",
               "expected an rt-app file: an object with \"tasks\", an object of at least one task");
    InputErrorCollector errors;  // every mistake of the file, each on its own line
    for (const auto& item : doc.items())
        if (const std::string& key = item.key(); key != "tasks" && key != "global" && key != "resources")
            errors.attempt([&] { r.fail("/" + json_pointer_escape(key), "expected only \"tasks\", \"global\" and \"resources\" at the top"); });
    int64_t duration_s = kDefaultDurationS;
    std::string default_policy;
    if (doc.contains("global")) errors.attempt([&] {
        const ojson& g = doc["global"];
        if (!g.is_object()) r.fail("/global", "expected an object");
        for (const auto& item : g.items()) {
            const std::string& key = item.key();
            if (key == "duration" || key == "default_policy" || one_of(key, kIgnoredGlobals)) continue;
            errors.attempt([&] {
                r.fail("/global/" + json_pointer_escape(key),
                       "expected a key of rt-app's global object (duration, default_policy, " + list_text(kIgnoredGlobals) +
                           "); " + quote_for_message(key) + " is none");
            });
        }
        if (g.contains("duration")) errors.attempt([&] {
            const int64_t d = r.integer(g["duration"], "/global/duration", -1, 3600, "a duration in seconds (-1: until the tasks end)");
            duration_s = d <= 0 ? 3600 : d;
        });
        if (g.contains("default_policy")) errors.attempt([&] {
            const ojson& p = g["default_policy"];
            if (!p.is_string() || (p != "SCHED_OTHER" && p != "SCHED_BATCH" && p != "SCHED_IDLE"))
                r.fail("/global/default_policy", "expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE: wakesim models the fair class");
            default_policy = p.get<std::string>();
        });
    });
    // First pass: the tasks and their instances (a resume names a task defined later). A task
    // whose instance count is refused stands as one instance, so that its events and the other
    // tasks' are read in the same pass; one that is no object, or badly named, is skipped.
    std::set<std::string> unread;
    for (const auto& item : doc["tasks"].items()) {
        const std::string& name = item.key();
        const ojson& t = item.value();
        const std::string at = "/tasks/" + json_pointer_escape(name);
        r.instances[name] = 1;
        if (!errors.attempt([&] {
                if (!t.is_object()) r.fail(at, "expected a task: an object of its properties and events");
                if (!is_plain_name(name)) r.fail(at, "expected a task name without spaces or control characters");
            })) {
            unread.insert(name);
            continue;
        }
        errors.attempt([&] {
            if (!t.contains("instance")) return;
            const int64_t n = r.integer(t["instance"], at + "/instance", 0, 100000, "a number of instances");
            if (n == 0) r.fail(at + "/instance", "expected 1 or more: rt-app's instance 0 creates a task only for \"fork\", which wakesim does not model");
            r.instances[name] = n;
        });
    }
    ojson tasks = ojson::array();
    ojson groups = ojson::object();  // rt-app's task groups, each a fair task group
    for (const auto& item : doc["tasks"].items()) {
        const std::string& name = item.key();
        if (unread.count(name)) continue;
        const ojson& t = item.value();
        const std::string at = "/tasks/" + json_pointer_escape(name);
        ojson task = ojson::object();
        task["name"] = name;
        errors.attempt([&] {
            if (r.instances.at(name) > 1) task["count"] = r.instances.at(name);
            if (t.contains("cpus")) {
                const ojson& c = t["cpus"];
                if (!c.is_array() || c.empty()) r.fail(at + "/cpus", "expected a non-empty array of CPU ids such as [0, 1]");
                for (size_t i = 0; i < c.size(); ++i) r.integer(c[i], at + "/cpus/" + std::to_string(i), 0, 1023, "a CPU id");
                task["cpus"] = c;
            }
        });
        errors.attempt([&] {
            const std::string pol = t.contains("policy") ? (t["policy"].is_string() ? t["policy"].get<std::string>() : t["policy"].dump())
                                                         : default_policy;
            if (pol == "SCHED_BATCH")
                task["policy"] = "batch";
            else if (pol == "SCHED_IDLE")
                task["policy"] = "idle";
            else if (!pol.empty() && pol != "SCHED_OTHER")
                r.fail(at + "/policy", "expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE: wakesim models the fair class, not " +
                                           quote_for_message(pol));
        });
        errors.attempt([&] {
            if (t.contains("priority")) task["nice"] = r.integer(t["priority"], at + "/priority", -20, 19, "a nice value");
        });
        errors.attempt([&] {
            // rt-app sets them with sched_setattr(SCHED_FLAG_UTIL_CLAMP_MIN/MAX), which refuses min > max.
            int64_t lo = 0, hi = 1024;
            if (t.contains("util_min")) task["uclamp_min"] = lo = r.integer(t["util_min"], at + "/util_min", 0, 1024, "a clamp 0..1024");
            if (t.contains("util_max")) task["uclamp_max"] = hi = r.integer(t["util_max"], at + "/util_max", 0, 1024, "a clamp 0..1024");
            if (lo > hi) r.fail(at + "/util_max", "expected util_max at least util_min: sched_setattr() refuses it");
        });
        errors.attempt([&] {
            if (t.contains("delay")) {
                const int64_t us = r.integer(t["delay"], at + "/delay", 0, kMaxUs, "a start delay in microseconds");
                if (us > 0) task["delay"] = std::to_string(us) + "us";
            }
        });
        r.unmodelled(t, at, errors);
        std::string group;  // the task's task group ("": the root)
        errors.attempt([&] {
            if (t.contains("taskgroup")) group = r.taskgroup(t["taskgroup"], at + "/taskgroup");
            if (!group.empty()) {
                task["group"] = group;
                groups[group] = {{"fair_group", true}};
            }
        });
        ojson body = ojson::array();
        const size_t errors_before_events = errors.count();
        bool forever = !t.contains("loop");  // rt-app: a task without "loop" loops until the duration
        if (t.contains("phases")) {
            const ojson& ph = t["phases"];
            if (!ph.is_object() || ph.empty()) {
                errors.attempt([&] { r.fail(at + "/phases", "expected an object of at least one phase"); });
                continue;
            }
            for (const auto& prop : t.items())
                if (const std::string& key = prop.key(); !one_of(key, kTaskProps))
                    errors.attempt([&] {
                        r.fail(at + "/" + json_pointer_escape(key), "expected events inside \"phases\" when a task has phases");
                    });
            for (const auto& phase : ph.items()) {
                const std::string& pname = phase.key();
                const ojson& p = phase.value();
                const std::string pat = at + "/phases/" + json_pointer_escape(pname);
                if (!p.is_object()) {
                    errors.attempt([&] { r.fail(pat, "expected a phase: an object of events"); });
                    continue;
                }
                for (const char* k : {"cpus", "policy", "priority", "util_min", "util_max"})
                    if (p.contains(k))
                        errors.attempt([&] {
                            r.fail(pat + "/" + k, std::string("expected \"") + k +
                                                      "\" per task: wakesim's programs have no step that changes it");
                        });
                r.unmodelled(p, pat, errors);
                if (p.contains("taskgroup"))
                    errors.attempt([&] {
                        if (r.taskgroup(p["taskgroup"], pat + "/taskgroup") != group)
                            r.fail(pat + "/taskgroup", "expected the task's own task group: wakesim's programs have no "
                                                       "step that moves a task to another group");
                    });
                ojson steps = ojson::array();
                r.events(name, p, pat, kPhaseProps, steps, errors);
                int64_t n = 1;
                errors.attempt([&] {
                    if (p.contains("loop")) {
                        n = r.integer(p["loop"], pat + "/loop", -1, 1000000000, "a loop count (-1: forever)");
                        if (n == 0) r.fail(pat + "/loop", "expected -1 or a positive loop count");
                    }
                });
                if (steps.empty()) continue;  // only zero-length events: nothing to do
                if (n == 1)
                    for (auto& s : steps) body.push_back(s);
                else
                    body.push_back({{"loop", n < 0 ? 0 : n}, {"do", steps}});
            }
        } else {
            r.events(name, t, at, kTaskProps, body, errors);
        }
        errors.attempt([&] {
            if (t.contains("loop")) {
                const int64_t loops = r.integer(t["loop"], at + "/loop", -1, 1000000000, "a loop count (-1: until the run's duration)");
                if (loops == 0) r.fail(at + "/loop", "expected -1 or a positive loop count");
                forever = loops == -1;
                if (!forever && loops > 1) body = ojson::array({{{"loop", loops}, {"do", body}}});
            }
        });
        if (body.empty()) {
            // Unless an event was refused: then it may be the one that took time.
            if (errors.count() == errors_before_events)
                errors.attempt([&] { r.fail(at, "expected at least one event that takes time (run, sleep, timer, ...)"); });
            continue;
        }
        // A program loop must take time; rt-app's loop of only signals would spin, wakesim's reader says so.
        task["program"] = forever ? ojson::array({{{"loop", 0}, {"do", body}}}) : body;
        tasks.push_back(task);
    }
    errors.finish();
    // Each mutex's token: one task that posts it at the start and exits.
    for (const auto& m : r.mutexes) tasks.push_back({{"name", "init_" + m}, {"program", ojson::array({{{"post", m}}})}});
    ojson sc;
    const std::string stem = std::filesystem::path(path).stem().string();
    sc["name"] = stem;
    std::string desc = "imported from rt-app file " + std::filesystem::path(path).filename().string();
    if (r.lossy_signals)
        desc += "; rt-app's signal/wait became channel post/wait, which keep a signal that no task waits for (a "
                "condition variable loses it)";
    if (r.lossy_resumes)
        desc += "; a resume of a task that is not suspended is kept for its next suspend (rt-app loses it)";
    sc["description"] = desc;
    sc["machine"] = machine;
    if (!groups.empty()) sc["groups"] = groups;
    ojson w;
    w["kind"] = "program";
    if (!r.channels.empty()) {
        ojson channels = ojson::object();
        for (const auto& c : r.channels) channels[c] = ojson::object();
        w["channels"] = channels;
    }
    if (!r.barriers.empty()) {
        ojson b = ojson::object();
        for (const auto& [n, size] : r.barriers) b[n] = size;
        w["barriers"] = b;
    }
    if (!r.timers.empty()) {
        ojson tm = ojson::object();
        for (const auto& [n, use] : r.timers) {
            ojson d = ojson::object();
            if (use.absolute) d["mode"] = "absolute";
            if (use.shared) d["shared"] = true;
            tm[n] = d;
        }
        w["timers"] = tm;
    }
    w["tasks"] = tasks;
    sc["workload"] = w;
    sc["policies"] = ojson::array({"plain"});
    sc["run"] = {{"duration", std::to_string(duration_s) + "s"}};
    return sc;
}

}  // namespace wakesim
