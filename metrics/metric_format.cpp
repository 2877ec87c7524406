#include "metrics/metric_format.h"

#include <algorithm>
#include <sstream>

namespace wakesim {

nlohmann::json to_json(const MetricValue& v) {
    return std::visit(
        [](const auto& x) -> nlohmann::json {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, Breakdown>) {
                nlohmann::json o = nlohmann::json::object();
                for (const auto& [key, value] : x) o[key] = value;
                return o;
            } else {
                return x;
            }
        },
        v);
}

nlohmann::json metrics_json(const RunMetrics& r) {
    nlohmann::json j = nlohmann::json::object();
    for (const MetricDef& d : metric_table()) j[d.name] = to_json(r.value(d.id));
    return j;
}

std::vector<Metric> csv_metrics() {
    std::vector<const MetricDef*> defs;
    for (const MetricDef& d : metric_table())
        if (is_scalar(d.type)) defs.push_back(&d);
    std::sort(defs.begin(), defs.end(),
              [](const MetricDef* a, const MetricDef* b) { return std::string(a->name) < std::string(b->name); });
    std::vector<Metric> out;
    for (const MetricDef* d : defs) out.push_back(d->id);
    return out;
}

std::string csv_cell(const RunMetrics& r, Metric m) { return to_json(r.value(m)).dump(); }

namespace {

// Display width of UTF-8 text (code points; the table's text has no wide characters).
size_t width(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

std::string padded(const std::string& s, size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }

std::string without_backticks(const char* s) {
    std::string out;
    for (const char* p = s; *p; ++p)
        if (*p != '`') out.push_back(*p);
    return out;
}

std::string md_cell(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

// The header of a table column (given on its first metric).
const char* column_header(int column) {
    for (const MetricDef& d : metric_table())
        if (d.shown.table.column == column && d.shown.table.header) return d.shown.table.header;
    return "";
}

}  // namespace

std::string metrics_list_text() {
    std::ostringstream os;
    for (const MetricDef& d : metric_table())
        os << padded(d.name, 27) << ' ' << padded(d.unit, 8) << ' ' << padded(to_string(d.better), 6) << ' '
           << without_backticks(d.doc) << '\n';
    return os.str();
}

std::string metrics_markdown() {
    std::ostringstream os;
    for (size_t g = 0; g < static_cast<size_t>(MetricGroup::kCount); ++g) {
        const auto group = static_cast<MetricGroup>(g);
        os << (g ? "\n" : "") << "## " << group_title(group) << "\n\n";
        os << "| name | unit | kind | better | computed as |\n|---|---|---|---|---|\n";
        for (const MetricDef& d : metric_table()) {
            if (d.group != group) continue;
            os << "| `" << d.name << "` | " << md_cell(d.unit) << " | " << to_string(d.kind) << " | "
               << (d.better == Better::neither ? "" : to_string(d.better)) << " | " << md_cell(d.doc) << " |\n";
        }
    }
    os << "\n## Over several seeds\n\n";
    os << "| name | `summary[]`: mean, ci95 | table column |\n|---|---|---|\n";
    for (const MetricDef& d : metric_table()) {
        if (!d.shown.summary && d.shown.table.column == 0) continue;
        os << "| `" << d.name << "` | " << (d.shown.summary ? "yes" : "") << " | "
           << md_cell(d.shown.table.column ? column_header(d.shown.table.column) : "") << " |\n";
    }
    return os.str();
}

}  // namespace wakesim
