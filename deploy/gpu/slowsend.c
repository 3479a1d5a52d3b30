/*
 * A slow link out of one process, for fault_workload.py --mode net: an LD_PRELOAD shim around send(2) and
 * sendmsg(2) that, while switched on, busy-waits a set number of microseconds before every call that hands the
 * kernel more than 1 KiB (NCCL's socket transport moves its data with send(); its small control messages pass
 * unchanged). Off (0 us) until the process calls flowscope_slowsend_set, so it can be preloaded into every rank
 * and switched on in the faulty one only (the workload does it through ctypes).
 *
 *   gcc -O2 -Wall -shared -fPIC -o slowsend.so deploy/gpu/slowsend.c -ldl
 *   LD_PRELOAD=$PWD/slowsend.so torchrun ... fault_workload.py --mode net --slow-us 100 ...
 *
 * The wait spins on CLOCK_MONOTONIC rather than sleeping: a sleep of tens of microseconds overshoots by the
 * scheduler's slack, and a spinning sender is what a slow NIC or a busy host looks like from the peer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#define SLOWSEND_MIN_BYTES 1024

typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

static send_fn next_send;
static sendmsg_fn next_sendmsg;
static unsigned delay_us;                /* read and written with __atomic builtins */
static unsigned long long delayed_calls; /* calls that waited, for the workload's log */

__attribute__((constructor)) static void slowsend_init(void)
{
    next_send = (send_fn)dlsym(RTLD_NEXT, "send");
    next_sendmsg = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
}

/* Sets the delay (0 switches the shim off) and returns the previous one. */
__attribute__((visibility("default"))) unsigned flowscope_slowsend_set(unsigned us)
{
    return __atomic_exchange_n(&delay_us, us, __ATOMIC_SEQ_CST);
}

/* How many calls have waited so far. */
__attribute__((visibility("default"))) unsigned long long flowscope_slowsend_delayed(void)
{
    return __atomic_load_n(&delayed_calls, __ATOMIC_RELAXED);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void maybe_wait(size_t bytes)
{
    const unsigned us = __atomic_load_n(&delay_us, __ATOMIC_RELAXED);
    if (us == 0 || bytes <= SLOWSEND_MIN_BYTES)
    {
        return;
    }
    const long long until = now_ns() + (long long)us * 1000LL;
    while (now_ns() < until)
    {
        __builtin_ia32_pause();
    }
    __atomic_fetch_add(&delayed_calls, 1, __ATOMIC_RELAXED);
}

static send_fn resolve_send(void)
{
    if (next_send == NULL)
    {
        next_send = (send_fn)dlsym(RTLD_NEXT, "send");
    }
    return next_send;
}

static sendmsg_fn resolve_sendmsg(void)
{
    if (next_sendmsg == NULL)
    {
        next_sendmsg = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
    }
    return next_sendmsg;
}

__attribute__((visibility("default"))) ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    maybe_wait(len);
    return resolve_send()(fd, buf, len, flags);
}

__attribute__((visibility("default"))) ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    size_t bytes = 0;
    for (size_t i = 0; msg != NULL && i < (size_t)msg->msg_iovlen; i++)
    {
        bytes += msg->msg_iov[i].iov_len;
    }
    maybe_wait(bytes);
    return resolve_sendmsg()(fd, msg, flags);
}
