/* SPDX-License-Identifier: BSL-1.0 */
/* ofi-raw-perf: the raw libfabric figures vkshmem's libfabric transport is compared with
 * (bench/network.sh --transport ofi). Two processes on this machine, one RDM endpoint each, the
 * same hints vkshmem uses (RMA, atomics, FI_DELIVERY_COMPLETE); they swap addresses and memory
 * keys through two files in DIR. Rank 0 runs the test, one operation in flight at a time (the
 * semantics of a blocking put or a fetching atomic), each waited for by its completion; rank 1
 * only progresses until rank 0 tells it to stop. Rank 0 prints "TEST SIZE VALUE" with VALUE in
 * microseconds per operation (put, fadd, fadd_nbi) or MB/s (bw). fadd_nbi posts 64 fetching atomics
 * (into distinct result words) before waiting for their 64 completions: the provider's rate for
 * vkshmem's fetch_add_nbi over native atomics.
 *
 *   ofi-raw-perf PROVIDER RANK DIR put|fadd|fadd_nbi|bw SIZE ITERS
 */
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (16u << 20)

static struct fid_ep *ep;
static struct fid_cq *cq;

static void die(const char *what, long rc) {
    fprintf(stderr, "ofi-raw-perf: %s: %s\n", what, fi_strerror((int)(rc < 0 ? -rc : rc)));
    exit(1);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Waits for one completion (every operation here generates one). */
static void wait_one(void) {
    struct fi_cq_entry e;
    for (;;) {
        ssize_t got = fi_cq_read(cq, &e, 1);
        if (got == 1) return;
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(cq, &err, 0);
            die("completion", err.err);
        }
    }
}

struct card { /* what each rank writes to DIR/rankN */
    char name[256];
    size_t name_len;
    uint64_t base, key;
};

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: ofi-raw-perf PROVIDER RANK DIR put|fadd|fadd_nbi|bw SIZE ITERS\n");
        return 2;
    }
    const int rank = atoi(argv[2]);
    const char *dir = argv[3], *test = argv[4];
    const size_t size = strtoull(argv[5], NULL, 0);
    long iters = atol(argv[6]);
    if (size == 0 || size > BUF_BYTES / 2) die("SIZE", FI_EINVAL);

    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->caps = FI_RMA | FI_ATOMIC;
    hints->ep_attr->type = FI_EP_RDM;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    hints->fabric_attr->prov_name = strdup(argv[1]);
    long rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
    if (rc) die("fi_getinfo", rc);
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    if ((rc = fi_fabric(info->fabric_attr, &fabric, NULL))) die("fi_fabric", rc);
    if ((rc = fi_domain(fabric, info, &domain, NULL))) die("fi_domain", rc);
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    if ((rc = fi_av_open(domain, &ava, &av, NULL))) die("fi_av_open", rc);
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    if ((rc = fi_cq_open(domain, &cqa, &cq, NULL))) die("fi_cq_open", rc);
    if ((rc = fi_endpoint(domain, info, &ep, NULL))) die("fi_endpoint", rc);
    if ((rc = fi_ep_bind(ep, &av->fid, 0)) || (rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (rc = fi_enable(ep)))
        die("endpoint setup", rc);
    unsigned char *buf = aligned_alloc(4096, BUF_BYTES);
    memset(buf, 0, BUF_BYTES);
    struct fid_mr *mr;
    if ((rc = fi_mr_reg(domain, buf, BUF_BYTES, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0, &mr,
                        NULL)))
        die("fi_mr_reg", rc);
    if (info->domain_attr->mr_mode & FI_MR_ENDPOINT)
        if ((rc = fi_mr_bind(mr, &ep->fid, 0)) || (rc = fi_mr_enable(mr))) die("fi_mr_bind", rc);
    void *desc = fi_mr_desc(mr);
    const int virt = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;

    /* Swap cards through DIR. */
    struct card mine = {.name_len = sizeof mine.name, .base = virt ? (uint64_t)(uintptr_t)buf : 0, .key = fi_mr_key(mr)};
    if ((rc = fi_getname(&ep->fid, mine.name, &mine.name_len))) die("fi_getname", rc);
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/rank%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(&mine, sizeof mine, 1, f) != 1 || fclose(f) || rename(tmp, path)) die("writing the card", FI_EIO);
    struct card peer;
    snprintf(path, sizeof path, "%s/rank%d", dir, 1 - rank);
    for (int tries = 0;; ++tries) {
        f = fopen(path, "rb");
        if (f && fread(&peer, sizeof peer, 1, f) == 1) break;
        if (f) fclose(f);
        if (tries > 30000) die("waiting for the other rank's card", FI_ETIMEDOUT);
        usleep(1000);
    }
    fclose(f);
    fi_addr_t other;
    if (fi_av_insert(av, peer.name, 1, &other, 0, NULL) != 1) die("fi_av_insert", FI_EINVAL);

    volatile uint64_t *stop = (volatile uint64_t *)(buf + BUF_BYTES - 8);
    if (rank == 1) { /* progress until rank 0 writes the stop word */
        struct fi_cq_entry e;
        while (*stop == 0) (void)fi_cq_read(cq, &e, 1);
        return 0;
    }
    unsigned char *src = buf, *dst_off = (unsigned char *)(uintptr_t)(BUF_BYTES / 2);
    uint64_t operand = 1, result = 0;
    struct fi_context2 ctx;
    double t0 = 0;
    enum { WINDOW = 64 };
    const int window = strcmp(test, "fadd_nbi") == 0;
    if (window) iters = iters < WINDOW ? WINDOW : iters - iters % WINDOW;
    struct fi_context2 ctxs[WINDOW];
    uint64_t *results = (uint64_t *)(buf + BUF_BYTES - 4096); /* registered, beside the stop word */
    /* Whole windows, a tenth of them (at least one) to warm up; the clock starts at i == 0. */
    for (long i = -(iters / 10 / WINDOW + 1) * WINDOW; window && i < iters; i += WINDOW) {
        if (i == 0) t0 = now_us();
        for (int w = 0; w < WINDOW; ++w) {
            while ((rc = fi_fetch_atomic(ep, &operand, 1, desc, &results[w], desc, other, peer.base, peer.key,
                                         FI_UINT64, FI_SUM, &ctxs[w])) == -FI_EAGAIN)
                (void)fi_cq_read(cq, NULL, 0);
            if (rc) die("posting", rc);
        }
        for (int w = 0; w < WINDOW; ++w) wait_one();
    }
    for (long i = -iters / 10 - 1; !window && i < iters; ++i) { /* a tenth of the iterations to warm up */
        if (i == 0) t0 = now_us();
        do {
            if (strcmp(test, "fadd") == 0)
                rc = fi_fetch_atomic(ep, &operand, 1, desc, &result, desc, other, peer.base, peer.key, FI_UINT64,
                                     FI_SUM, &ctx);
            else
                rc = fi_write(ep, src, size, desc, other, peer.base + (uint64_t)(uintptr_t)dst_off, peer.key, &ctx);
            if (rc == -FI_EAGAIN) (void)fi_cq_read(cq, NULL, 0);
        } while (rc == -FI_EAGAIN);
        if (rc) die("posting", rc);
        wait_one();
    }
    const double us = now_us() - t0;
    if (strcmp(test, "bw") == 0) printf("%s %zu %.1f\n", test, size, (double)size * iters / us);
    else printf("%s %zu %.3f\n", test, size, us / iters);
    uint64_t *one = (uint64_t *)(buf + BUF_BYTES - 16); /* registered: FI_MR_LOCAL providers need that */
    *one = 1;
    do rc = fi_write(ep, one, 8, desc, other, peer.base + BUF_BYTES - 8, peer.key, &ctx);
    while (rc == -FI_EAGAIN && fi_cq_read(cq, NULL, 0) <= 0);
    if (rc == 0) wait_one();
    return 0;
}
