#include "input/params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace wakesim {

namespace {

bool bounded(const ParamSpec& s) { return s.min != 0 || s.max != 0; }

int64_t lo(const ParamSpec& s) {
    return bounded(s) ? static_cast<int64_t>(s.min) : std::numeric_limits<int64_t>::min();
}
int64_t hi(const ParamSpec& s) {
    return bounded(s) ? static_cast<int64_t>(s.max) : std::numeric_limits<int64_t>::max();
}

std::string number_text(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    std::string t = std::to_string(v);
    while (!t.empty() && t.back() == '0') t.pop_back();
    return t;
}

// "4KiB", "1GiB", "100B": the largest binary unit that divides the size.
std::string size_text(int64_t bytes) {
    for (auto [shift, name] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}}) {
        const int64_t unit = int64_t{1} << shift;
        if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + name;
    }
    return std::to_string(bytes) + "B";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

// Reads one value of `spec` from `n` (the user's JSON or the declared default, parsed as JSON).
ParamValues::Value read_value(const JsonNode& n, const ParamSpec& spec, std::string& written) {
    switch (spec.type) {
        case ParamType::integer: {
            const int64_t v = n.as_int(bounded(spec) ? lo(spec) : std::numeric_limits<int64_t>::min(), hi(spec));
            written = std::to_string(v);
            return v;
        }
        case ParamType::real: {
            const double v = n.as_double(bounded(spec) ? spec.min : -std::numeric_limits<double>::max(),
                                         bounded(spec) ? spec.max : std::numeric_limits<double>::max());
            written = number_text(v);
            return v;
        }
        case ParamType::boolean: {
            const bool v = n.as_bool();
            written = v ? "true" : "false";
            return v;
        }
        case ParamType::duration: {
            const int64_t v = n.as_duration_ns(bounded(spec) ? lo(spec) : 0, hi(spec));
            written = n.as_string();
            return v;
        }
        case ParamType::frequency: {
            const int64_t v = n.as_frequency_khz(bounded(spec) ? lo(spec) : 0, hi(spec));
            written = n.as_string();
            return v;
        }
        case ParamType::size: {
            const int64_t v = n.as_size_bytes(bounded(spec) ? lo(spec) : 0, hi(spec));
            written = n.is_string() ? n.as_string() : std::to_string(v);
            return v;
        }
        case ParamType::choice: {
            std::string v = n.as_enum(spec.choices);
            written = v;
            return v;
        }
        case ParamType::text: {
            std::string v = n.as_string();
            if (v.empty()) n.fail("expected a non-empty string");
            written = v;
            return v;
        }
        case ParamType::cpulist: {
            // A string ("0-3,8", "0-7:2") or, as rt-app writes it, an array of CPU ids ([0, 1, 2]),
            // read back as the equivalent list "0,1,2". Its CPUs are checked by the reader that
            // knows the machine.
            if (n.is_array()) {
                if (n.size() == 0) n.fail("expected a non-empty array of CPU ids such as [0, 1, 2]");
                std::string v;
                for (size_t i = 0; i < n.size(); ++i)
                    v += (i ? "," : "") + std::to_string(n[i].as_int(0, 1023));
                written = v;
                return v;
            }
            if (!n.is_string())
                n.fail("expected a CPU list: a string such as \"0-3,8\" or an array of CPU ids such as [0, 1, 2]; got " +
                       std::string(n.raw().type_name()) + " " + quote_for_message(n.raw().dump()));
            std::string v = n.as_string();
            written = v;
            return v;
        }
    }
    throw std::logic_error("unhandled parameter type");
}

// What an optional parameter left out reads back as.
ParamValues::Value empty_value(ParamType t) {
    switch (t) {
        case ParamType::integer:
        case ParamType::duration:
        case ParamType::frequency:
        case ParamType::size: return int64_t{0};
        case ParamType::real: return 0.0;
        case ParamType::boolean: return false;
        case ParamType::choice:
        case ParamType::text:
        case ParamType::cpulist: return std::string();
    }
    throw std::logic_error("unhandled parameter type");
}

void check_declaration(const ParamSpec& s) {
    if (!s.default_value.empty() && !s.absent_means.empty())
        throw std::logic_error("parameter " + s.name + " declares both a default and what its absence means");
}

// The declared default as JSON: "40ms" stays a string, "8" and "true" become a number and a bool.
nlohmann::json default_json(const ParamSpec& s) {
    switch (s.type) {
        case ParamType::integer:
        case ParamType::real:
        case ParamType::boolean:
            return nlohmann::json::parse(s.default_value);
        case ParamType::size:
            if (!s.default_value.empty() && s.default_value.find_first_not_of("0123456789") == std::string::npos)
                return nlohmann::json::parse(s.default_value);
            return s.default_value;
        default:
            return s.default_value;
    }
}

}  // namespace

std::string_view ParamSpec::unit() const {
    switch (type) {
        case ParamType::duration: return "ns";
        case ParamType::frequency: return "kHz";
        case ParamType::size: return "bytes";
        default: return "";
    }
}

std::string ParamSpec::type_text() const {
    switch (type) {
        case ParamType::integer: return "integer";
        case ParamType::real: return "number";
        case ParamType::boolean: return "boolean";
        case ParamType::duration: return "duration";
        case ParamType::frequency: return "frequency";
        case ParamType::size: return "size";
        case ParamType::choice: return "one of: " + join(choices, ", ");
        case ParamType::text: return "string";
        case ParamType::cpulist: return "CPU list";
    }
    return "";
}

std::string ParamSpec::range_text() const {
    if (!bounded(*this)) return "";
    if (type == ParamType::duration)
        return "[" + format_duration(static_cast<int64_t>(min)) + ", " + format_duration(static_cast<int64_t>(max)) + "]";
    if (type == ParamType::size)
        return "[" + size_text(static_cast<int64_t>(min)) + ", " + size_text(static_cast<int64_t>(max)) + "]";
    return "[" + number_text(min) + ", " + number_text(max) + "]";
}

const ParamValues::Entry& ParamValues::entry(std::string_view name, ParamType want) const {
    for (const Entry& e : entries_) {
        if (e.spec->name != name) continue;
        if (e.spec->type != want)
            throw std::logic_error("parameter " + std::string(name) + " is read with the wrong type");
        return e;
    }
    throw std::logic_error("parameter " + std::string(name) + " is not declared");
}

const std::string& ParamValues::written(std::string_view name) const {
    for (const Entry& e : entries_)
        if (e.spec->name == name) return e.written;
    throw std::logic_error("parameter " + std::string(name) + " is not declared");
}

bool ParamValues::given(std::string_view name) const {
    for (const Entry& e : entries_)
        if (e.spec->name == name) return e.given;
    throw std::logic_error("parameter " + std::string(name) + " is not declared");
}

std::vector<std::string> param_names(const ParamTable& table) {
    std::vector<std::string> out;
    for (const ParamSpec& s : table) out.push_back(s.name);
    return out;
}

ParamValues default_params(const ParamTable& table) {
    ParamValues out;
    out.table_ = &table;
    for (const ParamSpec& s : table) {
        check_declaration(s);
        if (s.required()) throw std::logic_error("parameter " + s.name + " has no default");
        ParamValues::Entry e{&s, empty_value(s.type), {}, false};
        if (!s.default_value.empty()) {
            const nlohmann::json j = default_json(s);
            e.value = read_value(JsonNode(j, "<declaration of " + s.name + ">"), s, e.written);
        }
        out.entries_.push_back(std::move(e));
    }
    return out;
}

ParamValues read_params(const JsonNode& obj, const ParamTable& table, const std::vector<std::string>& other_keys,
                        const std::vector<LeftOutSetting>& left_out) {
    obj.require_object();
    std::vector<std::string> allowed = other_keys;
    for (const ParamSpec& s : table)
        if (std::find(allowed.begin(), allowed.end(), s.name) == allowed.end()) allowed.push_back(s.name);
    // Every unknown key and every bad value of the object is reported, each on its own line.
    InputErrorCollector errors;
    // A key spelled as fio or libfuse spell the setting: name the parameter that holds it.
    std::vector<std::string> checked = allowed;
    for (const std::string& k : obj.keys()) {
        if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
        if (auto lo = std::find_if(left_out.begin(), left_out.end(), [&](const LeftOutSetting& l) { return l.key == k; });
            lo != left_out.end()) {
            errors.add(InputError(obj.file(), obj.get(k)->pointer(),
                                  quote_for_message(k) + " is left out of the model on purpose: " + lo->why));
            checked.push_back(k);
            continue;
        }
        for (const ParamSpec& s : table)
            if (std::find(s.aka.begin(), s.aka.end(), k) != s.aka.end()) {
                errors.add(InputError(obj.file(), obj.get(k)->pointer(),
                                      "unknown key " + quote_for_message(k) + "; this setting is " +
                                          quote_for_message(s.name) + " here"));
                checked.push_back(k);
                break;
            }
    }
    errors.attempt([&] { obj.check_keys(checked); });
    ParamValues out;
    out.table_ = &table;
    for (const ParamSpec& s : table) {
        check_declaration(s);
        ParamValues::Entry e{&s, empty_value(s.type), {}, false};
        errors.attempt([&] {
            if (auto n = obj.get(s.name)) {
                e.value = read_value(*n, s, e.written);
                e.given = true;
            } else if (s.required()) {
                obj.fail("missing required key \"" + s.name + "\"");
            } else if (!s.default_value.empty()) {
                const nlohmann::json j = default_json(s);
                e.value = read_value(JsonNode(j, "<declaration of " + s.name + ">"), s, e.written);
            }
        });
        out.entries_.push_back(std::move(e));
    }
    errors.finish();
    return out;
}

std::string params_markdown_header() { return "| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n"; }

std::string params_markdown_rows(const ParamTable& table) {
    std::string out;
    for (const ParamSpec& s : table)
        out += "| `" + s.name + "` | " + s.type_text() + " | " +
               (!s.absent_means.empty() ? s.absent_means
                : s.default_value.empty() ? "required"
                                          : "`" + s.default_value + "`") +
               " | " + s.range_text() + " | " + s.help + " |\n";
    return out;
}

std::string params_markdown(const ParamTable& table) { return params_markdown_header() + params_markdown_rows(table); }

}  // namespace wakesim
