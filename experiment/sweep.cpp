#include "experiment/sweep.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "experiment/runner.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "metrics/metric_format.h"

namespace wakesim {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// FNV-1a, 64 bits: stable across compilers and runs, unlike std::hash.
std::string fnv1a_hex(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

struct Axis {
    std::vector<std::string> pointers;
    std::vector<std::string> where;  // the sweep file's pointer of each pointer (for messages)
    std::vector<std::vector<json>> values;  // per pointer
    std::vector<std::string> values_where;
    size_t size() const { return values.front().size(); }
};

// A JSON pointer the base scenario has, or whose parent object it has (a field left at its default).
bool pointer_fits(const json& doc, const std::string& ptr, bool& exists) {
    exists = false;
    json::json_pointer p;
    try {
        p = json::json_pointer(ptr);
    } catch (const json::exception&) {
        return false;
    }
    if (ptr.empty()) return false;
    if (doc.contains(p)) {
        exists = true;
        return true;
    }
    const json::json_pointer parent = p.parent_pointer();
    return doc.contains(parent) && doc.at(parent).is_object();
}

// A repeated value of a plain axis is reported to `errors` and left out, so that the axis's other
// values are still checked in the same pass. A zip's entries may repeat values (their tuples are
// checked instead).
void read_axis_entry(const JsonNode& n, const json& base, Axis& axis, InputErrorCollector& errors, bool in_zip) {
    n.require_object();
    n.check_keys({"pointer", "values"});
    const JsonNode pn = n.at("pointer");
    const std::string ptr = pn.as_string();
    bool exists = false;
    if (!pointer_fits(base, ptr, exists))
        pn.fail("expected a JSON pointer to a field of the base scenario (such as \"/workload/loops\"), got " +
                quote_for_message(ptr));
    const JsonNode vn = n.at("values");
    vn.require_array();
    if (vn.size() == 0) vn.fail("expected at least one value");
    std::vector<json> vals;
    for (size_t i = 0; i < vn.size(); ++i) {
        const auto same = in_zip ? vals.end() : std::find(vals.begin(), vals.end(), vn[i].raw());
        if (same != vals.end()) {
            errors.attempt([&] {
                vn[i].fail("expected each value once; " + vn[i].raw().dump() + " is value " +
                           std::to_string(same - vals.begin()) + " too");
            });
            continue;
        }
        vals.push_back(vn[i].raw());
    }
    axis.pointers.push_back(ptr);
    axis.where.push_back(pn.pointer());
    axis.values.push_back(std::move(vals));
    axis.values_where.push_back(vn.pointer());
}

// Each point's scenario document: the base with the axes' values set.
json with_values(const json& base, const std::vector<std::pair<std::string, json>>& set) {
    json doc = base;
    for (const auto& [ptr, v] : set) doc[json::json_pointer(ptr)] = v;
    return doc;
}

// A mistake of the base scenario, named where the user wrote it: a value the sweep file itself
// gave (its policies or seeds, an inline scenario) under the sweep file's pointer.
InputError base_error(const InputError& e, const JsonNode& root, const JsonNode& sn, const std::string& path,
                      const std::string& base_file) {
    const std::string& ptr = e.pointer();
    auto under = [&](const std::string& prefix) { return ptr == prefix || ptr.rfind(prefix + "/", 0) == 0; };
    if (root.has("policies") && under("/policies")) return InputError(path, ptr, e.expected());
    if (root.has("seeds") && under("/run/seeds")) return InputError(path, "/seeds" + ptr.substr(10), e.expected());
    if (sn.is_string() || e.file() != base_file) return e;
    return InputError(path, "/scenario" + ptr, e.expected());
}

}  // namespace

Sweep load_sweep(const std::string& path) {
    const json doc = load_json_file(path);
    const JsonNode root(doc, path);
    root.require_object();
    // Every mistake of the file in one pass: the keys, the base scenario and each axis apart (an
    // axis's pointer is checked against the base, so only when the base was read).
    InputErrorCollector errors;
    errors.attempt([&] { root.check_keys({"name", "description", "scenario", "policies", "seeds", "axes"}); });
    Sweep sw;
    sw.file = path;
    errors.attempt([&] { sw.name = root.string_or("name", fs::path(path).stem().string()); });
    errors.attempt([&] { sw.description = root.string_or("description", ""); });
    json base;
    std::string base_file;
    const bool base_ok = errors.attempt([&] {
        // The base scenario: a file (relative to the sweep file's folder) or inline.
        const JsonNode sn = root.at("scenario");
        if (sn.is_string()) {
            const fs::path p = sn.as_file_name();
            base_file = (p.is_absolute() ? p : fs::path(path).parent_path() / p).lexically_normal().string();
            if (!fs::is_regular_file(base_file)) sn.fail("expected a scenario file, got " + quote_for_message(sn.as_string()));
            base = load_json_file(base_file);
        } else if (sn.is_object()) {
            base = sn.raw();
            base_file = path;  // relative paths inside resolve from the sweep file's folder
        } else {
            sn.fail("expected a scenario file name or an inline scenario object");
        }
        InputErrorCollector own;  // the sweep's policies and seeds, each checked on its own
        own.attempt([&] {
            if (auto pn = root.get("policies")) {
                pn->require_array();
                if (pn->size() == 0) pn->fail("expected at least one policy");
                base["policies"] = pn->raw();
            }
        });
        own.attempt([&] {
            if (auto seeds = root.get("seeds")) {
                seeds->require_array();
                if (seeds->size() == 0) seeds->fail("expected at least one seed");
                if (!base.contains("run") || !base["run"].is_object()) base["run"] = json::object();
                base["run"]["seeds"] = seeds->raw();
            }
        });
        own.finish();
        // The base must be a valid scenario on its own.
        try {
            (void)parse_scenario(base, base_file);
        } catch (const InputErrors& all) {
            InputErrorCollector mapped;
            for (const InputError& e : all.all()) mapped.add(base_error(e, root, sn, path, base_file));
            mapped.finish();
        } catch (const InputError& e) {
            throw base_error(e, root, sn, path, base_file);
        }
    });
    // Axes.
    std::vector<Axis> axes;
    if (base_ok)
        errors.attempt([&] {
            if (auto an = root.get("axes")) {
                an->require_array();
                InputErrorCollector each;
                for (size_t i = 0; i < an->size(); ++i) {
                    each.attempt([&] {
                        const JsonNode a = (*an)[i];
                        a.require_object();
                        Axis axis;
                        if (a.has("zip")) {
                            a.check_keys({"zip"});
                            const JsonNode z = a.at("zip");
                            z.require_array();
                            if (z.size() < 1) z.fail("expected at least one {\"pointer\", \"values\"} entry");
                            for (size_t k = 0; k < z.size(); ++k) {
                                read_axis_entry(z[k], base, axis, each, true);
                                if (axis.values.back().size() != axis.values.front().size())
                                    z[k].at("values").fail("expected as many values as the zip's first entry (" +
                                                           std::to_string(axis.values.front().size()) + "), got " +
                                                           std::to_string(axis.values.back().size()));
                            }
                            // Its points are the tuples: each once.
                            for (size_t p = 0; p < axis.size(); ++p)
                                for (size_t q = 0; q < p; ++q) {
                                    bool same = true;
                                    for (const auto& v : axis.values) same = same && v[p] == v[q];
                                    if (same)
                                        z.fail("expected each combination of the zip's values once; values " + std::to_string(q) +
                                               " and " + std::to_string(p) + " of every entry are the same");
                                }
                        } else {
                            read_axis_entry(a, base, axis, each, false);
                        }
                        axes.push_back(std::move(axis));
                    });
                }
                each.finish();
            }
        });
    // The axes that were read go on to these checks in the same pass (an axis with a mistake of
    // its own is left out). A pointer on two axes (or twice in a zip) would be set twice: the
    // first value lost.
    for (size_t i = 0; i < axes.size(); ++i)
        for (size_t k = 0; k < axes[i].pointers.size(); ++k)
            for (size_t j = 0; j <= i; ++j)
                for (size_t l = 0; l < (j == i ? k : axes[j].pointers.size()); ++l)
                    if (axes[j].pointers[l] == axes[i].pointers[k])
                        errors.add(InputError(path, axes[i].where[k],
                                              "expected each pointer on one axis only; " + axes[i].pointers[k] +
                                                  " is set at " + axes[j].where[l] + " too"));
    // Every value alone on the base: a value of the wrong type is named where the sweep file has it.
    for (const Axis& axis : axes)
        for (size_t k = 0; k < axis.pointers.size(); ++k)
            for (size_t v = 0; v < axis.values[k].size(); ++v) {
                try {
                    (void)parse_scenario(with_values(base, {{axis.pointers[k], axis.values[k][v]}}), base_file);
                } catch (const InputError& e) {
                    errors.add(InputError(path, axis.values_where[k] + "/" + std::to_string(v),
                                          "expected a value that " + axis.pointers[k] +
                                              " accepts; the scenario says: " + e.pointer() + ": " + e.expected()));
                }
            }
    errors.finish();
    // The cartesian product of the axes, the last axis moving fastest.
    std::vector<size_t> at(axes.size(), 0);
    for (bool more = true; more;) {
        std::vector<std::pair<std::string, json>> set;
        SweepPoint pt;
        for (size_t i = 0; i < axes.size(); ++i)
            for (size_t k = 0; k < axes[i].pointers.size(); ++k) {
                set.emplace_back(axes[i].pointers[k], axes[i].values[k][at[i]]);
                pt.axes[axes[i].pointers[k]] = axes[i].values[k][at[i]];
            }
        try {
            pt.doc = with_values(base, set);
            const Scenario sc = parse_scenario(pt.doc, base_file);
            for (const CaseSpec& c : sc.cases) pt.case_names.push_back(c.name);
            for (const Policy& q : sc.policies) pt.policy_names.push_back(q.name);
            for (size_t c = 0; c < sc.cases.size(); ++c)
                for (size_t q = 0; q < sc.policies.size(); ++q)
                    for (uint64_t seed : sc.seeds) sw.runs.push_back({sw.points.size(), c, q, seed});
        } catch (const InputError& e) {
            throw InputError(path, "/axes", "expected every combination of the axes' values to be a valid scenario; at " +
                                                pt.axes.dump() + ": " + e.pointer() + ": " + e.expected());
        }
        sw.points.push_back(std::move(pt));
        more = false;
        for (size_t i = axes.size(); i-- > 0;) {
            if (++at[i] < axes[i].size()) {
                more = true;
                break;
            }
            at[i] = 0;
        }
    }
    sw.base_file = base_file;
    sw.id = fnv1a_hex(doc.dump() + "\n" + base.dump());
    return sw;
}

Scenario Sweep::scenario(size_t p) const { return parse_scenario(points.at(p).doc, base_file); }

std::string sweep_line(const Sweep& sw, size_t index, const RunResult& r) {
    const SweepRunRef& ref = sw.runs[index];
    const SweepPoint& pt = sw.points[ref.point];
    json j;
    j["sweep"] = sw.name;
    j["sweep_id"] = sw.id;
    j["run"] = index;
    j["runs"] = sw.runs.size();
    j["point"] = ref.point;
    j["axes"] = pt.axes;
    j["case"] = pt.case_names[ref.case_index];
    j["policy"] = pt.policy_names[ref.policy_index];
    j["seed"] = ref.seed;
    j["completed"] = r.completed;
    if (r.stuck) {
        j["stuck"] = true;
        j["blocked"] = r.blocked;
    }
    j["metrics"] = metrics_json(r.metrics);
    return j.dump();
}

namespace {

struct OutputLine {
    size_t run = 0;
    size_t runs = 0;  // the sweep's run count, 0 where a line lacks it
    std::string text;
};

// The complete lines of a sweep output. A last line without its newline (a write cut short) is
// dropped when `drop_partial`, else an error; `kept_bytes` is the length of the complete lines.
std::vector<OutputLine> read_output(const std::string& file, const std::string& want_id, bool drop_partial,
                                    size_t& kept_bytes, std::string* id_seen) {
    if (fs::is_directory(file)) throw InputError(file, "", "expected a sweep output file, not a directory");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(file, "", "cannot open the sweep output for reading");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string all = ss.str();
    std::vector<OutputLine> out;
    size_t pos = 0, line_no = 0;
    kept_bytes = 0;
    while (pos < all.size()) {
        const size_t nl = all.find('\n', pos);
        ++line_no;
        if (nl == std::string::npos) {
            if (drop_partial) break;
            throw InputError(file, "", "line " + std::to_string(line_no) +
                                           " is cut short (no newline): resume that sweep with --resume first");
        }
        const std::string text = all.substr(pos, nl - pos);
        json j;
        try {
            j = json::parse(text);
        } catch (const json::exception&) {
            throw InputError(file, "", "expected JSON lines of a sweep; line " + std::to_string(line_no) + " is not JSON");
        }
        if (!j.is_object() || !j.contains("sweep_id") || !j["sweep_id"].is_string() || !j.contains("run") ||
            !j["run"].is_number_unsigned())
            throw InputError(file, "", "expected JSON lines of a sweep; line " + std::to_string(line_no) +
                                           " has no \"sweep_id\" and \"run\"");
        const std::string id = j["sweep_id"].get<std::string>();
        const std::string& want = !want_id.empty() ? want_id : (id_seen && !id_seen->empty() ? *id_seen : id);
        if (id != want)
            throw InputError(file, "", "line " + std::to_string(line_no) + " is a run of another sweep (sweep_id " + id +
                                           ", expected " + want + ")");
        if (id_seen && id_seen->empty()) *id_seen = id;
        const size_t runs = j.contains("runs") && j["runs"].is_number_unsigned() ? j["runs"].get<size_t>() : 0;
        out.push_back({j["run"].get<size_t>(), runs, text});
        pos = nl + 1;
        kept_bytes = pos;
    }
    return out;
}

}  // namespace

SweepTally run_sweep(const Sweep& sw, const SweepOptions& opt,
                     const std::function<void(size_t done, size_t total)>& progress) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < sw.runs.size(); ++i)
        if (i % opt.shard_n == opt.shard_k - 1) mine.push_back(i);
    SweepTally tally;
    tally.total = mine.size();
    std::set<size_t> done;
    size_t kept_bytes = 0;
    const bool exists = fs::exists(opt.out);
    if (opt.resume && exists) {
        std::string id = sw.id;
        if (fs::is_directory(opt.out)) throw InputError(opt.out, "", "expected a file to resume, not a directory");
        const auto lines = read_output(opt.out, sw.id, true, kept_bytes, nullptr);
        // Only a line of this sweep proves the file is its output: a file without one (a user's
        // note, a scenario written without a final newline) is not cut to make room.
        if (lines.empty() && fs::file_size(opt.out) > 0)
            throw InputError(opt.out, "", "expected an output of this sweep to resume; it holds no complete run line "
                                          "(pass --force to overwrite it)");
        // Runs are written in order: an interrupted run of this shard leaves its first runs, and
        // only then is the resumed file the one an uninterrupted run writes.
        for (size_t i = 0; i < lines.size(); ++i) {
            const size_t run = lines[i].run;
            if (run >= sw.runs.size())
                throw InputError(opt.out, "", "holds run " + std::to_string(run) + " but the sweep has " +
                                                  std::to_string(sw.runs.size()) + " runs");
            if (i >= mine.size() || run != mine[i])
                throw InputError(opt.out, "", "line " + std::to_string(i + 1) + " holds run " + std::to_string(run) +
                                                  " where an interrupted run of shard " + std::to_string(opt.shard_k) +
                                                  "/" + std::to_string(opt.shard_n) + " has " +
                                                  (i < mine.size() ? "run " + std::to_string(mine[i]) : std::string("no more")) +
                                                  ": resume it with the --shard it was started with");
            done.insert(run);
        }
        fs::resize_file(opt.out, kept_bytes);  // drop a line a kill cut short
    } else if (exists && fs::is_directory(opt.out)) {
        throw InputError(opt.out, "", "expected a file for the sweep output, not a directory");
    } else if (exists && !opt.force) {
        throw InputError(opt.out, "", "expected a file that does not exist yet; pass --resume to continue it or --force to overwrite it");
    }
    std::vector<size_t> todo;
    for (size_t i : mine)
        if (!done.count(i)) todo.push_back(i);
    tally.kept = mine.size() - todo.size();
    std::FILE* f = std::fopen(opt.out.c_str(), opt.resume && exists ? "ab" : "wb");
    if (!f) throw InputError(opt.out, "", "cannot open the sweep output for writing");

    std::vector<std::optional<std::string>> lines(todo.size());
    std::mutex mu;
    size_t next_write = 0;
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    bool write_failed = false;
    auto worker = [&] {
        std::optional<Scenario> sc_of;  // the point of this thread's last run: runs come point by point
        size_t sc_point = 0;
        for (size_t i = next++; i < todo.size() && !failed; i = next++) {
            try {
                const SweepRunRef& ref = sw.runs[todo[i]];
                if (!sc_of || sc_point != ref.point) {
                    sc_of.reset();
                    sc_of.emplace(sw.scenario(ref.point));
                    sc_point = ref.point;
                }
                const Scenario& sc = *sc_of;
                const CaseSpec& c = sc.cases[ref.case_index];
                const Policy& p = sc.policies[ref.policy_index];
                const RunSpec spec = make_run_spec(sc, c, p, ref.seed);
                const RunResult r = run_case(sc, c, p, spec);
                std::string line = sweep_line(sw, todo[i], r) + "\n";
                std::lock_guard<std::mutex> lock(mu);
                lines[i] = std::move(line);
                // In run order: the file is the same for any number of threads.
                while (next_write < todo.size() && lines[next_write]) {
                    const std::string& l = *lines[next_write];
                    if (std::fwrite(l.data(), 1, l.size(), f) != l.size() || std::fflush(f) != 0) write_failed = true;
                    lines[next_write].reset();
                    ++next_write;
                    ++tally.ran;
                    if (progress) progress(tally.kept + tally.ran, tally.total);
                }
                if (write_failed) throw InputError(opt.out, "", "cannot write the sweep output");
            } catch (...) {
                if (!failed.exchange(true)) failure = std::current_exception();
            }
        }
    };
    const int n = std::max(1, std::min<int>(opt.jobs, static_cast<int>(todo.size())));
    if (n == 1) {
        worker();
    } else {
        std::vector<std::thread> pool;
        for (int t = 0; t < n; ++t) pool.emplace_back(worker);
        for (auto& t : pool) t.join();
    }
    close_written(f, opt.out, "the sweep output");
    if (failure) std::rethrow_exception(failure);
    return tally;
}

SweepLines read_sweep_outputs(const std::vector<std::string>& files) {
    std::string id;
    SweepLines out;
    std::map<size_t, std::string> from;
    for (const auto& file : files) {
        size_t kept = 0;
        for (auto& l : read_output(file, "", false, kept, &id)) {
            if (out.by_run.count(l.run))
                throw InputError(file, "", "holds run " + std::to_string(l.run) + ", which " + from[l.run] +
                                               " holds too: expected each run in one file only");
            from[l.run] = file;
            out.runs = std::max(out.runs, l.runs);
            out.by_run[l.run] = std::move(l.text);
        }
    }
    return out;
}

std::string merge_sweep_outputs(const std::vector<std::string>& files, size_t* missing) {
    const SweepLines lines = read_sweep_outputs(files);
    if (missing) *missing = lines.runs > lines.by_run.size() ? lines.runs - lines.by_run.size() : 0;
    std::string out;
    for (const auto& [run, text] : lines.by_run) out += text + "\n";
    return out;
}

void parse_shard(const std::string& text, size_t& k, size_t& n) {
    const auto slash = text.find('/');
    auto digits = [](const std::string& s) { return !s.empty() && s.size() < 7 && s.find_first_not_of("0123456789") == std::string::npos; };
    if (slash == std::string::npos || !digits(text.substr(0, slash)) || !digits(text.substr(slash + 1)))
        throw InputError("--shard", "", "expected K/N with 1 <= K <= N, such as 2/3, got " + quote_for_message(text));
    k = std::stoul(text.substr(0, slash));
    n = std::stoul(text.substr(slash + 1));
    if (k < 1 || n < 1 || k > n)
        throw InputError("--shard", "", "expected K/N with 1 <= K <= N, such as 2/3, got " + quote_for_message(text));
}

}  // namespace wakesim
