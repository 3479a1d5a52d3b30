/*
 * fs_test_util.h - what the C programs that drive the plugin as NCCL does share
 * (fs_harness.c, fs_rank.c): dying with a message, NCCL's logger, loading the
 * plugin's ncclProfiler_vN table. Define FS_PROGRAM (the name messages start
 * with) before including it.
 */
#ifndef FS_TEST_UTIL_H
#define FS_TEST_UTIL_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fs_nccl_abi.h"

#ifndef FS_PROGRAM
#error "define FS_PROGRAM before including fs_test_util.h"
#endif

static inline void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, FS_PROGRAM ": ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

/* The logger NCCL hands to the plugin's init: WARN and LOG lines on stderr. */
static inline void logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "NCCL %s flags=0x%lx %s:%d ", level == FS_NCCL_LOG_WARN ? "WARN" : "LOG", flags, file,
            line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/*
 * The plugin's ncclProfiler_v<abi> table, as NCCL finds it (dlopen, dlsym); dies when it is not there. The
 * library's handle goes to *lib_out (to dlclose it).
 */
static inline void* load_plugin(const char* path, int abi, void** lib_out) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("dlopen %s: %s", path, dlerror());
    char sym[32];
    snprintf(sym, sizeof sym, "ncclProfiler_v%d", abi);
    void* s = dlsym(lib, sym);
    if (!s) die("dlsym %s: %s", sym, dlerror());
    *lib_out = lib;
    return s;
}

#endif
