/* fs_config.c - environment variables, parsed once; bad values WARN + default. */
#include "fs_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs_ring_layout.h"

void fs_log_warn(fs_nccl_logger_t logfn, const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (logfn)
        logfn(FS_NCCL_LOG_WARN, FS_NCCL_PROFILE, __FILE__, __LINE__, "flowscope: %s", buf);
    else
        fprintf(stderr, "flowscope WARN %s\n", buf);
}

static const struct {
    const char* name;
    uint32_t bits;
} fs_mask_names[] = {
    {"group", FS_EV_GROUP},
    {"coll", FS_EV_COLL},
    {"p2p", FS_EV_P2P},
    {"proxyop", FS_EV_PROXY_OP},
    {"proxystep", FS_EV_PROXY_STEP},
    {"proxyctrl", FS_EV_PROXY_CTRL},
    {"kernelch", FS_EV_KERNEL_CH},
    {"netplugin", FS_EV_NET_PLUGIN},
    {"groupapi", FS_EV_GROUP_API},
    {"collapi", FS_EV_COLL_API},
    {"p2papi", FS_EV_P2P_API},
    {"kernellaunch", FS_EV_KERNEL_LAUNCH},
    {"cecoll", FS_EV_CE_COLL},
    {"cesync", FS_EV_CE_SYNC},
    {"cebatch", FS_EV_CE_BATCH},
    {"all", FS_CONFIG_ALL_MASK},
    {"default", FS_CONFIG_DEFAULT_MASK},
};

int fs_config_parse_mask(const char* s, uint32_t* out) {
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    if (isdigit((unsigned char)*s)) {
        char* end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0); /* decimal, 0x hex (and 0 octal) */
        while (isspace((unsigned char)*end)) end++;
        if (errno || *end || v & ~(unsigned long long)FS_CONFIG_ALL_MASK) return -1;
        *out = (uint32_t)v;
        return 0;
    }
    uint32_t mask = 0;
    const char* p = s;
    while (*p) {
        const char* e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && isspace((unsigned char)*p)) {
            p++;
            n--;
        }
        while (n && isspace((unsigned char)p[n - 1])) n--;
        int found = 0;
        for (size_t i = 0; i < sizeof fs_mask_names / sizeof fs_mask_names[0]; i++) {
            if (strlen(fs_mask_names[i].name) == n && strncasecmp(p, fs_mask_names[i].name, n) == 0) {
                mask |= fs_mask_names[i].bits;
                found = 1;
                break;
            }
        }
        if (!found) return -1;
        if (!e) break;
        p = e + 1;
    }
    *out = mask;
    return 0;
}

int fs_config_parse_size(const char* s, uint64_t* bytes) {
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char* end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (shift && (*end == 'B' || *end == 'b'))
        end++; /* 16MB, 16Mb */
    else if (shift && (*end == 'i') && (end[1] == 'B' || end[1] == 'b'))
        end += 2; /* 16MiB */
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    if (v > (UINT64_MAX >> shift)) return -1;
    *bytes = (uint64_t)v << shift;
    return 0;
}

uint64_t fs_config_slots_for_bytes(uint64_t bytes, uint32_t lanes) {
    uint64_t slots = bytes / FS_RING_RECORD_SIZE;
    if (slots < FS_CONFIG_MIN_SLOTS * lanes) slots = FS_CONFIG_MIN_SLOTS * lanes;
    if (slots > FS_CONFIG_MAX_RING_BYTES / FS_RING_RECORD_SIZE)
        slots = FS_CONFIG_MAX_RING_BYTES / FS_RING_RECORD_SIZE;
    return 1ULL << (63 - __builtin_clzll(slots)); /* round down to a power of two */
}

int fs_config_parse_lanes(const char* s, uint32_t* lanes) {
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char* end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || *end || v < 1 || v > FS_CONFIG_MAX_RING_LANES) return -1;
    uint32_t p = 1u << (31 - __builtin_clz((unsigned)v)); /* round down to a power of two */
    *lanes = p;
    return p == v ? 0 : 1;
}

void fs_config_load(fs_config_t* cfg, fs_nccl_logger_t logfn) {
    const char* v;
    cfg->event_mask = FS_CONFIG_DEFAULT_MASK;
    cfg->ring_lanes = FS_CONFIG_DEFAULT_RING_LANES;
    cfg->ring_slots = fs_config_slots_for_bytes(FS_CONFIG_DEFAULT_RING_BYTES, cfg->ring_lanes);
    cfg->prefer_tsc = 1;
    cfg->disabled = 0;
    cfg->kernel_sampling = FS_CONFIG_DEFAULT_KERNEL_SAMPLING;
    snprintf(cfg->ring_dir, sizeof cfg->ring_dir, "%s", FS_CONFIG_DEFAULT_RING_DIR);

    if ((v = getenv("FLOWSCOPE_DISABLE")) && *v) {
        if (strcmp(v, "1") == 0)
            cfg->disabled = 1;
        else if (strcmp(v, "0") != 0)
            fs_log_warn(logfn, "FLOWSCOPE_DISABLE='%s' is not 0 or 1; using 0 (profiling on)", v);
    }
    if ((v = getenv("FLOWSCOPE_EVENT_MASK")) && *v) {
        uint32_t m;
        if (fs_config_parse_mask(v, &m) == 0)
            cfg->event_mask = m;
        else
            fs_log_warn(logfn,
                        "FLOWSCOPE_EVENT_MASK='%s' is not a number within 0x7FFF or a list of event "
                        "names; using the default 0x%X",
                        v, FS_CONFIG_DEFAULT_MASK);
    }
    if ((v = getenv("FLOWSCOPE_RING_DIR")) && *v) {
        if (strlen(v) < sizeof cfg->ring_dir - 64)
            snprintf(cfg->ring_dir, sizeof cfg->ring_dir, "%s", v);
        else
            fs_log_warn(logfn, "FLOWSCOPE_RING_DIR is longer than %zu bytes; using %s",
                        sizeof cfg->ring_dir - 64, FS_CONFIG_DEFAULT_RING_DIR);
    }
    if ((v = getenv("FLOWSCOPE_RING_LANES")) && *v) {
        uint32_t lanes = 0;
        int rc = fs_config_parse_lanes(v, &lanes);
        if (rc < 0)
            fs_log_warn(logfn, "FLOWSCOPE_RING_LANES='%s' is not a power of two in [1, %u]; using %u", v,
                        FS_CONFIG_MAX_RING_LANES, FS_CONFIG_DEFAULT_RING_LANES);
        else {
            if (rc > 0)
                fs_log_warn(logfn, "FLOWSCOPE_RING_LANES='%s' is not a power of two; using %u", v, lanes);
            cfg->ring_lanes = lanes;
        }
    }
    uint64_t bytes = FS_CONFIG_DEFAULT_RING_BYTES;
    if ((v = getenv("FLOWSCOPE_RING_SIZE")) && *v) {
        if (fs_config_parse_size(v, &bytes) != 0) {
            fs_log_warn(logfn, "FLOWSCOPE_RING_SIZE='%s' is not a size (e.g. 64M); using %lluM", v,
                        FS_CONFIG_DEFAULT_RING_BYTES >> 20);
            bytes = FS_CONFIG_DEFAULT_RING_BYTES;
        } else if (bytes < FS_CONFIG_MIN_SLOTS * cfg->ring_lanes * FS_RING_RECORD_SIZE ||
                   bytes > FS_CONFIG_MAX_RING_BYTES) {
            fs_log_warn(
                logfn,
                "FLOWSCOPE_RING_SIZE='%s' is outside [%lluK (16 slots per lane, %u lanes), 4G]; "
                "using %llu slots",
                v, (unsigned long long)(FS_CONFIG_MIN_SLOTS * cfg->ring_lanes * FS_RING_RECORD_SIZE >> 10),
                cfg->ring_lanes, (unsigned long long)fs_config_slots_for_bytes(bytes, cfg->ring_lanes));
        }
    }
    cfg->ring_slots = fs_config_slots_for_bytes(bytes, cfg->ring_lanes);
    if ((v = getenv("FLOWSCOPE_KERNEL_SAMPLING")) && *v) {
        char* end = NULL;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || !end || *end || *v == '-' || n > FS_CONFIG_MAX_KERNEL_SAMPLING)
            fs_log_warn(logfn, "FLOWSCOPE_KERNEL_SAMPLING='%s' is not a whole number within 0..%u; using %u",
                        v, FS_CONFIG_MAX_KERNEL_SAMPLING, FS_CONFIG_DEFAULT_KERNEL_SAMPLING);
        else
            cfg->kernel_sampling = (uint32_t)n;
    }
    if ((v = getenv("FLOWSCOPE_CLOCK")) && *v) {
        if (strcasecmp(v, "tsc") == 0)
            cfg->prefer_tsc = 1;
        else if (strcasecmp(v, "monotonic") == 0)
            cfg->prefer_tsc = 0;
        else
            fs_log_warn(logfn, "FLOWSCOPE_CLOCK='%s' is not tsc or monotonic; using tsc", v);
    }
}
