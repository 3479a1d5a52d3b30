/*
 * fs_nccl_abi.h - flowscope's own declarations of the NCCL profiler plugin ABI
 * (versions 4, 5 and 6) and of the net-plugin event descriptors (IB v1,
 * socket v1).
 *
 * Written from the public facts of the NCCL profiler ABI (NVIDIA/nccl sources,
 * summarised in the project reference nccl-profiler-abi.md), not copied
 * from NVIDIA headers. Every size and offset the reference lists is checked by
 * a static assert at the bottom, so a wrong declaration fails the build.
 *
 * LP64 (x86-64 / aarch64 Linux) only.
 */
#ifndef FS_NCCL_ABI_H
#define FS_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ncclResult_t */
typedef enum {
    FS_NCCL_SUCCESS = 0,
    FS_NCCL_UNHANDLED_CUDA_ERROR = 1,
    FS_NCCL_SYSTEM_ERROR = 2,
    FS_NCCL_INTERNAL_ERROR = 3,
    FS_NCCL_INVALID_ARGUMENT = 4,
    FS_NCCL_INVALID_USAGE = 5,
    FS_NCCL_REMOTE_ERROR = 6,
    FS_NCCL_IN_PROGRESS = 7,
} fs_nccl_result_t;

/* ncclDebugLogLevel and the logger NCCL passes to init (v4+). */
enum {
    FS_NCCL_LOG_NONE = 0,
    FS_NCCL_LOG_VERSION = 1,
    FS_NCCL_LOG_WARN = 2,
    FS_NCCL_LOG_INFO = 3,
    FS_NCCL_LOG_ABORT = 4,
    FS_NCCL_LOG_TRACE = 5,
};
#define FS_NCCL_PROFILE 0x4000UL /* subsystem flag for profiler messages */

typedef void (*fs_nccl_logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                                 ...);

/* Event type bits (descriptor `type`, activation mask). */
enum {
    FS_EV_GROUP = 1 << 0,
    FS_EV_COLL = 1 << 1,
    FS_EV_P2P = 1 << 2,
    FS_EV_PROXY_OP = 1 << 3,
    FS_EV_PROXY_STEP = 1 << 4,
    FS_EV_PROXY_CTRL = 1 << 5,
    FS_EV_KERNEL_CH = 1 << 6,
    FS_EV_NET_PLUGIN = 1 << 7,
    FS_EV_GROUP_API = 1 << 8,
    FS_EV_COLL_API = 1 << 9,
    FS_EV_P2P_API = 1 << 10,
    FS_EV_KERNEL_LAUNCH = 1 << 11,
    FS_EV_CE_COLL = 1 << 12,
    FS_EV_CE_SYNC = 1 << 13,
    FS_EV_CE_BATCH = 1 << 14,
};
#define FS_EV_ALL_V4 0x00FFu
#define FS_EV_ALL_V5 0x0FFFu
#define FS_EV_ALL_V6 0x7FFFu

/* ncclProfilerEventState_t (one int enum shared by all versions). */
enum {
    FS_ST_PROXY_OP_SEND_POSTED = 0, /* 0..7 deprecated since v4 */
    FS_ST_PROXY_STEP_SEND_GPU_WAIT = 8,
    FS_ST_PROXY_STEP_SEND_WAIT = 9,
    FS_ST_PROXY_STEP_RECV_WAIT = 10,
    FS_ST_PROXY_STEP_RECV_FLUSH_WAIT = 11,
    FS_ST_PROXY_STEP_RECV_GPU_WAIT = 12,
    FS_ST_PROXY_CTRL_IDLE = 13,
    FS_ST_PROXY_CTRL_ACTIVE = 14,
    FS_ST_PROXY_CTRL_SLEEP = 15,
    FS_ST_PROXY_CTRL_WAKEUP = 16,
    FS_ST_PROXY_CTRL_APPEND = 17,
    FS_ST_PROXY_CTRL_APPEND_END = 18,
    FS_ST_PROXY_OP_IN_PROGRESS = 19,
    FS_ST_PROXY_STEP_SEND_PEER_WAIT = 20,
    FS_ST_NET_PLUGIN_UPDATE = 21,
    FS_ST_KERNEL_CH_STOP = 22,
    FS_ST_GROUP_START_API_STOP = 23,
    FS_ST_GROUP_END_API_START = 24,
    FS_ST_CE_COLL_START = 25, /* 25..30: v6, unused by NCCL */
    FS_ST_CE_BATCH_COMPLETE = 30,
};

/* ncclProfilerEventStateArgs_v4/v5/v6_t: an 8-byte union. */
typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void* data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
} fs_nccl_state_args_t;

/* ---- descriptor union members (offsets are from the union start, 24) ---- */

typedef struct {
    bool graphCaptured;
    int groupDepth;
} fs_nccl_group_api_t;

typedef struct {
    const char* func;
    size_t count;
    const char* datatype;
    int root;
    void* stream;
    bool graphCaptured;
} fs_nccl_coll_api_t;

typedef struct {
    const char* func;
    size_t count;
    const char* datatype;
    void* stream;
    bool graphCaptured;
} fs_nccl_p2p_api_t;

typedef struct {
    void* stream;
} fs_nccl_kernel_launch_t;

typedef struct {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
} fs_nccl_coll_v4_t;

typedef struct {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
    void* parentGroup;
} fs_nccl_coll_v5_t;

typedef struct {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
} fs_nccl_p2p_v4_t;

typedef struct {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void* parentGroup;
} fs_nccl_p2p_v5_t;

typedef struct {
    pid_t pid;
    uint8_t channelId;
    int peer;
    int nSteps;
    int chunkSize;
    int isSend;
} fs_nccl_proxy_op_t;

typedef struct {
    int step;
} fs_nccl_proxy_step_t;

typedef struct {
    uint8_t channelId;
    uint64_t pTimer;
} fs_nccl_kernel_ch_t;

typedef struct {
    int64_t id;
    void* data;
} fs_nccl_net_plugin_t;

typedef struct {
    uint64_t seqNumber;
    const char* func;
    const void* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    const char* syncStrategy;
    bool intraBatchSync;
    uint32_t batchSize;
    uint32_t numBatches;
    uint32_t ceSeqNum;
    void* stream;
} fs_nccl_ce_coll_t;

typedef struct {
    bool isComplete;
    int nRanks;
} fs_nccl_ce_sync_t;

typedef struct {
    int numOps;
    size_t totalBytes;
    bool useIntraSync;
} fs_nccl_ce_batch_t;

/* ---- descriptors ---- */

/* v4: `type` is a uint8_t (padded to 8), no API/CE members; 104 bytes. */
typedef struct {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        fs_nccl_coll_v4_t coll;
        fs_nccl_p2p_v4_t p2p;
        fs_nccl_proxy_op_t proxyOp;
        fs_nccl_proxy_step_t proxyStep;
        fs_nccl_kernel_ch_t kernelCh;
        fs_nccl_net_plugin_t netPlugin;
    };
} fs_nccl_descr_v4_t;

/* v5: `type` is a uint64_t; 112 bytes. */
typedef struct {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        fs_nccl_group_api_t groupApi;
        fs_nccl_coll_api_t collApi;
        fs_nccl_p2p_api_t p2pApi;
        fs_nccl_kernel_launch_t kernelLaunch;
        fs_nccl_coll_v5_t coll;
        fs_nccl_p2p_v5_t p2p;
        fs_nccl_proxy_op_t proxyOp;
        fs_nccl_proxy_step_t proxyStep;
        fs_nccl_kernel_ch_t kernelCh;
        fs_nccl_net_plugin_t netPlugin;
    };
} fs_nccl_descr_v5_t;

/* v6: v5 plus the copy-engine members; still 112 bytes. */
typedef struct {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        fs_nccl_group_api_t groupApi;
        fs_nccl_coll_api_t collApi;
        fs_nccl_p2p_api_t p2pApi;
        fs_nccl_kernel_launch_t kernelLaunch;
        fs_nccl_coll_v5_t coll;
        fs_nccl_p2p_v5_t p2p;
        fs_nccl_proxy_op_t proxyOp;
        fs_nccl_proxy_step_t proxyStep;
        fs_nccl_kernel_ch_t kernelCh;
        fs_nccl_net_plugin_t netPlugin;
        fs_nccl_ce_coll_t ceColl;
        fs_nccl_ce_sync_t ceCollSync;
        fs_nccl_ce_batch_t ceCollBatch;
    };
} fs_nccl_descr_v6_t;

/* ---- net plugin descriptors (NetPlugin event `data`) ---- */

#define FS_NET_TYPE_MASK         0xFFFF0000u
#define FS_NET_TYPE_IB           0x10000u
#define FS_NET_TYPE_SOCK         0x20000u
#define FS_NET_PLUGIN_ID_IB_V1   0x10001u
#define FS_NET_PLUGIN_ID_SOCK_V1 0x20001u
#define FS_NET_IB_EVENT_QP       1
#define FS_NET_SOCK_EVENT_SOCKET 1

typedef struct {
    uint8_t type; /* FS_NET_IB_EVENT_QP */
    struct {
        int device;
        uint64_t wr_id;
        int opcode;
        int qpNum;
        size_t length;
    } qp;
} fs_nccl_net_ib_descr_v1_t;

typedef struct {
    uint8_t type; /* FS_NET_SOCK_EVENT_SOCKET */
    struct {
        int fd;
        int op; /* 0 send, 1 recv */
        size_t length;
    } sock;
} fs_nccl_net_sock_descr_v1_t;

/* ---- function tables (48 bytes each) ---- */

typedef int fs_nccl_state_t;

typedef struct {
    const char* name;
    fs_nccl_result_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                             int nNodes, int nranks, int rank, fs_nccl_logger_t logfn);
    fs_nccl_result_t (*startEvent)(void* context, void** eHandle, fs_nccl_descr_v4_t* eDescr);
    fs_nccl_result_t (*stopEvent)(void* eHandle);
    fs_nccl_result_t (*recordEventState)(void* eHandle, fs_nccl_state_t eState,
                                         fs_nccl_state_args_t* eStateArgs);
    fs_nccl_result_t (*finalize)(void* context);
} fs_nccl_profiler_v4_t;

typedef struct {
    const char* name;
    fs_nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                             int nNodes, int nranks, int rank, fs_nccl_logger_t logfn);
    fs_nccl_result_t (*startEvent)(void* context, void** eHandle, fs_nccl_descr_v5_t* eDescr);
    fs_nccl_result_t (*stopEvent)(void* eHandle);
    fs_nccl_result_t (*recordEventState)(void* eHandle, fs_nccl_state_t eState,
                                         fs_nccl_state_args_t* eStateArgs);
    fs_nccl_result_t (*finalize)(void* context);
} fs_nccl_profiler_v5_t;

typedef struct {
    const char* name;
    fs_nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                             int nNodes, int nranks, int rank, fs_nccl_logger_t logfn);
    fs_nccl_result_t (*startEvent)(void* context, void** eHandle, fs_nccl_descr_v6_t* eDescr);
    fs_nccl_result_t (*stopEvent)(void* eHandle);
    fs_nccl_result_t (*recordEventState)(void* eHandle, fs_nccl_state_t eState,
                                         fs_nccl_state_args_t* eStateArgs);
    fs_nccl_result_t (*finalize)(void* context);
} fs_nccl_profiler_v6_t;

/* ---- static asserts: every size and offset of the reference ---- */

#define FS_ASSERT_OFF(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f " at " #off)
#define FS_ASSERT_SIZE(T, n)     _Static_assert(sizeof(T) == (n), "sizeof " #T " == " #n)

FS_ASSERT_SIZE(void*, 8);
FS_ASSERT_SIZE(size_t, 8);
FS_ASSERT_SIZE(fs_nccl_state_args_t, 8);
FS_ASSERT_SIZE(fs_nccl_descr_v4_t, 104);
FS_ASSERT_SIZE(fs_nccl_descr_v5_t, 112);
FS_ASSERT_SIZE(fs_nccl_descr_v6_t, 112);
FS_ASSERT_SIZE(fs_nccl_net_ib_descr_v1_t, 40);
FS_ASSERT_SIZE(fs_nccl_net_sock_descr_v1_t, 24);
FS_ASSERT_SIZE(fs_nccl_profiler_v4_t, 48);
FS_ASSERT_SIZE(fs_nccl_profiler_v5_t, 48);
FS_ASSERT_SIZE(fs_nccl_profiler_v6_t, 48);

/* common header */
FS_ASSERT_OFF(fs_nccl_descr_v4_t, type, 0);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, parentObj, 8);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, rank, 16);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, coll, 24);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, type, 0);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, parentObj, 8);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, rank, 16);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, groupApi, 24);
FS_ASSERT_OFF(fs_nccl_descr_v6_t, type, 0);
FS_ASSERT_OFF(fs_nccl_descr_v6_t, parentObj, 8);
FS_ASSERT_OFF(fs_nccl_descr_v6_t, rank, 16);
FS_ASSERT_OFF(fs_nccl_descr_v6_t, ceColl, 24);

/* union members: absolute offsets in the v6 descriptor (v4/v5 share them) */
#define FS_ASSERT_M(m, f, off) FS_ASSERT_OFF(fs_nccl_descr_v6_t, m.f, off)
FS_ASSERT_M(groupApi, graphCaptured, 24);
FS_ASSERT_M(groupApi, groupDepth, 28);
FS_ASSERT_M(collApi, func, 24);
FS_ASSERT_M(collApi, count, 32);
FS_ASSERT_M(collApi, datatype, 40);
FS_ASSERT_M(collApi, root, 48);
FS_ASSERT_M(collApi, stream, 56);
FS_ASSERT_M(collApi, graphCaptured, 64);
FS_ASSERT_M(p2pApi, func, 24);
FS_ASSERT_M(p2pApi, count, 32);
FS_ASSERT_M(p2pApi, datatype, 40);
FS_ASSERT_M(p2pApi, stream, 48);
FS_ASSERT_M(p2pApi, graphCaptured, 56);
FS_ASSERT_M(kernelLaunch, stream, 24);
FS_ASSERT_M(coll, seqNumber, 24);
FS_ASSERT_M(coll, func, 32);
FS_ASSERT_M(coll, sendBuff, 40);
FS_ASSERT_M(coll, recvBuff, 48);
FS_ASSERT_M(coll, count, 56);
FS_ASSERT_M(coll, root, 64);
FS_ASSERT_M(coll, datatype, 72);
FS_ASSERT_M(coll, nChannels, 80);
FS_ASSERT_M(coll, nWarps, 81);
FS_ASSERT_M(coll, algo, 88);
FS_ASSERT_M(coll, proto, 96);
FS_ASSERT_M(coll, parentGroup, 104);
FS_ASSERT_M(p2p, func, 24);
FS_ASSERT_M(p2p, buff, 32);
FS_ASSERT_M(p2p, datatype, 40);
FS_ASSERT_M(p2p, count, 48);
FS_ASSERT_M(p2p, peer, 56);
FS_ASSERT_M(p2p, nChannels, 60);
FS_ASSERT_M(p2p, parentGroup, 64);
FS_ASSERT_M(proxyOp, pid, 24);
FS_ASSERT_M(proxyOp, channelId, 28);
FS_ASSERT_M(proxyOp, peer, 32);
FS_ASSERT_M(proxyOp, nSteps, 36);
FS_ASSERT_M(proxyOp, chunkSize, 40);
FS_ASSERT_M(proxyOp, isSend, 44);
FS_ASSERT_M(proxyStep, step, 24);
FS_ASSERT_M(kernelCh, channelId, 24);
FS_ASSERT_M(kernelCh, pTimer, 32);
FS_ASSERT_M(netPlugin, id, 24);
FS_ASSERT_M(netPlugin, data, 32);
FS_ASSERT_M(ceColl, seqNumber, 24);
FS_ASSERT_M(ceColl, func, 32);
FS_ASSERT_M(ceColl, sendBuff, 40);
FS_ASSERT_M(ceColl, recvBuff, 48);
FS_ASSERT_M(ceColl, count, 56);
FS_ASSERT_M(ceColl, root, 64);
FS_ASSERT_M(ceColl, datatype, 72);
FS_ASSERT_M(ceColl, syncStrategy, 80);
FS_ASSERT_M(ceColl, intraBatchSync, 88);
FS_ASSERT_M(ceColl, batchSize, 92);
FS_ASSERT_M(ceColl, numBatches, 96);
FS_ASSERT_M(ceColl, ceSeqNum, 100);
FS_ASSERT_M(ceColl, stream, 104);
FS_ASSERT_M(ceCollSync, isComplete, 24);
FS_ASSERT_M(ceCollSync, nRanks, 28);
FS_ASSERT_M(ceCollBatch, numOps, 24);
FS_ASSERT_M(ceCollBatch, totalBytes, 32);
FS_ASSERT_M(ceCollBatch, useIntraSync, 40);
#undef FS_ASSERT_M

/* v4/v5 share the offsets of every member they have */
FS_ASSERT_OFF(fs_nccl_descr_v4_t, coll.nChannels, 80);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, coll.proto, 96);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, p2p.nChannels, 60);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, proxyOp.isSend, 44);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, kernelCh.pTimer, 32);
FS_ASSERT_OFF(fs_nccl_descr_v4_t, netPlugin.data, 32);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, coll.parentGroup, 104);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, p2p.parentGroup, 64);
FS_ASSERT_OFF(fs_nccl_descr_v5_t, collApi.graphCaptured, 64);

/* net descriptors */
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, type, 0);
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, qp.device, 8);
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, qp.wr_id, 16);
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, qp.opcode, 24);
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, qp.qpNum, 28);
FS_ASSERT_OFF(fs_nccl_net_ib_descr_v1_t, qp.length, 32);
FS_ASSERT_OFF(fs_nccl_net_sock_descr_v1_t, type, 0);
FS_ASSERT_OFF(fs_nccl_net_sock_descr_v1_t, sock.fd, 8);
FS_ASSERT_OFF(fs_nccl_net_sock_descr_v1_t, sock.op, 12);
FS_ASSERT_OFF(fs_nccl_net_sock_descr_v1_t, sock.length, 16);

/* function tables: name then init, startEvent, stopEvent, recordEventState, finalize */
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, name, 0);
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, init, 8);
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, startEvent, 16);
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, stopEvent, 24);
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, recordEventState, 32);
FS_ASSERT_OFF(fs_nccl_profiler_v5_t, finalize, 40);
FS_ASSERT_OFF(fs_nccl_profiler_v4_t, finalize, 40);
FS_ASSERT_OFF(fs_nccl_profiler_v6_t, finalize, 40);

#endif /* FS_NCCL_ABI_H */
