// SPDX-License-Identifier: BSL-1.0
// PMIx bootstrap: rank and size from the launcher, node-local peers, and
// blob exchange through PMIx_Put/Commit/Fence/Get. Facts that shaped this
// (measured with Debian's PMIx 4.2 under Open MPI's mpirun): the rank comes
// from the pmix_proc_t that PMIx_Init fills in, PMIX_JOB_SIZE is the job size
// (PMIX_UNIV_SIZE is the slot count), and without a server PMIx_Init fails
// with PMIX_ERR_UNREACH.
#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sstream>
#include <unistd.h>

namespace vkshmem {

std::unique_ptr<Bootstrap> make_singleton();

namespace {

void on_lost_launcher(std::size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t*, std::size_t, pmix_info_t*,
                      std::size_t, pmix_event_notification_cbfunc_fn_t, void*);

class Pmix final : public Bootstrap {
public:
    static Result<std::unique_ptr<Bootstrap>> create() {
        auto p = std::unique_ptr<Pmix>(new Pmix);
        // The connection to the launcher lasts until the process exits, not
        // until shmem_finalize: a PE that finalizes while its peers already
        // meet again in a later shmem_init (1.6 allows it) would otherwise
        // leave their fence half-finished (PARTIAL SUCCESS). So PMIx_Init runs
        // once per process and PMIx_Finalize once, at exit.
        static pmix_proc_t me{};
        static bool connected = false;
        if (!connected) {
            pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
            if (rc != PMIX_SUCCESS)
                return make_error(fmt::format("PMIx_Init failed ({}): the launcher set PMIx variables but its "
                                              "server cannot be reached; start the program with oshrun or "
                                              "`srun --mpi=pmix`",
                                              PMIx_Error_string(rc)));
            connected = true;
            std::atexit([] { PMIx_Finalize(nullptr, 0); });
            // Losing the launcher (mpirun killed) would leave this PE spinning
            // in a barrier forever: end it instead.
            pmix_status_t lost = PMIX_ERR_LOST_CONNECTION;
            PMIx_Register_event_handler(&lost, 1, nullptr, 0, on_lost_launcher, nullptr, nullptr);
        }
        p->me_ = me;
        p->kind_ = "pmix";
        pmix_status_t rc;
        p->rank_ = static_cast<int>(p->me_.rank);
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, p->me_.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t* val = nullptr;
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &val);
        if (rc != PMIX_SUCCESS) return make_error(fmt::format("PMIx_Get(PMIX_JOB_SIZE): {}", PMIx_Error_string(rc)));
        p->size_ = static_cast<int>(val->data.uint32);
        PMIX_VALUE_RELEASE(val);

        p->local_peers_.clear();
        rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, nullptr, 0, &val);
        if (rc == PMIX_SUCCESS && val->type == PMIX_STRING && val->data.string) {
            std::stringstream ss(val->data.string);
            std::string tok;
            while (std::getline(ss, tok, ',')) p->local_peers_.push_back(std::atoi(tok.c_str()));
            PMIX_VALUE_RELEASE(val);
        }
        if (p->local_peers_.empty()) p->local_peers_.push_back(p->rank_);

        // The job secret: PE 0 draws it; PMIx shares it only within this job.
        std::vector<std::uint8_t> mine = random_bytes(16);
        std::vector<std::uint8_t> all(16 * static_cast<std::size_t>(p->size_));
        if (auto r = p->allgather(mine.data(), 16, all.data()); !r) return r.error();
        p->secret_.assign(all.begin(), all.begin() + 16);
        return std::unique_ptr<Bootstrap>(std::move(p));
    }

    ~Pmix() override = default; // PMIx_Finalize runs at exit (create())

    Result<void> allgather(const void* in, std::size_t len, void* out) override {
        std::string key = fmt::format("vkshmem.ag.{}", g_allgathers++);
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = static_cast<char*>(const_cast<void*>(in));
        v.data.bo.size = len;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
        if (rc != PMIX_SUCCESS) return make_error(fmt::format("PMIx_Put: {}", PMIx_Error_string(rc)));
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
            return make_error(fmt::format("PMIx_Commit: {}", PMIx_Error_string(rc)));
        pmix_info_t info;
        bool collect = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Fence(&wild, 1, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) return make_error(fmt::format("PMIx_Fence: {}", PMIx_Error_string(rc)));
        for (int r = 0; r < size_; ++r) {
            auto* dst = static_cast<char*>(out) + static_cast<std::size_t>(r) * len;
            if (r == rank_) {
                std::memcpy(dst, in, len);
                continue;
            }
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me_.nspace, static_cast<pmix_rank_t>(r));
            pmix_value_t* got = nullptr;
            rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &got);
            if (rc != PMIX_SUCCESS)
                return make_error(fmt::format("PMIx_Get({}) from rank {}: {}", key, r, PMIx_Error_string(rc)));
            if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len) {
                PMIX_VALUE_RELEASE(got);
                return make_error(fmt::format("rank {} contributed a blob of another size to {}: every PE must "
                                              "run the same program and vkshmem version",
                                              r, key));
            }
            std::memcpy(dst, got->data.bo.bytes, len);
            PMIX_VALUE_RELEASE(got);
        }
        return {};
    }

    Result<void> barrier() override {
        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
        pmix_status_t rc = PMIx_Fence(&wild, 1, nullptr, 0);
        if (rc != PMIX_SUCCESS) return make_error(fmt::format("PMIx_Fence: {}", PMIx_Error_string(rc)));
        return {};
    }

    [[noreturn]] void abort(int status, const char* msg) override {
        // PMIx_Abort asks the launcher to end every process of the job; our
        // own exit follows so a launcher that ignores it still sees a failure.
        PMIx_Abort(status, msg ? msg : "vkshmem abort", nullptr, 0);
        _exit(status ? status : 1);
    }

private:
    Pmix() = default;
    pmix_proc_t me_{};
    // Numbers the allgathers' keys across initializations: the PMIx server
    // keeps a key's value after PMIx_Finalize, so a key used again by a later
    // shmem_init would not be the new one.
    static inline unsigned g_allgathers = 0;
};

void on_lost_launcher(std::size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t*, std::size_t, pmix_info_t*,
                      std::size_t, pmix_event_notification_cbfunc_fn_t, void*) {
    log_detail::emit(LogLevel::Error, "lost the connection to the launcher (mpirun ended?); ending this PE");
    _exit(1);
}

bool env_set(const char* n) { return std::getenv(n) != nullptr; }

int env_int(const char* n) {
    const char* v = std::getenv(n);
    return v ? std::atoi(v) : 0;
}

} // namespace

Result<std::unique_ptr<Bootstrap>> make_bootstrap() {
    if (env_set("PMIX_NAMESPACE") || env_set("PMIX_RANK")) return Pmix::create();
    // A launcher without PMIx: it would start N copies that each think they
    // are alone. Say how to start the job instead of running N singletons.
    struct {
        const char* var;
        const char* launcher;
    } const others[] = {{"PMI_SIZE", "a PMI-1/PMI-2 launcher (MPICH hydra or srun --mpi=pmi2)"},
                        {"SLURM_NTASKS", "srun without PMIx"},
                        {"OMPI_COMM_WORLD_SIZE", "an Open MPI launcher without PMIx"},
                        {"MPI_LOCALNRANKS", "MPICH hydra"}};
    for (const auto& o : others) {
        if (env_int(o.var) > 1)
            return make_error(fmt::format("started by {} ({}={}), which does not provide PMIx; start vkshmem "
                                          "programs with oshrun (Open MPI's mpirun) or `srun --mpi=pmix`",
                                          o.launcher, o.var, std::getenv(o.var)));
    }
    return make_singleton();
}

} // namespace vkshmem
