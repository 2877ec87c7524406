// Strict reading of user JSON: every value is checked, unknown keys are rejected with the nearest
// valid name, times and frequencies must carry units. Errors are InputError (file, pointer, what).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "input/input_error.h"

namespace wakesim {

// Parses "35us", "1.5ms", "2s", "400ns" into integer nanoseconds. Throws std::invalid_argument
// with a message naming the accepted units when the text is not a duration.
int64_t parse_duration_ns(std::string_view text);
// Parses "3GHz", "800MHz", "2400kHz" into kHz.
int64_t parse_frequency_khz(std::string_view text);
// Parses "4KiB", "64KiB", "1MiB", "512B", "1G" (binary multiples) into bytes.
int64_t parse_size_bytes(std::string_view text);
// Formats nanoseconds compactly ("3.2us", "4ms").
std::string format_duration(int64_t ns);

// Escapes `s` for a one-line message and quotes it; long values are cut with a trailing "...".
std::string quote_for_message(std::string_view s);

// A name a user gives a task, group, connection, timer or idle state: one token in traces and
// tables, so not empty and without spaces or control characters.
bool is_plain_name(std::string_view s);

// Levenshtein distance; used to suggest the near miss of an unknown key or name.
int edit_distance(std::string_view a, std::string_view b);
// Returns the candidate closest to `s`, or "" when none is reasonably close.
std::string nearest_name(std::string_view s, const std::vector<std::string>& candidates);

// A view of one JSON value with its file and pointer, for precise errors.
class JsonNode {
public:
    JsonNode(const nlohmann::json& j, std::string file, std::string pointer = "")
        : j_(&j), file_(std::move(file)), ptr_(std::move(pointer)) {}

    const nlohmann::json& raw() const { return *j_; }
    const std::string& file() const { return file_; }
    const std::string& pointer() const { return ptr_; }

    [[noreturn]] void fail(const std::string& expected) const;

    bool is_object() const { return j_->is_object(); }
    bool is_array() const { return j_->is_array(); }
    bool is_string() const { return j_->is_string(); }
    bool is_number() const { return j_->is_number(); }

    // Object access. require_object() fails unless this is an object; check_keys() fails on the
    // first key not in `allowed`, suggesting the nearest allowed one.
    void require_object() const;
    void check_keys(std::initializer_list<std::string_view> allowed) const;
    void check_keys(const std::vector<std::string>& allowed) const;
    bool has(std::string_view key) const;
    JsonNode at(std::string_view key) const;  // fails "missing required key" when absent
    std::optional<JsonNode> get(std::string_view key) const;
    std::vector<std::string> keys() const;  // in document order (nlohmann sorts: alphabetical)

    // Array access.
    void require_array() const;
    size_t size() const;
    JsonNode operator[](size_t i) const;

    // Scalars with range checks; each fails with the expected type/range.
    std::string as_string() const;
    std::string as_file_name() const;  // a non-empty string without NUL characters
    bool as_bool() const;
    int64_t as_int(int64_t min, int64_t max) const;
    double as_double(double min, double max) const;
    int64_t as_duration_ns(int64_t min_ns, int64_t max_ns) const;  // string with unit
    int64_t as_frequency_khz(int64_t min_khz, int64_t max_khz) const;
    int64_t as_size_bytes(int64_t min, int64_t max) const;  // number of bytes or "4KiB"
    // One of `choices`; suggests the nearest on a miss.
    std::string as_enum(const std::vector<std::string>& choices) const;

    // Convenience: optional members with defaults.
    std::string string_or(std::string_view key, std::string def) const;
    bool bool_or(std::string_view key, bool def) const;
    int64_t int_or(std::string_view key, int64_t def, int64_t min, int64_t max) const;
    double double_or(std::string_view key, double def, double min, double max) const;
    int64_t duration_or(std::string_view key, int64_t def, int64_t min_ns, int64_t max_ns) const;

private:
    const nlohmann::json* j_;
    std::string file_;
    std::string ptr_;
};

// Limits on what a JSON file may hold (docs/scenarios.md, "Limits").
inline constexpr size_t kMaxJsonFileBytes = size_t{64} << 20;
inline constexpr size_t kMaxJsonDepth = 64;  // nested objects and arrays

// Reads and parses a JSON file; malformed JSON becomes an InputError naming line and column. The
// file must be a regular file of at most kMaxJsonFileBytes, nested at most kMaxJsonDepth deep.
nlohmann::json load_json_file(const std::string& path);
// The same checks on text already read (the fuzzing harness); `path` names it in messages.
nlohmann::json parse_json_text(const std::string& text, const std::string& path);
// Reads a whole regular file of at most `max_bytes`; anything else (a FIFO, a device, a directory,
// a name with a NUL) is an InputError naming the file. `what` names the file in the message.
std::string read_text_file(const std::string& path, size_t max_bytes, std::string_view what);
// Escapes a key for use in a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string json_pointer_escape(std::string_view key);

}  // namespace wakesim
