// Typed parameters, declared once next to the code that reads them (a policy, a workload kind):
// name, type, unit, default, range and help. The same table validates a scenario's JSON, fills
// defaults, prints `wakesim list`, writes the docs tables, and gives a sweep something typed to
// vary. Values are read back by name with their type; asking for an undeclared name or the wrong
// type is a programming error (std::logic_error), never a silent default.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "input/json_input.h"

namespace wakesim {

enum class ParamType : uint8_t {
    integer,    // a count; min/max in the same unit
    real,       // a plain number
    boolean,
    duration,   // "40ms" in JSON; read back in ns; min/max in ns
    frequency,  // "2.4GHz"; read back in kHz
    size,       // "4KiB" or a number of bytes; read back in bytes
    choice,     // one of `choices`
    text,       // any non-empty string
    cpulist,    // a Linux CPU list ("0-3,8"), read back as written; the reader that knows the
                // machine parses it (topology/cpuset.h parse_cpu_list) and checks its CPUs
};

struct ParamSpec {
    std::string name;
    ParamType type;
    std::string default_value{};  // as a user writes it in JSON ("40ms", "two_bits", "8", "true")
    double min = 0;               // range in the read-back unit (ns, kHz, bytes, count); both 0: none
    double max = 0;
    std::vector<std::string> choices{};  // for choice
    std::string help{};
    // An optional parameter without a default value: what leaving it out means, as docs print it
    // ("all CPUs"). It then reads back as the type's empty value (0, false, "") with given()
    // false. Leave default_value empty. A parameter with neither is required.
    std::string absent_means{};
    // The setting as the tool the model follows spells it (fio's `cpus_allowed`, libfuse's
    // `io_uring_nr_qs`): a key of that spelling is refused with this parameter's name, not read.
    std::vector<std::string> aka{};

    bool required() const { return default_value.empty() && absent_means.empty(); }
    // "ns", "kHz", "bytes", "" : the unit of the read-back value.
    std::string_view unit() const;
    // "duration", "integer", "one of: a, b" ... as docs and `list` print it.
    std::string type_text() const;
    // "[1us, 3600s]", "[1, 64]", "[0B, 1GiB]" or "" when unbounded.
    std::string range_text() const;
};
using ParamTable = std::vector<ParamSpec>;

// A setting of the tool the model follows that the model leaves out on purpose: a key of that
// name is refused with the reason, not as an unknown key.
struct LeftOutSetting {
    std::string key;
    std::string why;
};

class ParamValues {
public:
    using Value = std::variant<int64_t, double, bool, std::string>;

    int64_t integer(std::string_view name) const { return get<int64_t>(name, ParamType::integer); }
    double real(std::string_view name) const { return get<double>(name, ParamType::real); }
    bool boolean(std::string_view name) const { return get<bool>(name, ParamType::boolean); }
    int64_t duration_ns(std::string_view name) const { return get<int64_t>(name, ParamType::duration); }
    int64_t frequency_khz(std::string_view name) const { return get<int64_t>(name, ParamType::frequency); }
    int64_t size_bytes(std::string_view name) const { return get<int64_t>(name, ParamType::size); }
    const std::string& choice(std::string_view name) const { return get_ref(name, ParamType::choice); }
    const std::string& text(std::string_view name) const { return get_ref(name, ParamType::text); }
    // The CPU list as written ("0-3,8"); "" when an optional list was left out.
    const std::string& cpulist(std::string_view name) const { return get_ref(name, ParamType::cpulist); }

    // What the user wrote (or the declared default), for reports: "40ms", "two_bits".
    const std::string& written(std::string_view name) const;
    bool given(std::string_view name) const;  // set in the scenario, not defaulted
    const ParamTable& table() const { return *table_; }

private:
    friend ParamValues default_params(const ParamTable& table);
    friend ParamValues read_params(const JsonNode& obj, const ParamTable& table,
                                   const std::vector<std::string>& other_keys,
                                   const std::vector<LeftOutSetting>& left_out);
    struct Entry {
        const ParamSpec* spec;
        Value value;
        std::string written;
        bool given = false;
    };
    const Entry& entry(std::string_view name, ParamType want) const;
    template <class T>
    T get(std::string_view name, ParamType want) const {
        return std::get<T>(entry(name, want).value);
    }
    const std::string& get_ref(std::string_view name, ParamType want) const {
        return std::get<std::string>(entry(name, want).value);
    }
    const ParamTable* table_ = nullptr;
    std::vector<Entry> entries_;  // in table order
};

// The declared names, in table order: for composing an object's full list of keys.
std::vector<std::string> param_names(const ParamTable& table);

// Every parameter at its declared default (optional ones absent). A required parameter is a
// declaration error here.
ParamValues default_params(const ParamTable& table);
// Reads `obj` against `table`: unknown keys are rejected with the nearest name (keys listed in
// `other_keys` belong to the caller and are skipped), each value is checked for type, unit and
// range, and missing ones take their defaults. Errors are InputError naming the JSON pointer.
// A key of `left_out` is refused with its reason.
ParamValues read_params(const JsonNode& obj, const ParamTable& table, const std::vector<std::string>& other_keys = {},
                        const std::vector<LeftOutSetting>& left_out = {});

// A Markdown table (name, type, default, range, help) for docs/ and `wakesim list -v`. The
// default column shows `absent_means` for an optional parameter and "required" for a required one.
std::string params_markdown(const ParamTable& table);
// The same table in parts, for a table that adds rows of its own (keys read by their own code):
// the header (two lines), then one line per parameter.
std::string params_markdown_header();
std::string params_markdown_rows(const ParamTable& table);

}  // namespace wakesim
