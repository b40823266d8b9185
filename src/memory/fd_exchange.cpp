// SPDX-License-Identifier: BSL-1.0
#include "memory/fd_exchange.hpp"

#include "bootstrap/bootstrap.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace vkshmem {
namespace {

constexpr std::size_t kSecretLen = 16;

struct Hello {
    std::uint8_t secret[kSecretLen];
    std::int32_t rank;
};

sockaddr_un abstract_addr(const std::string& name, socklen_t& len) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    a.sun_path[0] = '\0';
    std::memcpy(a.sun_path + 1, name.data(), std::min(name.size(), sizeof a.sun_path - 2));
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    return a;
}

bool wait_fd(int fd, short events, int timeout_s) {
    pollfd p{fd, events, 0};
    int r;
    do r = poll(&p, 1, timeout_s * 1000);
    while (r < 0 && errno == EINTR);
    return r > 0;
}

bool read_full(int fd, void* buf, std::size_t n, int timeout_s) {
    auto* p = static_cast<char*>(buf);
    while (n) {
        if (!wait_fd(fd, POLLIN, timeout_s)) return false;
        ssize_t r = ::recv(fd, p, n, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            return false;
        }
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

} // namespace

void FdBundle::close_all() {
    for (int& fd : fds)
        if (fd >= 0) ::close(fd), fd = -1;
}

FdServer::~FdServer() {
    if (thread_.joinable()) thread_.join();
    if (sock_ >= 0) ::close(sock_);
}

Result<void> FdServer::listen(const std::vector<std::uint8_t>& secret, int my_rank) {
    secret_ = secret;
    auto salt = random_bytes(8);
    std::string hex;
    for (auto b : salt) hex += fmt::format("{:02x}", b);
    name_ = fmt::format("vkshmem.{}.{}.{}", getpid(), my_rank, hex);
    sock_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock_ < 0) return make_error(fmt::format("socket(AF_UNIX): {}", std::strerror(errno)));
    socklen_t len;
    sockaddr_un a = abstract_addr(name_, len);
    if (::bind(sock_, reinterpret_cast<sockaddr*>(&a), len) != 0)
        return make_error(fmt::format("bind of abstract socket @{}: {}", name_, std::strerror(errno)));
    if (::listen(sock_, 128) != 0) return make_error(fmt::format("listen: {}", std::strerror(errno)));
    return {};
}

void FdServer::start(int expected, Provider provider, int timeout_s) {
    thread_ = std::thread([this, expected, provider = std::move(provider), timeout_s] {
        int served = 0;
        while (served < expected) {
            if (!wait_fd(sock_, POLLIN, timeout_s)) {
                error_ = fmt::format("{} of {} node-local peers did not ask for this PE's heaps within {} s "
                                     "(VKSHMEM_INIT_TIMEOUT)",
                                     expected - served, expected, timeout_s);
                return;
            }
            int c = ::accept4(sock_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            ucred cred{};
            socklen_t clen = sizeof cred;
            Hello h{};
            bool ok = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == getuid() &&
                      read_full(c, &h, sizeof h, timeout_s) &&
                      std::memcmp(h.secret, secret_.data(), kSecretLen) == 0;
            if (!ok) {
                // A stranger (other uid, wrong secret): drop it and keep serving.
                ::close(c);
                continue;
            }
            FdBundle b = provider(h.rank);
            std::int32_t count = 0;
            for (int fd : b.fds) count += fd >= 0;
            char ctrl[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
            std::int32_t present[kMaxPassedFds];
            int send_fds[kMaxPassedFds];
            int n = 0;
            for (int i = 0; i < kMaxPassedFds; ++i) {
                present[i] = b.fds[i] >= 0;
                if (b.fds[i] >= 0) send_fds[n++] = b.fds[i];
            }
            iovec iov{present, sizeof present};
            msghdr m{};
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            if (n) {
                m.msg_control = ctrl;
                m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                cmsghdr* cm = CMSG_FIRSTHDR(&m);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
                std::memcpy(CMSG_DATA(cm), send_fds, sizeof(int) * n);
            }
            ssize_t r;
            do r = ::sendmsg(c, &m, MSG_NOSIGNAL);
            while (r < 0 && errno == EINTR);
            b.close_all();
            ::close(c);
            if (r < 0) {
                error_ = fmt::format("sending heap fds to PE {}: {}", h.rank, std::strerror(errno));
                return;
            }
            ++served;
        }
    });
}

Result<void> FdServer::join() {
    if (thread_.joinable()) thread_.join();
    if (sock_ >= 0) ::close(sock_), sock_ = -1;
    if (!error_.empty()) return make_error(error_);
    return {};
}

Result<FdBundle> fetch_fds(const std::string& server_name, const std::vector<std::uint8_t>& secret, int my_rank,
                           int timeout_s) {
    int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return make_error(fmt::format("socket(AF_UNIX): {}", std::strerror(errno)));
    socklen_t len;
    sockaddr_un a = abstract_addr(server_name, len);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), len) != 0) {
        int e = errno;
        ::close(s);
        return make_error(fmt::format("connect to @{}: {}", server_name, std::strerror(e)));
    }
    Hello h{};
    std::memcpy(h.secret, secret.data(), kSecretLen);
    h.rank = my_rank;
    if (::send(s, &h, sizeof h, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof h)) {
        ::close(s);
        return make_error(fmt::format("send to @{}: {}", server_name, std::strerror(errno)));
    }
    if (!wait_fd(s, POLLIN, timeout_s)) {
        ::close(s);
        return make_error(fmt::format("no answer from @{} within {} s (VKSHMEM_INIT_TIMEOUT)", server_name, timeout_s));
    }
    std::int32_t present[kMaxPassedFds] = {};
    char ctrl[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
    iovec iov{present, sizeof present};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctrl;
    m.msg_controllen = sizeof ctrl;
    ssize_t r;
    do r = ::recvmsg(s, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (r < 0 && errno == EINTR);
    ::close(s);
    if (r != static_cast<ssize_t>(sizeof present))
        return make_error(fmt::format("the peer at @{} refused or closed the connection", server_name));
    FdBundle b;
    int got[kMaxPassedFds];
    int n = 0;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            n = static_cast<int>((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            std::memcpy(got, CMSG_DATA(cm), sizeof(int) * static_cast<std::size_t>(n));
        }
    int k = 0;
    for (int i = 0; i < kMaxPassedFds; ++i)
        if (present[i] && k < n) b.fds[i] = got[k++];
    return b;
}

} // namespace vkshmem
