// SPDX-License-Identifier: BSL-1.0
#include "core/config.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace vkshmem {
namespace {

struct Row {
    EnvDesc desc;
    void* (*field)(Config&);
};

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// "Auto, Bar, Copy" (an enum's enumerators as the table spells them) -> {"auto", "bar", "copy"}.
std::vector<std::string> choices(std::string_view enumerators) {
    std::vector<std::string> out;
    while (!enumerators.empty()) {
        const std::size_t comma = enumerators.find(',');
        out.push_back(lower(trim(enumerators.substr(0, comma))));
        enumerators = comma == std::string_view::npos ? std::string_view{} : enumerators.substr(comma + 1);
    }
    return out;
}

// The last expansion of env_table.def that makes data.
const Row k_rows[] = {
#define VKSHMEM_ENV(NAME, TYPE, DEF, CAT, DOC)                                                                    \
    {{#NAME, EnvType::TYPE, DEF, #CAT, DOC, {}}, [](Config& c) -> void* { return &c.NAME; }},
#define VKSHMEM_ENV_ENUM(NAME, ENUM, DEF, CAT, DOC, ...)                                                          \
    {{#NAME, EnvType::Enum, DEF, #CAT, DOC, choices(#__VA_ARGS__)}, [](Config& c) -> void* { return &c.NAME; }},
#include "core/env_table.def"
#undef VKSHMEM_ENV
#undef VKSHMEM_ENV_ENUM
};

const EnvDesc* k_descs = [] {
    static EnvDesc d[std::size(k_rows)];
    for (std::size_t i = 0; i < std::size(k_rows); ++i) d[i] = k_rows[i].desc;
    return d;
}();

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

// Parses `text` into the field described by `row`. Returns an error message or "".
std::string assign(Config& cfg, const Row& row, std::string_view text) {
    void* f = row.field(cfg);
    switch (row.desc.type) {
    case EnvType::Size:
        if (auto v = parse_size(text)) {
            *static_cast<std::uint64_t*>(f) = *v;
            return {};
        }
        return "expected a size in bytes with an optional suffix k, m, g or t (e.g. 512M)";
    case EnvType::Bool:
        if (auto v = parse_bool(text)) {
            *static_cast<bool*>(f) = *v;
            return {};
        }
        return "expected 0 or 1 (also yes/no, on/off, true/false)";
    case EnvType::Int:
        if (auto v = parse_int(text)) {
            *static_cast<std::int64_t*>(f) = *v;
            return {};
        }
        return "expected an integer";
    case EnvType::String:
        *static_cast<std::string*>(f) = std::string(text);
        return {};
    case EnvType::Enum: {
        const auto& c = row.desc.choices;
        const auto it = std::find(c.begin(), c.end(), lower(trim(text)));
        if (it == c.end()) return "expected " + env_choices_text(row.desc);
        // Every enum of the table has std::uint8_t underneath (config.hpp).
        *static_cast<std::uint8_t*>(f) = static_cast<std::uint8_t>(it - c.begin());
        return {};
    }
    }
    return "unknown type";
}

} // namespace

std::span<const EnvDesc> env_table() { return {k_descs, std::size(k_rows)}; }

const char* env_type_name(EnvType t) {
    switch (t) {
    case EnvType::Size: return "size";
    case EnvType::Bool: return "bool";
    case EnvType::Int: return "int";
    case EnvType::String: return "string";
    case EnvType::Enum: return "enum";
    }
    return "?";
}

std::string env_choices_text(const EnvDesc& d) {
    std::string out;
    for (std::size_t i = 0; i < d.choices.size(); ++i) {
        if (i) out += i + 1 == d.choices.size() ? " or " : ", ";
        out += d.choices[i];
    }
    return out;
}

namespace {
const EnvDesc& desc(std::string_view name) {
    for (const Row& row : k_rows)
        if (row.desc.name == name) return row.desc;
    std::abort(); // only the table's own names reach here
}
} // namespace

#define VKSHMEM_ENV(NAME, TYPE, DEF, CAT, DOC)
#define VKSHMEM_ENV_ENUM(NAME, ENUM, DEF, CAT, DOC, ...)                                                          \
    std::string_view to_text(ENUM value) { return desc(#NAME).choices.at(static_cast<std::size_t>(value)); }
#include "core/env_table.def"
#undef VKSHMEM_ENV
#undef VKSHMEM_ENV_ENUM

std::optional<std::uint64_t> parse_size(std::string_view text) {
    text = trim(text);
    if (text.empty()) return std::nullopt;
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end == text.data()) return std::nullopt;
    std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
    unsigned shift = 0;
    if (!rest.empty()) {
        switch (std::tolower(static_cast<unsigned char>(rest.front()))) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        case 'b': shift = 0; break;
        default: return std::nullopt;
        }
        rest.remove_prefix(1);
        if (shift != 0 && !rest.empty() && (rest.front() == 'b' || rest.front() == 'B')) rest.remove_prefix(1);
        if (!rest.empty()) return std::nullopt;
    }
    if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
}

std::optional<bool> parse_bool(std::string_view text) {
    auto t = lower(trim(text));
    if (t == "1" || t == "yes" || t == "on" || t == "true" || t == "y") return true;
    if (t == "0" || t == "no" || t == "off" || t == "false" || t == "n") return false;
    return std::nullopt;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    text = trim(text);
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return v;
}

std::optional<ConfigError> load_config(Config& cfg, const char* (*lookup)(const char*)) {
    Config next;
    for (const Row& row : k_rows) {
        std::string err = assign(next, row, row.desc.default_text);
        if (!err.empty()) return ConfigError{row.desc.name, "built-in default: " + err};
    }
    for (const Row& row : k_rows) {
        std::string_view name = row.desc.name;
        const char* v = lookup(row.desc.name);
        // The deprecated SMA_* spellings of the spec's SHMEM_* variables.
        if (!v && name.starts_with("SHMEM_")) v = lookup(("SMA_" + std::string(name.substr(6))).c_str());
        if (!v) continue;
        std::string err = assign(next, row, v);
        if (!err.empty()) return ConfigError{row.desc.name, fmt::format("malformed value '{}': {}", v, err)};
    }
    if (next.SHMEM_DEBUG && next.VKSHMEM_DEBUG == DebugLevel::Warn) next.VKSHMEM_DEBUG = DebugLevel::Debug;
    cfg = std::move(next);
    return std::nullopt;
}

std::vector<UnknownVar> unknown_variables(const std::vector<std::string>& environ_names) {
    std::vector<UnknownVar> out;
    for (const auto& name : environ_names) {
        if (!name.starts_with("VKSHMEM_")) continue;
        // Variables the tools and tests read for themselves, not the library.
        if (name == "VKSHMEM_MPIRUN" || name == "VKSHMEM_CC" || name == "VKSHMEM_CXX" ||
            name.starts_with("VKSHMEM_TEST_"))
            continue;
        bool known = false;
        std::string best;
        std::size_t best_d = SIZE_MAX;
        for (const Row& row : k_rows) {
            if (name == row.desc.name) {
                known = true;
                break;
            }
            std::size_t d = edit_distance(name, row.desc.name);
            if (d < best_d) {
                best_d = d;
                best = row.desc.name;
            }
        }
        if (!known) out.push_back({name, best});
    }
    return out;
}

std::string value_text(const Config& cfg, const EnvDesc& d) {
    for (const Row& row : k_rows) {
        if (std::strcmp(row.desc.name, d.name) != 0) continue;
        void* f = row.field(const_cast<Config&>(cfg));
        switch (d.type) {
        case EnvType::Size: return std::to_string(*static_cast<std::uint64_t*>(f));
        case EnvType::Bool: return *static_cast<bool*>(f) ? "1" : "0";
        case EnvType::Int: return std::to_string(*static_cast<std::int64_t*>(f));
        case EnvType::String: return *static_cast<std::string*>(f);
        case EnvType::Enum: return d.choices.at(*static_cast<std::uint8_t*>(f));
        }
    }
    return {};
}

std::string env_reference(bool markdown, const Config* current) {
    std::string out;
    if (markdown) {
        out += "# vkshmem environment variables\n\n";
        out += "Generated by `vkshmem-info -e --markdown` from the library's one env table "
               "(`src/core/env_table.def`). Sizes take the suffixes k, m, g, t (powers of 1024). "
               "The deprecated `SMA_*` spellings of the `SHMEM_*` variables are honoured. An unknown "
               "`VKSHMEM_*` variable is warned about at init, with the nearest valid name. A variable of "
               "type *one of* takes only the values listed (in any case); another value ends the job at init "
               "with the list.\n";
        std::string cat;
        for (const Row& row : k_rows) {
            if (cat != row.desc.category) {
                cat = row.desc.category;
                out += fmt::format("\n## {}\n\n| Variable | Type | Default | Description |\n|---|---|---|---|\n", cat);
            }
            std::string type = env_type_name(row.desc.type);
            if (row.desc.type == EnvType::Enum) {
                type = "one of";
                for (std::size_t i = 0; i < row.desc.choices.size(); ++i)
                    type += fmt::format("{} `{}`", i ? "," : "", row.desc.choices[i]);
            }
            out += fmt::format("| `{}` | {} | `{}` | {} |\n", row.desc.name, type, row.desc.default_text,
                               row.desc.doc);
        }
        return out;
    }
    std::string cat;
    for (const Row& row : k_rows) {
        if (cat != row.desc.category) {
            cat = row.desc.category;
            out += fmt::format("{}:\n", cat);
        }
        std::string val = current ? value_text(*current, row.desc) : row.desc.default_text;
        out += fmt::format("  {:<26} {:<7} {:<12} {}\n", row.desc.name, env_type_name(row.desc.type),
                           val.empty() ? "(unset)" : val, row.desc.doc);
        if (row.desc.type == EnvType::Enum)
            out += fmt::format("  {:<26} {:<7} {:<12} values: {}\n", "", "", "", env_choices_text(row.desc));
    }
    return out;
}

} // namespace vkshmem
