// SPDX-License-Identifier: BSL-1.0
// Configuration: one env table (env_table.def), parsed once at init.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkshmem {

enum class EnvType { Size, Bool, Int, String, Enum };

// The enumerated variables' types (DebugLevel, DeviceRoute, Network, ...):
// the enumerators are the allowed values, in the table's order.
#define VKSHMEM_ENV(NAME, TYPE, DEF, CAT, DOC)
#define VKSHMEM_ENV_ENUM(NAME, ENUM, DEF, CAT, DOC, ...) enum class ENUM : std::uint8_t { __VA_ARGS__ };
#include "core/env_table.def"
#undef VKSHMEM_ENV
#undef VKSHMEM_ENV_ENUM

struct Config {
#define VKSHMEM_ENV_Size std::uint64_t
#define VKSHMEM_ENV_Bool bool
#define VKSHMEM_ENV_Int std::int64_t
#define VKSHMEM_ENV_String std::string
#define VKSHMEM_ENV(NAME, TYPE, DEF, CAT, DOC) VKSHMEM_ENV_##TYPE NAME{};
#define VKSHMEM_ENV_ENUM(NAME, ENUM, DEF, CAT, DOC, ...) ENUM NAME{};
#include "core/env_table.def"
#undef VKSHMEM_ENV
#undef VKSHMEM_ENV_ENUM
#undef VKSHMEM_ENV_Size
#undef VKSHMEM_ENV_Bool
#undef VKSHMEM_ENV_Int
#undef VKSHMEM_ENV_String
};

struct EnvDesc {
    const char* name;
    EnvType type;
    const char* default_text;
    const char* category;
    const char* doc;
    // Enum: the allowed values in lower case, in enumerator order; empty otherwise.
    std::vector<std::string> choices;
};

// The text of an enumerated variable's value: to_text(Network::Auto) is "auto".
#define VKSHMEM_ENV(NAME, TYPE, DEF, CAT, DOC)
#define VKSHMEM_ENV_ENUM(NAME, ENUM, DEF, CAT, DOC, ...) std::string_view to_text(ENUM value);
#include "core/env_table.def"
#undef VKSHMEM_ENV
#undef VKSHMEM_ENV_ENUM
// "a, b or c": the allowed values of an enumerated variable, for messages.
std::string env_choices_text(const EnvDesc& d);

// The descriptor table, in env_table.def order.
std::span<const EnvDesc> env_table();
const char* env_type_name(EnvType t);

// Parses "512M", "4k", "1g", "123" (suffixes k/m/g/t, either case, powers of
// 1024, optional trailing 'b'/'B'). Returns nullopt on anything else.
std::optional<std::uint64_t> parse_size(std::string_view text);
std::optional<bool> parse_bool(std::string_view text);
std::optional<std::int64_t> parse_int(std::string_view text);

struct ConfigError {
    std::string variable;
    std::string message;
};

// Reads every table variable from the environment (a getenv-like lookup, so
// tests can pass their own). On a malformed value returns the error; the
// Config is left unchanged in that case.
std::optional<ConfigError> load_config(Config& cfg, const char* (*lookup)(const char*));

// Names of VKSHMEM_* variables in `environ` that are not in the table,
// each with the nearest valid name (edit distance), for the warning at init.
struct UnknownVar {
    std::string name;
    std::string suggestion;
};
std::vector<UnknownVar> unknown_variables(const std::vector<std::string>& environ_names);

// Current value of one variable as text (for SHMEM_INFO and vkshmem-info).
std::string value_text(const Config& cfg, const EnvDesc& d);

// The table rendered for people: plain text or Markdown (vkshmem-info -e).
std::string env_reference(bool markdown, const Config* current);

} // namespace vkshmem
