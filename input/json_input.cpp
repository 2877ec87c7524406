// Strict JSON input: units, ranges, unknown keys with near-miss suggestions, precise pointers.
// Every user-facing message is one line: values are escaped and cut to ~40 characters.
#include "input/json_input.h"
#include "input/printable.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


namespace wakesim {

namespace {
constexpr size_t kMaxQuoted = 40;
}  // namespace

std::string read_text_file(const std::string& path, size_t max_bytes, std::string_view what) {
    if (path.find('\0') != std::string::npos)
        throw InputError(path, "", "expected a file name without NUL characters");
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw InputError(path, "", std::string("cannot read file: ") + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(path, "", std::string("cannot read file: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        throw InputError(path, "", "expected " + std::string(what) + " (a regular file), got " +
                                       (S_ISDIR(st.st_mode)    ? "a directory"
                                        : S_ISFIFO(st.st_mode) ? "a FIFO"
                                        : S_ISCHR(st.st_mode)  ? "a character device"
                                        : S_ISBLK(st.st_mode)  ? "a block device"
                                        : S_ISSOCK(st.st_mode) ? "a socket"
                                                               : "a special file"));
    const std::string too_big = "expected " + std::string(what) + " of at most " + std::to_string(max_bytes >> 20) +
                                " MiB";
    if (static_cast<uint64_t>(st.st_size) > max_bytes) throw InputError(path, "", too_big);
    std::string text;
    char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw InputError(path, "", std::string("cannot read file: ") + std::strerror(errno));
        }
        if (n == 0) break;
        // The file may grow while it is read: the cap holds for what is read, not only for st_size.
        if (text.size() + static_cast<size_t>(n) > max_bytes) throw InputError(path, "", too_big);
        text.append(buf, static_cast<size_t>(n));
    }
    return text;
}


// Escapes `s` for a one-line message and quotes it; long values are cut with a trailing "...".
std::string quote_for_message(std::string_view s) {
    bool cut = false;
    if (s.size() > kMaxQuoted) {
        size_t n = kMaxQuoted;
        // Do not split a UTF-8 sequence: back up over continuation bytes.
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
        s = s.substr(0, n);
        cut = true;
    }
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        const char ch = s[i];
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (ch == '\n') {
            out += "\\n";
        } else if (ch == '\t') {
            out += "\\t";
        } else if (ch == '\r') {
            out += "\\r";
        } else {
            i += append_printable(out, s, i);
            continue;
        }
        ++i;
    }
    out += '"';
    if (cut) out += "...";
    return out;
}
namespace {

__extension__ typedef __int128 i128;

// Largest quantity (ns, kHz or bytes) accepted: ~31.7 years of simulated time.
constexpr int64_t kMaxQuantity = 1'000'000'000'000'000'000;

std::string quote(std::string_view s) { return quote_for_message(s); }


// Keeps a message built from `s` on one line.
std::string one_line(std::string_view s, size_t max_len) { return printable_line(s, max_len); }

std::string join(const std::vector<std::string>& v, std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += sep;
        out += v[i];
    }
    return out;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    }
    return true;
}

// ---- quantities with units -------------------------------------------------------------------

struct Unit {
    std::string_view name;
    int64_t num;  // one unit = num/den base units (ns, kHz or bytes)
    int64_t den;
};

struct QuantityKind {
    std::string_view noun;       // "duration"
    std::string_view plural;     // "durations"
    std::string_view unit_list;  // "ns, us, ms, s"
    const Unit* units;
    size_t n_units;
    bool case_insensitive;
    bool whole_only;  // reject values that are not a whole number of base units
    std::string (*format)(int64_t);
};

constexpr Unit kDurationUnits[] = {
    {"ns", 1, 1},
    {"us", 1'000, 1},
    {"\xC2\xB5s", 1'000, 1},  // U+00B5 MICRO SIGN
    {"\xCE\xBCs", 1'000, 1},  // U+03BC GREEK SMALL LETTER MU
    {"ms", 1'000'000, 1},
    {"s", 1'000'000'000, 1},
};
constexpr Unit kFrequencyUnits[] = {
    {"Hz", 1, 1000},
    {"kHz", 1, 1},
    {"MHz", 1'000, 1},
    {"GHz", 1'000'000, 1},
};
constexpr Unit kSizeUnits[] = {
    {"B", 1, 1},
    {"KiB", int64_t{1} << 10, 1}, {"K", int64_t{1} << 10, 1},
    {"MiB", int64_t{1} << 20, 1}, {"M", int64_t{1} << 20, 1},
    {"GiB", int64_t{1} << 30, 1}, {"G", int64_t{1} << 30, 1},
};

// Exact decimal rendering of v / scale, trailing zeros trimmed ("3.2" for 3200/1000).
std::string scaled_decimal(uint64_t v, uint64_t scale) {
    std::string out = std::to_string(v / scale);
    uint64_t frac = v % scale;
    if (frac != 0) {
        std::string digits = std::to_string(frac);
        size_t width = std::to_string(scale).size() - 1;
        digits.insert(0, width - digits.size(), '0');
        while (!digits.empty() && digits.back() == '0') digits.pop_back();
        out += '.';
        out += digits;
    }
    return out;
}

// Formats with the largest unit not bigger than the value; units ascending, powers of ten.
std::string format_decimal_units(int64_t value, std::initializer_list<std::pair<uint64_t, const char*>> units) {
    const bool neg = value < 0;
    const uint64_t mag = neg ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    std::pair<uint64_t, const char*> pick = *units.begin();
    for (const auto& u : units)
        if (mag >= u.first) pick = u;
    return (neg ? "-" : "") + scaled_decimal(mag, pick.first) + pick.second;
}

std::string format_frequency(int64_t khz) {
    return format_decimal_units(khz, {{1, "kHz"}, {1'000, "MHz"}, {1'000'000, "GHz"}});
}

std::string format_size(int64_t bytes) {
    for (auto [shift, name] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}}) {
        const int64_t unit = int64_t{1} << shift;
        if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + name;
    }
    return std::to_string(bytes) + "B";
}

const QuantityKind kDuration{"duration", "durations", "ns, us, ms, s", kDurationUnits,
                             std::size(kDurationUnits), false, false, &format_duration};
const QuantityKind kFrequency{"frequency", "frequencies", "Hz, kHz, MHz, GHz", kFrequencyUnits,
                              std::size(kFrequencyUnits), true, false, &format_frequency};
const QuantityKind kSize{"size", "sizes", "B, KiB or K, MiB or M, GiB or G", kSizeUnits, std::size(kSizeUnits),
                         false, true, &format_size};

std::string expected_quantity(const QuantityKind& k) {
    return "expected a " + std::string(k.noun) + " with a unit (" + std::string(k.unit_list) + ")";
}

[[noreturn]] void bad_quantity(const QuantityKind& k, std::string_view text) {
    throw std::invalid_argument(expected_quantity(k) + ", got " +
                                (text.empty() ? std::string("an empty string") : quote(text)));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Grammar: digits ["." digits] [spaces] unit. No sign, no exponent, no surrounding spaces.
// The result is rounded to the nearest base unit (halves away from zero).
int64_t parse_quantity(std::string_view text, const QuantityKind& k) {
    if (text.empty()) bad_quantity(k, text);
    if (text[0] == '-' && text.size() > 1 && (is_digit(text[1]) || text[1] == '.'))
        throw std::invalid_argument(std::string(k.plural) + " must not be negative, got " + quote(text));

    size_t i = 0;
    constexpr i128 kIntCap = static_cast<i128>(kMaxQuantity) * 1000 * 1000;
    i128 int_part = 0;
    bool overflow = false;
    const size_t int_begin = i;
    while (i < text.size() && is_digit(text[i])) {
        if (int_part > kIntCap)
            overflow = true;
        else
            int_part = int_part * 10 + (text[i] - '0');
        ++i;
    }
    if (i == int_begin) bad_quantity(k, text);

    i128 frac = 0;
    i128 frac_scale = 1;
    if (i < text.size() && text[i] == '.') {
        ++i;
        const size_t frac_begin = i;
        while (i < text.size() && is_digit(text[i])) {
            if (i - frac_begin < 18) {  // digits beyond 1e-18 of a unit cannot matter
                frac = frac * 10 + (text[i] - '0');
                frac_scale *= 10;
            }
            ++i;
        }
        if (i == frac_begin) bad_quantity(k, text);
    }
    while (i < text.size() && text[i] == ' ') ++i;

    const std::string_view unit_text = text.substr(i);
    if (unit_text.empty()) bad_quantity(k, text);
    for (char c : unit_text) {
        const auto uc = static_cast<unsigned char>(c);
        if (!std::isalpha(uc) && uc < 0x80) bad_quantity(k, text);
    }

    const Unit* unit = nullptr;
    const Unit* case_hint = nullptr;
    for (size_t u = 0; u < k.n_units; ++u) {
        if (k.units[u].name == unit_text) unit = &k.units[u];
        else if (!case_hint && iequals(k.units[u].name, unit_text)) case_hint = &k.units[u];
    }
    if (!unit && k.case_insensitive) unit = case_hint;
    if (!unit) {
        std::string msg = "unknown unit " + quote(unit_text) + " in " + quote(text) + "; " + expected_quantity(k);
        if (case_hint) {
            msg += " (did you mean " + quote(case_hint->name) + "?)";
        } else if (unit_text.size() == 2 && (unit_text[1] == 'B' || unit_text[1] == 'b')) {
            // KB, MB, GB: decimal or binary, nobody can tell; the binary unit is what is meant here.
            const std::string binary = std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(unit_text[0])))) + "iB";
            for (size_t u = 0; u < k.n_units; ++u)
                if (k.units[u].name == binary) msg += " (decimal units are ambiguous; did you mean " + quote(binary) + "?)";
        }
        throw std::invalid_argument(msg);
    }

    // value = (int_part + frac / frac_scale) * num / den, computed exactly.
    const i128 whole = int_part * unit->num;
    i128 q = whole / unit->den;
    const i128 r = whole % unit->den;
    const i128 denom = frac_scale * unit->den;
    const i128 rest = r * frac_scale + frac * unit->num;  // in units of 1/denom
    if (k.whole_only && rest % denom != 0)
        throw std::invalid_argument(std::string(k.noun) + " " + quote(text) +
                                    " is not a whole number of bytes");
    q += (rest + denom / 2) / denom;
    if (overflow || q > kMaxQuantity)
        throw std::invalid_argument(std::string(k.noun) + " " + quote(text) + " is too large (at most " +
                                    k.format(kMaxQuantity) + ")");
    return static_cast<int64_t>(q);
}

// ---- JSON helpers -----------------------------------------------------------------------------

const char* type_name(const nlohmann::json& j) {
    switch (j.type()) {
        case nlohmann::json::value_t::object: return "object";
        case nlohmann::json::value_t::array: return "array";
        case nlohmann::json::value_t::string: return "string";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned: return "integer";
        case nlohmann::json::value_t::number_float: return "number";
        case nlohmann::json::value_t::boolean: return "boolean";
        case nlohmann::json::value_t::null: return "null";
        default: return "value";
    }
}

// The value as it appears in the document, short ("2.5", "\"plian\"", "true").
std::string value_text(const nlohmann::json& j) {
    if (j.is_string()) return quote(j.get_ref<const std::string&>());
    if (j.is_number() || j.is_boolean() || j.is_null()) return one_line(j.dump(), kMaxQuoted);
    return type_name(j);
}

// Type and, for scalars, the value: "string \"35us\"", "integer 3", "array".
std::string describe(const nlohmann::json& j) {
    if (j.is_string() || j.is_number() || j.is_boolean()) return std::string(type_name(j)) + " " + value_text(j);
    return type_name(j);
}

std::string format_double(double d) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, res.ptr);
}

// " in [a, b]", " >= a", " <= b" or "" for an unbounded range.
template <class T, class Fmt>
std::string range_text(T min, T max, T lowest, T highest, Fmt fmt) {
    const bool has_min = min > lowest, has_max = max < highest;
    if (has_min && has_max) return " in [" + fmt(min) + ", " + fmt(max) + "]";
    if (has_min) return " >= " + fmt(min);
    if (has_max) return " <= " + fmt(max);
    return "";
}

std::string int_range(int64_t min, int64_t max) {
    return range_text(min, max, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                      [](int64_t v) { return std::to_string(v); });
}

// The same with its upper end said even where it is int64's own: for a value beyond it.
std::string int_range_to_top(int64_t min, int64_t max) {
    const std::string top = std::to_string(max);
    return min > std::numeric_limits<int64_t>::min() ? " in [" + std::to_string(min) + ", " + top + "]" : " <= " + top;
}

// A pointer segment for display: RFC 6901 escaping, plus control characters made visible so that
// the message stays on one line.
// A key as a pointer segment in a message: control characters escaped, long keys cut.
std::string pointer_segment(std::string_view key) {
    const std::string seg = json_pointer_escape(key);
    const bool control = std::any_of(seg.begin(), seg.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
    });
    if (!control && seg.size() <= kMaxQuoted) return seg;
    return one_line(seg, kMaxQuoted);
}

}  // namespace


// ---- public: units -----------------------------------------------------------------------------

int64_t parse_duration_ns(std::string_view text) { return parse_quantity(text, kDuration); }
int64_t parse_frequency_khz(std::string_view text) { return parse_quantity(text, kFrequency); }
int64_t parse_size_bytes(std::string_view text) { return parse_quantity(text, kSize); }

std::string format_duration(int64_t ns) {
    return format_decimal_units(ns, {{1, "ns"}, {1'000, "us"}, {1'000'000, "ms"}, {1'000'000'000, "s"}});
}

bool is_plain_name(std::string_view s) {
    return !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7F;
    });
}

// ---- public: near misses -----------------------------------------------------------------------

int edit_distance(std::string_view a, std::string_view b) {
    std::vector<int> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
    for (size_t i = 1; i <= a.size(); ++i) {
        int diag = row[0];
        row[0] = static_cast<int>(i);
        for (size_t j = 1; j <= b.size(); ++j) {
            const int up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// Closest candidate within max(2, |s|/3) edits, ignoring case ("WF_SYNC" finds wf_sync, "wa_idle"
// finds WA_IDLE); ties go to the earliest candidate. A candidate that would need every character
// replaced (distance >= the longer length) is never suggested.
std::string nearest_name(std::string_view s, const std::vector<std::string>& candidates) {
    auto lower = [](std::string_view t) {
        std::string out(t);
        for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return out;
    };
    const std::string ls = lower(s);
    const int limit = std::max(2, static_cast<int>(s.size() / 3));
    int best = std::numeric_limits<int>::max();
    const std::string* pick = nullptr;
    for (const auto& c : candidates) {
        const int d = edit_distance(ls, lower(c));
        if (d < best && d <= limit && d < static_cast<int>(std::max(s.size(), c.size()))) {
            best = d;
            pick = &c;
        }
    }
    return pick ? *pick : std::string();
}

// ---- JsonNode ----------------------------------------------------------------------------------

void JsonNode::fail(const std::string& expected) const { throw InputError(file_, ptr_, expected); }

void JsonNode::require_object() const {
    if (!j_->is_object()) fail(std::string("expected an object, got ") + type_name(*j_));
}

void JsonNode::check_keys(std::initializer_list<std::string_view> allowed) const {
    check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void JsonNode::check_keys(const std::vector<std::string>& allowed) const {
    require_object();
    InputErrorCollector errors;  // every unknown key of the object, each on its own line
    for (const auto& [key, value] : j_->items()) {
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        std::string msg = "unknown key " + quote(key);
        const std::string near = nearest_name(key, allowed);
        if (!near.empty())
            msg += "; did you mean " + quote(near) + "?";
        else if (allowed.empty())
            msg += "; this object takes no keys";
        else
            msg += "; expected one of: " + join(allowed, ", ");
        errors.add(InputError(file_, ptr_ + "/" + pointer_segment(key), msg));
    }
    errors.finish();
}

bool JsonNode::has(std::string_view key) const {
    require_object();
    return j_->find(key) != j_->end();
}

JsonNode JsonNode::at(std::string_view key) const {
    require_object();
    auto it = j_->find(key);
    if (it == j_->end()) fail("missing required key " + quote(key));
    return JsonNode(*it, file_, ptr_ + "/" + pointer_segment(key));
}

std::optional<JsonNode> JsonNode::get(std::string_view key) const {
    require_object();
    auto it = j_->find(key);
    if (it == j_->end()) return std::nullopt;
    return JsonNode(*it, file_, ptr_ + "/" + pointer_segment(key));
}

std::vector<std::string> JsonNode::keys() const {
    require_object();
    std::vector<std::string> out;
    for (const auto& [key, value] : j_->items()) out.push_back(key);
    return out;
}

void JsonNode::require_array() const {
    if (!j_->is_array()) fail(std::string("expected an array, got ") + type_name(*j_));
}

size_t JsonNode::size() const {
    require_array();
    return j_->size();
}

JsonNode JsonNode::operator[](size_t i) const {
    require_array();
    if (i >= j_->size())
        fail("expected at least " + std::to_string(i + 1) + " elements, got " + std::to_string(j_->size()));
    return JsonNode((*j_)[i], file_, ptr_ + "/" + std::to_string(i));
}

std::string JsonNode::as_string() const {
    if (!j_->is_string()) fail("expected a string, got " + describe(*j_));
    return j_->get<std::string>();
}

std::string JsonNode::as_file_name() const {
    std::string s = as_string();
    if (s.empty()) fail("expected a file name, got an empty string");
    if (s.find('\0') != std::string::npos) fail("expected a file name without NUL characters, got " + quote(s));
    return s;
}

bool JsonNode::as_bool() const {
    if (!j_->is_boolean()) fail("expected a boolean (true or false), got " + describe(*j_));
    return j_->get<bool>();
}

int64_t JsonNode::as_int(int64_t min, int64_t max) const {
    const std::string expected = "expected an integer" + int_range(min, max);
    int64_t v = 0;
    if (j_->is_number_unsigned()) {
        const uint64_t u = j_->get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            fail("expected an integer" + int_range_to_top(min, max) + ", got " + value_text(*j_));
        v = static_cast<int64_t>(u);
    } else if (j_->is_number_integer()) {
        v = j_->get<int64_t>();
    } else if (j_->is_number_float()) {
        // 2.0 and 1e3 are integers written as floats; accept them only when exact.
        const double d = j_->get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) fail(expected + ", got " + value_text(*j_));
        if (d < static_cast<double>(min) || d > static_cast<double>(max))
            fail("expected an integer" + int_range_to_top(min, max) + ", got " + value_text(*j_));
        if (std::fabs(d) > 9007199254740992.0)
            fail(expected + " in digits (with an exponent a number is exact only up to 2^53), got " + value_text(*j_));
        v = static_cast<int64_t>(d);
    } else {
        fail(expected + ", got " + describe(*j_));
    }
    if (v < min || v > max) fail(expected + ", got " + value_text(*j_));
    return v;
}

double JsonNode::as_double(double min, double max) const {
    const std::string expected =
        "expected a number" + range_text(min, max, -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::infinity(), format_double);
    if (!j_->is_number()) fail(expected + ", got " + describe(*j_));
    const double v = j_->get<double>();
    if (!(v >= min && v <= max)) fail(expected + ", got " + value_text(*j_));
    return v;
}

namespace {

template <class Parse>
int64_t quantity_node(const JsonNode& n, const QuantityKind& k, int64_t min, int64_t max, Parse parse) {
    const std::string range = range_text(min, max, std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max(), k.format);
    if (!n.raw().is_string()) n.fail(expected_quantity(k) + ", got " + describe(n.raw()));
    int64_t v = 0;
    try {
        v = parse(n.raw().get_ref<const std::string&>());
    } catch (const std::invalid_argument& e) {
        n.fail(e.what());
    }
    if (v < min || v > max)
        n.fail("expected a " + std::string(k.noun) + range + ", got " +
               quote(n.raw().get_ref<const std::string&>()));
    return v;
}

}  // namespace

int64_t JsonNode::as_duration_ns(int64_t min_ns, int64_t max_ns) const {
    return quantity_node(*this, kDuration, min_ns, max_ns, parse_duration_ns);
}

int64_t JsonNode::as_frequency_khz(int64_t min_khz, int64_t max_khz) const {
    return quantity_node(*this, kFrequency, min_khz, max_khz, parse_frequency_khz);
}

int64_t JsonNode::as_size_bytes(int64_t min, int64_t max) const {
    if (j_->is_number()) {
        // A plain JSON integer is a number of bytes.
        const std::string range = range_text(min, max, std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max(), format_size);
        if (!j_->is_number_integer() && !j_->is_number_unsigned())
            fail("expected a size in bytes (an integer or a string such as \"4KiB\"), got " + value_text(*j_));
        if (j_->is_number_unsigned() &&
            j_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            fail("expected a size" + range + ", got " + value_text(*j_));
        const int64_t v = j_->get<int64_t>();
        if (v < 0) fail("sizes must not be negative, got " + value_text(*j_));
        if (v < min || v > max) fail("expected a size" + range + ", got " + value_text(*j_));
        return v;
    }
    return quantity_node(*this, kSize, min, max, parse_size_bytes);
}

std::string JsonNode::as_enum(const std::vector<std::string>& choices) const {
    const std::string expected = "expected one of: " + join(choices, ", ");
    if (!j_->is_string()) fail(expected + "; got " + describe(*j_));
    const auto& s = j_->get_ref<const std::string&>();
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    std::string msg = expected + "; got " + quote(s);
    const std::string near = nearest_name(s, choices);
    if (!near.empty()) msg += " (did you mean " + quote(near) + "?)";
    fail(msg);
}

std::string JsonNode::string_or(std::string_view key, std::string def) const {
    return has(key) ? at(key).as_string() : def;
}

bool JsonNode::bool_or(std::string_view key, bool def) const { return has(key) ? at(key).as_bool() : def; }

int64_t JsonNode::int_or(std::string_view key, int64_t def, int64_t min, int64_t max) const {
    return has(key) ? at(key).as_int(min, max) : def;
}

double JsonNode::double_or(std::string_view key, double def, double min, double max) const {
    return has(key) ? at(key).as_double(min, max) : def;
}

int64_t JsonNode::duration_or(std::string_view key, int64_t def, int64_t min_ns, int64_t max_ns) const {
    return has(key) ? at(key).as_duration_ns(min_ns, max_ns) : def;
}

// ---- files -------------------------------------------------------------------------------------

std::string json_pointer_escape(std::string_view key) {
    std::string out;
    out.reserve(key.size());
    for (char c : key) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

namespace {

// Drops nlohmann's "[json.exception...] parse error at line L, column C: syntax error while
// parsing X - " prefix, keeping the reason ("unexpected '}'; expected string literal").
std::string short_parse_reason(const std::string& what) {
    std::string reason = what;
    if (auto p = reason.find("parse error"); p != std::string::npos) {
        if (auto colon = reason.find(": ", p); colon != std::string::npos) reason = reason.substr(colon + 2);
    }
    if (reason.rfind("syntax error while parsing", 0) == 0) {
        if (auto dash = reason.find(" - "); dash != std::string::npos) reason = reason.substr(dash + 3);
    }
    return one_line(reason, 120);
}

// Tracks where the parser is, to reject duplicate keys (nlohmann would keep the last silently).
struct DuplicateKeyCheck {
    struct Frame {
        bool is_array;
        size_t count = 0;  // arrays: elements started so far
        std::string key;   // objects: current key
        std::set<std::string> seen;
        bool member_done = false;  // objects: the current key's value is complete
    };
    std::string path;
    std::vector<Frame> stack;

    std::string pointer_to_parent() const {
        std::string p;
        for (size_t i = 0; i + 1 < stack.size(); ++i) {
            const Frame& f = stack[i];
            p += "/" + (f.is_array ? std::to_string(f.count - 1) : pointer_segment(f.key));
        }
        return p;
    }

    // The value being parsed now (after its key or, in an array, its index).
    std::string current_pointer() const {
        if (stack.empty()) return "";
        const Frame& f = stack.back();
        return pointer_to_parent() + "/" + (f.is_array ? std::to_string(f.count) : pointer_segment(f.key));
    }

    // Where a syntax error is: inside the value being parsed, or between an object's members
    // (the object itself).
    std::string error_pointer() const {
        if (stack.empty()) return "";
        const Frame& f = stack.back();
        if (!f.is_array && (f.member_done || f.seen.empty())) return pointer_to_parent();
        return current_pointer();
    }

    void element_starts() {
        if (!stack.empty() && stack.back().is_array) ++stack.back().count;
    }

    bool operator()(int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        switch (event) {
            case E::object_start:
            case E::array_start:
                // Checked while parsing, before anything recursive walks the document.
                if (stack.size() >= kMaxJsonDepth)
                    throw InputError(path, current_pointer(),
                                     "expected JSON nested at most " + std::to_string(kMaxJsonDepth) +
                                         " levels deep (objects and arrays)");
                element_starts();
                stack.push_back(Frame{event == E::array_start, 0, {}, {}});
                break;
            case E::object_end:
            case E::array_end:
                if (!stack.empty()) stack.pop_back();
                if (!stack.empty()) stack.back().member_done = true;
                break;
            case E::key: {
                Frame& top = stack.back();
                top.key = parsed.get<std::string>();
                top.member_done = false;
                if (!top.seen.insert(top.key).second)
                    throw InputError(path, pointer_to_parent() + "/" + pointer_segment(top.key),
                                     "duplicate key " + quote(top.key));
                break;
            }
            case E::value:
                element_starts();
                if (!stack.empty()) stack.back().member_done = true;
                break;
        }
        return true;
    }
};

}  // namespace

nlohmann::json load_json_file(const std::string& path) {
    return parse_json_text(read_text_file(path, kMaxJsonFileBytes, "a JSON file"), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& path) {
    if (std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }))
        throw InputError(path, "", "file is empty; expected a JSON document");

    DuplicateKeyCheck check{path, {}};
    try {
        return nlohmann::json::parse(
            text, [&check](int d, nlohmann::json::parse_event_t e, nlohmann::json& j) { return check(d, e, j); });
    } catch (const nlohmann::json::out_of_range& e) {
        // 406: a number such as 1e400 that no double holds.
        std::string what = e.what();
        if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        throw InputError(path, check.current_pointer(),
                         "expected a number within the range of a double; " + one_line(what, 120));
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is the 1-based index of the offending byte.
        const size_t at = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
        size_t line = 1, column = 1;
        for (size_t i = 0; i < at; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
                ++column;  // count characters, not UTF-8 continuation bytes
            }
        }
        throw InputError(path, check.error_pointer(),
                         "malformed JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                             ": " + short_parse_reason(e.what()));
    }
}

}  // namespace wakesim
