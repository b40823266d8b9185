// SPDX-License-Identifier: BSL-1.0
// Result<T> for setup code: a value, or an error that carries the message, the
// VkResult when Vulkan failed, and where the error was found.
#pragma once

#include <source_location>
#include <string>
#include <utility>
#include <variant>

namespace vkshmem {

struct Error {
    std::string message;
    int vk_result = 0; // VkResult, 0 when Vulkan is not involved
    std::source_location where = std::source_location::current();
};

inline Error make_error(std::string msg, int vk = 0, std::source_location w = std::source_location::current()) {
    return Error{std::move(msg), vk, w};
}

template <class T> class [[nodiscard]] Result {
public:
    Result(T v) : v_(std::move(v)) {}
    Result(Error e) : v_(std::move(e)) {}
    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() { return std::get<0>(v_); }
    T& operator*() { return value(); }
    T* operator->() { return &value(); }
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error e) : err_(std::move(e)), ok_(false) {}
    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { return err_; }

private:
    Error err_{};
    bool ok_ = true;
};

} // namespace vkshmem
