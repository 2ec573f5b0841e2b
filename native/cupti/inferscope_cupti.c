/* InferScope native CUPTI collector.
 *
 * Activity API: CONCURRENT_KERNEL, MEMCPY, MEMSET (SYNCHRONIZATION, OVERHEAD
 * opt-in; never RUNTIME/DRIVER activity: it doubles small-kernel latency).
 * Callback API: entry/exit of a few CPU-side calls (synchronising calls,
 * memcpys, and the first launches of every period) stamped with CLOCK_MONOTONIC.
 * Output: $INFERSCOPE_RAW_DIR/cupti-<pid>.bin, format in FORMAT.md.
 *
 * Load with CUDA_INJECTION64_PATH=libinferscope_cupti.so (InitializeInjection)
 * or from Python via ctypes (inferscope_cupti_start / inferscope_cupti_stop);
 * both load the same copy, so the second start is a no-op.
 * inferscope_cupti_pause / inferscope_cupti_resume turn the enabled activity
 * kinds and callbacks off and on again (in-process A/B overhead runs).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef IS_KERNEL_T
#define IS_KERNEL_T CUpti_ActivityKernel4
#define IS_MEMCPY_T CUpti_ActivityMemcpy
#define IS_MEMSET_T CUpti_ActivityMemset
#define IS_SYNC_T CUpti_ActivitySynchronization
#define IS_OVERHEAD_T CUpti_ActivityOverhead
#endif

#define EXPORT __attribute__((visibility("default")))

/* ---- file format (FORMAT.md) ---------------------------------------- */
enum {
  REC_CLOCK = 1, REC_STRING = 2, REC_KERNEL = 3, REC_MEMCPY = 4, REC_MEMSET = 5,
  REC_SYNC = 6, REC_OVERHEAD = 7, REC_API = 8, REC_DROPPED = 9, REC_END = 10, REC_LAUNCH_WINDOW = 11,
};
enum { WINDOW_FLAG_TO_END = 1 }; /* launch callbacks stay on from start_mono to the end */
enum { API_LAUNCH = 1, API_SYNC = 2, API_MEMCPY = 3 };
enum { API_FLAG_NESTED = 1 };

#pragma pack(push, 1)
typedef struct { uint16_t type, flags; uint32_t size; } rec_hdr;
typedef struct { char magic[8]; uint32_t version, header_size, pid, cupti_version; uint64_t start_mono; } file_hdr;
typedef struct { rec_hdr h; uint64_t mono_before, cupti_ts, mono_after; uint32_t which, pad; } rec_clock;
typedef struct { rec_hdr h; uint32_t id, len; } rec_string; /* + len bytes, padded to 8 */
typedef struct { rec_hdr h; uint64_t start, end; uint32_t device, context, stream, corr, name;
  uint32_t grid[3], block[3]; uint32_t shared_mem, registers, pad; } rec_kernel;
typedef struct { rec_hdr h; uint64_t start, end, bytes; uint32_t device, context, stream, corr;
  uint8_t copy_kind, src_kind, dst_kind, flags; uint32_t pad; } rec_memcpy;
typedef struct { rec_hdr h; uint64_t start, end, bytes; uint32_t device, context, stream, corr;
  uint32_t value; uint16_t mem_kind, flags; } rec_memset;
typedef struct { rec_hdr h; uint64_t start, end; uint32_t context, stream, corr, type, event, pad; } rec_sync;
typedef struct { rec_hdr h; uint64_t start, end; uint32_t overhead_kind, object_kind, id[3], pad; } rec_overhead;
typedef struct { rec_hdr h; uint64_t start_mono, end_mono; uint32_t corr, tid, name, cbid;
  uint8_t domain, kind; uint16_t pad; uint32_t parent_corr; } rec_api;
typedef struct { rec_hdr h; uint64_t cupti_dropped, callback_dropped, buffers_refused, records; } rec_dropped;
typedef struct { rec_hdr h; uint64_t records, bytes; } rec_end;
typedef struct { rec_hdr h; uint64_t start_mono, end_mono; } rec_window;
#pragma pack(pop)

_Static_assert(sizeof(file_hdr) == 32, "file_hdr");
_Static_assert(sizeof(rec_clock) == 40, "clock");
_Static_assert(sizeof(rec_string) == 16, "string");
_Static_assert(sizeof(rec_kernel) == 80, "kernel");
_Static_assert(sizeof(rec_memcpy) == 56, "memcpy");
_Static_assert(sizeof(rec_memset) == 56, "memset");
_Static_assert(sizeof(rec_sync) == 48, "sync");
_Static_assert(sizeof(rec_overhead) == 48, "overhead");
_Static_assert(sizeof(rec_api) == 48, "api");
_Static_assert(sizeof(rec_dropped) == 40, "dropped");
_Static_assert(sizeof(rec_end) == 24, "end");
_Static_assert(sizeof(rec_window) == 24, "window");

/* ---- state ----------------------------------------------------------- */
static pthread_mutex_t g_start_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_started, g_stopped, g_paused;
static int g_fd = -1;
static CUpti_SubscriberHandle g_sub;

/* CUPTI buffer pool: bounded, refused requests make CUPTI drop records. */
static size_t g_buf_size;
static int g_nbufs;
static uint8_t **g_free;
static int g_nfree;
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;

/* callback-record chunks */
#define CB_CHUNK (256 * 1024)
static int g_cb_max = 8;
static uint8_t *g_cb_cur;
static size_t g_cb_used;
static uint8_t **g_cb_free;
static int g_cb_nfree;
static pthread_mutex_t g_cb_mu = PTHREAD_MUTEX_INITIALIZER;

/* writer queue */
typedef struct { uint8_t *buf; size_t valid; int is_cb; } item;
static item *g_q;
static int g_qcap, g_qhead, g_qlen;
static pthread_mutex_t g_q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_q_cv = PTHREAD_COND_INITIALIZER;
static int g_q_stop;
static pthread_t g_writer;

static atomic_uint_fast64_t g_cupti_dropped, g_cb_dropped, g_refused;
static uint64_t g_records, g_bytes; /* writer-owned */

/* callback classification: kind and string id per (domain, cbid) */
static uint8_t *g_cb_kind[2];
static uint32_t *g_cb_name[2];
static int g_cb_n[2];
static atomic_uint g_next_string = 1;
static int g_nested_diag; /* nested driver launches recorded for diagnosis */
static const CUpti_CallbackDomain k_doms[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};

/* activity kinds enabled at start: what pause disables and resume enables */
static CUpti_ActivityKind g_kinds[8];
static int g_nkinds;

/* Launch callbacks: off, on for the whole run, or sampled: on for
 * every period (g_period_ns) until g_budget launch calls are recorded, then
 * off until the next period; toggled by the writer thread. Each
 * launch callback pair costs ~0.3-0.5 µs of CPU on top of CUPTI's own
 * ~1 µs kernel record, so launch-bound loops pay it on every kernel; the
 * analysis only needs a sample of launch-to-start delays and launch costs.
 * A second launching thread ends sampling (per-thread attribution of GPU
 * work needs every launch). g_launch_mu orders toggles against pause/stop. */
enum { LAUNCH_OFF = 0, LAUNCH_ALL = 1, LAUNCH_SAMPLE = 2 };
static _Atomic int g_launch_mode = LAUNCH_SAMPLE;
static uint64_t g_period_ns = 200000000ull;
static unsigned g_budget = 500;    /* launch calls recorded per period at most */
static atomic_uint g_launch_count; /* launch calls recorded this period */
static int g_launch_on;            /* launch callbacks enabled now */
static uint64_t g_win_start;       /* mono ns the current window opened */
static atomic_int g_launch_tid;    /* first thread seen launching */
static atomic_int g_second_thread; /* another thread launched: sample no more */
static pthread_mutex_t g_launch_mu = PTHREAD_MUTEX_INITIALIZER;

static __thread int t_tid;
static __thread int t_rt_depth;
static __thread uint32_t t_rt_corr;
/* Toggling launch callbacks can drop the exit of a call whose entry was
 * seen: t_rt_depth is only trusted within one toggle generation. */
static atomic_uint g_cb_gen;
static __thread unsigned t_gen;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t tid(void) {
  if (!t_tid) t_tid = (int)syscall(SYS_gettid);
  return (uint32_t)t_tid;
}

static void warnx_(const char *what, CUptiResult r) {
  const char *s = "?";
  cuptiGetResultString(r, &s);
  fprintf(stderr, "inferscope-cupti: %s: %s\n", what, s);
}
#define CK(call) do { CUptiResult _r = (call); if (_r != CUPTI_SUCCESS) warnx_(#call, _r); } while (0)

static void write_all(const void *p, size_t n) {
  const uint8_t *b = p;
  while (n > 0 && g_fd >= 0) {
    ssize_t w = write(g_fd, b, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    b += w;
    n -= (size_t)w;
    g_bytes += (uint64_t)w;
  }
}

/* ---- writer-side output buffer --------------------------------------- */
static uint8_t *g_obuf;
static size_t g_oused;
#define OBUF (1024 * 1024)

static void oflush(void) {
  if (g_oused) write_all(g_obuf, g_oused);
  g_oused = 0;
}

static void *oreserve(size_t n) {
  if (g_oused + n > OBUF) oflush();
  if (n > OBUF) return NULL;
  void *p = g_obuf + g_oused;
  g_oused += n;
  g_records++;
  return p;
}

static void out_string(uint32_t id, const char *s, size_t len) {
  if (len > OBUF - 64) len = OBUF - 64;
  size_t total = (sizeof(rec_string) + len + 7) & ~(size_t)7;
  uint8_t *p = oreserve(total);
  if (!p) return;
  memset(p, 0, total);
  rec_string *r = (rec_string *)p;
  r->h.type = REC_STRING;
  r->h.size = (uint32_t)total;
  r->id = id;
  r->len = (uint32_t)len;
  memcpy(p + sizeof(rec_string), s, len);
}

static void out_clock(uint32_t which) {
  /* best of 8: the first cuptiGetTimestamp (inside cuInit) can take 100s of µs */
  rec_clock r = {{REC_CLOCK, 0, sizeof(rec_clock)}, 0, 0, 0, which, 0};
  uint64_t warm;
  cuptiGetTimestamp(&warm);
  for (int i = 0; i < 8; i++) {
    uint64_t b = mono_ns(), ts = 0;
    cuptiGetTimestamp(&ts);
    uint64_t a = mono_ns();
    if (i == 0 || a - b < r.mono_after - r.mono_before) { r.mono_before = b; r.cupti_ts = ts; r.mono_after = a; }
  }
  void *p = oreserve(sizeof r);
  if (p) memcpy(p, &r, sizeof r);
}

static void out_dropped(void) {
  rec_dropped r = {{REC_DROPPED, 0, sizeof(rec_dropped)}, atomic_load(&g_cupti_dropped),
                   atomic_load(&g_cb_dropped), atomic_load(&g_refused), g_records};
  void *p = oreserve(sizeof r);
  if (p) memcpy(p, &r, sizeof r);
}

/* kernel-name interning (writer thread only): FNV hash of the mangled name */
typedef struct { uint64_t h; char *s; uint32_t id; } name_ent;
static name_ent *g_names;
static size_t g_names_cap, g_names_len;

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static uint32_t intern_kernel(const char *s) {
  if (!s) s = "<unknown>";
  uint64_t h = 1469598103934665603ull;
  for (const char *c = s; *c; c++) h = (h ^ (uint8_t)*c) * 1099511628211ull;
  if (g_names_len * 2 >= g_names_cap) {
    size_t ncap = g_names_cap ? g_names_cap * 2 : 1024;
    name_ent *n = calloc(ncap, sizeof *n);
    if (!n) return 0;
    for (size_t i = 0; i < g_names_cap; i++)
      if (g_names[i].s) {
        size_t j = g_names[i].h & (ncap - 1);
        while (n[j].s) j = (j + 1) & (ncap - 1);
        n[j] = g_names[i];
      }
    free(g_names);
    g_names = n;
    g_names_cap = ncap;
  }
  size_t j = h & (g_names_cap - 1);
  while (g_names[j].s) {
    if (g_names[j].h == h && strcmp(g_names[j].s, s) == 0) return g_names[j].id;
    j = (j + 1) & (g_names_cap - 1);
  }
  name_ent e = {h, strdup(s), atomic_fetch_add(&g_next_string, 1)};
  if (!e.s) return 0;
  g_names[j] = e;
  g_names_len++;
  int st = -1;
  char *dm = (s[0] == '_' && s[1] == 'Z') ? __cxa_demangle(s, NULL, NULL, &st) : NULL;
  if (dm && st == 0) out_string(e.id, dm, strlen(dm));
  else out_string(e.id, s, strlen(s));
  free(dm);
  return e.id;
}

#define PUT(T, var) T var; memset(&var, 0, sizeof var); var.h.size = sizeof(T)
#define EMIT(var) do { void *_p = oreserve(sizeof var); if (_p) memcpy(_p, &var, sizeof var); } while (0)

static void encode_activity(CUpti_Activity *a) {
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: {
    IS_KERNEL_T *k = (IS_KERNEL_T *)a;
    uint32_t name = intern_kernel(k->name);
    PUT(rec_kernel, r);
    r.h.type = REC_KERNEL;
    r.start = k->start; r.end = k->end;
    r.device = k->deviceId; r.context = k->contextId; r.stream = k->streamId; r.corr = k->correlationId;
    r.name = name;
    r.grid[0] = k->gridX; r.grid[1] = k->gridY; r.grid[2] = k->gridZ;
    r.block[0] = k->blockX; r.block[1] = k->blockY; r.block[2] = k->blockZ;
    r.shared_mem = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
    r.registers = k->registersPerThread;
    EMIT(r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    IS_MEMCPY_T *m = (IS_MEMCPY_T *)a;
    PUT(rec_memcpy, r);
    r.h.type = REC_MEMCPY;
    r.start = m->start; r.end = m->end; r.bytes = m->bytes;
    r.device = m->deviceId; r.context = m->contextId; r.stream = m->streamId; r.corr = m->correlationId;
    r.copy_kind = m->copyKind; r.src_kind = m->srcKind; r.dst_kind = m->dstKind; r.flags = m->flags;
    EMIT(r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    IS_MEMSET_T *m = (IS_MEMSET_T *)a;
    PUT(rec_memset, r);
    r.h.type = REC_MEMSET;
    r.start = m->start; r.end = m->end; r.bytes = m->bytes;
    r.device = m->deviceId; r.context = m->contextId; r.stream = m->streamId; r.corr = m->correlationId;
    r.value = m->value; r.mem_kind = (uint16_t)m->memoryKind; r.flags = (uint16_t)m->flags;
    EMIT(r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    IS_SYNC_T *s = (IS_SYNC_T *)a;
    PUT(rec_sync, r);
    r.h.type = REC_SYNC;
    r.start = s->start; r.end = s->end;
    r.context = s->contextId; r.stream = s->streamId; r.corr = s->correlationId;
    r.type = (uint32_t)s->type; r.event = s->cudaEventId;
    EMIT(r);
    break;
  }
  case CUPTI_ACTIVITY_KIND_OVERHEAD: {
    IS_OVERHEAD_T *o = (IS_OVERHEAD_T *)a;
    PUT(rec_overhead, r);
    r.h.type = REC_OVERHEAD;
    r.start = o->start; r.end = o->end;
    r.overhead_kind = (uint32_t)o->overheadKind; r.object_kind = (uint32_t)o->objectKind;
    memcpy(r.id, &o->objectId, sizeof r.id < sizeof o->objectId ? sizeof r.id : sizeof o->objectId);
    EMIT(r);
    break;
  }
  default:
    break;
  }
}

/* ---- buffer pool & CUPTI buffer callbacks --------------------------- */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *max_records = 0;
  pthread_mutex_lock(&g_pool_mu);
  if (g_nfree > 0) {
    *buffer = g_free[--g_nfree];
    *size = g_buf_size;
  } else {
    *buffer = NULL;
    *size = 0;
    atomic_fetch_add(&g_refused, 1);
  }
  pthread_mutex_unlock(&g_pool_mu);
}

static void enqueue(uint8_t *buf, size_t valid, int is_cb) {
  pthread_mutex_lock(&g_q_mu);
  if (g_qlen < g_qcap) {
    g_q[(g_qhead + g_qlen) % g_qcap] = (item){buf, valid, is_cb};
    g_qlen++;
    pthread_cond_signal(&g_q_cv);
  }
  pthread_mutex_unlock(&g_q_mu);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    atomic_fetch_add(&g_cupti_dropped, dropped);
  enqueue(buffer, valid, 0);
}

static void release(item it) {
  if (it.is_cb) {
    pthread_mutex_lock(&g_cb_mu);
    g_cb_free[g_cb_nfree++] = it.buf;
    pthread_mutex_unlock(&g_cb_mu);
  } else {
    pthread_mutex_lock(&g_pool_mu);
    g_free[g_nfree++] = it.buf;
    pthread_mutex_unlock(&g_pool_mu);
  }
}

static void process(item it) {
  if (it.is_cb) {
    /* already encoded records: copy through, counting them */
    size_t off = 0;
    while (off + sizeof(rec_hdr) <= it.valid) {
      rec_hdr *h = (rec_hdr *)(it.buf + off);
      void *p = oreserve(h->size);
      if (p) memcpy(p, h, h->size);
      off += h->size;
    }
  } else {
    CUpti_Activity *a = NULL;
    while (cuptiActivityGetNextRecord(it.buf, it.valid, &a) == CUPTI_SUCCESS) encode_activity(a);
  }
  release(it);
}

/* Move the current callback chunk (if non-empty) to the writer queue.
 * Caller holds g_cb_mu. Returns 0 when no fresh chunk is available. */
static int cb_rotate_locked(void) {
  if (g_cb_cur && g_cb_used) {
    enqueue(g_cb_cur, g_cb_used, 1);
    g_cb_cur = NULL;
  }
  if (!g_cb_cur) {
    if (!g_cb_nfree) return 0;
    g_cb_cur = g_cb_free[--g_cb_nfree];
    g_cb_used = 0;
  }
  return 1;
}

static void cb_emit(const void *rec, size_t n) {
  pthread_mutex_lock(&g_cb_mu);
  if ((!g_cb_cur || g_cb_used + n > CB_CHUNK) && !cb_rotate_locked()) {
    atomic_fetch_add(&g_cb_dropped, 1);
  } else {
    memcpy(g_cb_cur + g_cb_used, rec, n);
    g_cb_used += n;
  }
  pthread_mutex_unlock(&g_cb_mu);
}

static uint64_t launch_tick(uint64_t now);

/* Wake the writer now (the launch budget is spent); once per period. */
static int g_kick;
static void kick_writer(void) {
  pthread_mutex_lock(&g_q_mu);
  g_kick = 1;
  pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
}

static void *writer_main(void *arg) {
  (void)arg;
  uint64_t last_cb = mono_ns(), last_clock = last_cb, last_flush = last_cb;
  uint64_t last_drop_sum = 0, next_tick = launch_tick(last_cb);
  for (;;) {
    pthread_mutex_lock(&g_q_mu);
    if (!g_qlen && !g_q_stop && !g_kick) {
      /* Sleep until the next launch-window edge or 100 ms. The condvar
       * waits on CLOCK_REALTIME: convert the relative wait. */
      uint64_t wait = 100000000ull, t = mono_ns();
      if (next_tick > t && next_tick - t < wait) wait = next_tick - t;
      else if (next_tick <= t) wait = 0;
      struct timespec dl;
      clock_gettime(CLOCK_REALTIME, &dl);
      dl.tv_nsec += (long)wait;
      while (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
      if (wait) pthread_cond_timedwait(&g_q_cv, &g_q_mu, &dl);
    }
    int stop = g_q_stop && !g_qlen, kick = g_kick;
    g_kick = 0;
    item it = {0};
    int have = 0;
    if (g_qlen) { it = g_q[g_qhead]; g_qhead = (g_qhead + 1) % g_qcap; g_qlen--; have = 1; }
    pthread_mutex_unlock(&g_q_mu);
    if (have) process(it);
    uint64_t now = mono_ns();
    if (!stop && (kick || now >= next_tick)) next_tick = launch_tick(now);
    if (now - last_cb > 200000000ull) { /* callback records reach the file within ~200 ms */
      pthread_mutex_lock(&g_cb_mu);
      if (g_cb_cur && g_cb_used) cb_rotate_locked();
      pthread_mutex_unlock(&g_cb_mu);
      last_cb = now;
    }
    /* cuptiActivityFlushPeriod alone did not deliver partly filled buffers
     * (CUDA 13, H100: a SIGKILLed run kept none), so flush completed records
     * ourselves: a SIGKILL loses at most ~1 s of activity records. */
    if (!stop && now - last_flush > 1000000000ull) { cuptiActivityFlushAll(0); last_flush = now; }
    if (!stop && now - last_clock > 1000000000ull) { out_clock(2); last_clock = now; }
    uint64_t ds = atomic_load(&g_cupti_dropped) + atomic_load(&g_cb_dropped) + atomic_load(&g_refused);
    if (ds != last_drop_sum) { out_dropped(); last_drop_sum = ds; }
    if (!have || stop) oflush();
    if (stop) break;
  }
  return NULL;
}

/* ---- callbacks -------------------------------------------------------- */
static const char *k_launch[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
                                 "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", NULL};
static const char *k_sync[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                               "cudaThreadSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
                               "cuEventSynchronize", NULL};
static const char *k_memcpy[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync",
                                 "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpy3D",
                                 "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemcpy",
                                 "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync", NULL};

/* "cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel" */
static void base_name(const char *in, char *out, size_t cap) {
  snprintf(out, cap, "%s", in);
  for (;;) {
    char *u = strrchr(out, '_');
    if (!u) break;
    if (u[1] == 'v' && u[2] >= '0' && u[2] <= '9') { *u = 0; continue; }
    if (!strcmp(u, "_ptsz") || !strcmp(u, "_ptds")) { *u = 0; continue; }
    break;
  }
}

static int in_list(const char *s, const char **l) {
  for (; *l; l++)
    if (!strcmp(s, *l)) return 1;
  return 0;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
  (void)ud;
  int di = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : dom == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : -1;
  if (di < 0 || (int)cbid >= g_cb_n[di] || !g_cb_kind[di][cbid]) return;
  const CUpti_CallbackData *cb = data;
  unsigned gen = atomic_load_explicit(&g_cb_gen, memory_order_relaxed);
  if (t_gen != gen) { t_gen = gen; t_rt_depth = 0; }
  int nested = 0;
  if (di == 1 && t_rt_depth > 0) {
    /* a driver call made by the runtime: the runtime call is recorded.
     * The first few are kept (flagged) to check correlation ids match. */
    if (g_nested_diag >= 32 || g_cb_kind[1][cbid] != API_LAUNCH) return;
    nested = 1;
  }
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (di == 0) { t_rt_depth++; t_rt_corr = cb->correlationId; }
    if (cb->correlationData) *cb->correlationData = mono_ns();
    return;
  }
  uint64_t end = mono_ns();
  if (di == 0 && t_rt_depth > 0) t_rt_depth--;
  /* An exit whose entry ran before the callback was enabled: no start time
   * (the slot is zeroed after each use, so a stale one is never reused). */
  uint64_t start = cb->correlationData ? *cb->correlationData : 0;
  if (cb->correlationData) *cb->correlationData = 0;
  if (!start || start > end) return;
  uint8_t kind = g_cb_kind[di][cbid];
  if (kind == API_LAUNCH && g_launch_mode == LAUNCH_SAMPLE && !nested) {
    int me = (int)tid(), zero = 0;
    if (!atomic_compare_exchange_strong(&g_launch_tid, &zero, me) && zero != me && !atomic_exchange(&g_second_thread, 1))
      kick_writer();
    if (atomic_fetch_add(&g_launch_count, 1) + 1 == g_budget) kick_writer();
  }
  if (nested) g_nested_diag++;
  rec_api r;
  memset(&r, 0, sizeof r);
  r.h.type = REC_API;
  r.h.flags = nested ? API_FLAG_NESTED : 0;
  r.h.size = sizeof r;
  r.start_mono = start;
  r.end_mono = end;
  r.corr = cb->correlationId;
  r.tid = tid();
  r.name = g_cb_name[di][cbid];
  r.cbid = cbid;
  r.domain = (uint8_t)dom;
  r.kind = kind;
  r.parent_corr = nested ? t_rt_corr : 0;
  cb_emit(&r, sizeof r);
}

/* ---- launch-callback sampling (caller holds g_launch_mu) --------------- */
static int g_launch_paused;
static uint64_t g_next_open;

/* Turn the recorded callbacks on or off: the launch ones (launch=1) or all
 * the others (launch=0). */
static void enable_callbacks(uint32_t on, int launch) {
  for (int d = 0; d < 2; d++)
    for (int id = 1; id < g_cb_n[d]; id++) {
      uint8_t k = g_cb_kind[d] ? g_cb_kind[d][id] : 0;
      if (k && (k == API_LAUNCH) == launch) CK(cuptiEnableCallback(on, g_sub, k_doms[d], (CUpti_CallbackId)id));
    }
}

static void emit_window(uint64_t start, uint64_t end, uint16_t flags) {
  rec_window r = {{REC_LAUNCH_WINDOW, flags, sizeof(rec_window)}, start, end};
  cb_emit(&r, sizeof r);
}

static void window_open_locked(uint64_t now) {
  enable_callbacks(1, 1);
  g_launch_on = 1;
  g_win_start = now;
  atomic_fetch_add(&g_cb_gen, 1);
}

static void window_close_locked(uint64_t now) {
  enable_callbacks(0, 1);
  g_launch_on = 0;
  atomic_fetch_add(&g_cb_gen, 1);
  emit_window(g_win_start, now, 0);
}

/* At each period boundary reopen the window (if the budget closed it) and
 * reset the count; close it when the budget is spent. Returns when to call
 * again (the writer is also kicked when the budget runs out). Runs on the
 * writer thread. */
static uint64_t launch_tick(uint64_t now) {
  uint64_t next = now + 100000000ull;
  pthread_mutex_lock(&g_launch_mu);
  if (g_sub && !g_launch_paused && g_launch_mode == LAUNCH_SAMPLE) {
    if (atomic_load(&g_second_thread)) {
      if (!g_launch_on) window_open_locked(now);
      emit_window(g_win_start, 0, WINDOW_FLAG_TO_END);
      g_launch_mode = LAUNCH_ALL;
    } else {
      if (g_launch_on && atomic_load(&g_launch_count) >= g_budget) window_close_locked(now);
      if (now >= g_next_open) {
        g_next_open = now + g_period_ns;
        atomic_store(&g_launch_count, 0);
        if (!g_launch_on) window_open_locked(now);
      }
      if (g_next_open < next) next = g_next_open;
    }
  }
  pthread_mutex_unlock(&g_launch_mu);
  return next;
}

static void parse_launch_env(void) {
  const char *m = getenv("INFERSCOPE_CUPTI_LAUNCH");
  if (m && (!strcmp(m, "0") || !strcmp(m, "off"))) g_launch_mode = LAUNCH_OFF;
  else if (m && (!strcmp(m, "1") || !strcmp(m, "all"))) g_launch_mode = LAUNCH_ALL;
  const char *w = getenv("INFERSCOPE_CUPTI_LAUNCH_SAMPLE"); /* CALLS/PERIOD_MS */
  unsigned n = 0, period = 0;
  if (w && sscanf(w, "%u/%u", &n, &period) == 2 && n > 0 && period > 0) {
    g_budget = n;
    g_period_ns = period * 1000000ull;
  } else if (w && *w) {
    fprintf(stderr, "inferscope-cupti: INFERSCOPE_CUPTI_LAUNCH_SAMPLE=%s: want CALLS/PERIOD_MS (e.g. 500/200); using %u/%llu\n",
            w, g_budget, (unsigned long long)(g_period_ns / 1000000));
  }
}

static int setup_callbacks(void) {
  if (getenv("INFERSCOPE_CUPTI_CALLBACKS") && !strcmp(getenv("INFERSCOPE_CUPTI_CALLBACKS"), "0")) return 0;
  parse_launch_env();
  int launches = g_launch_mode != LAUNCH_OFF;
  CUptiResult r = cuptiSubscribe(&g_sub, (CUpti_CallbackFunc)on_callback, NULL);
  if (r != CUPTI_SUCCESS) { warnx_("cuptiSubscribe (another CUPTI client?)", r); return -1; }
  int sizes[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
  for (int d = 0; d < 2; d++) {
    g_cb_n[d] = sizes[d];
    g_cb_kind[d] = calloc((size_t)sizes[d], 1);
    g_cb_name[d] = calloc((size_t)sizes[d], sizeof(uint32_t));
    for (int id = 1; id < sizes[d]; id++) {
      const char *nm = NULL;
      if (cuptiGetCallbackName(k_doms[d], (uint32_t)id, &nm) != CUPTI_SUCCESS || !nm) continue;
      char b[128];
      base_name(nm, b, sizeof b);
      uint8_t k = in_list(b, k_launch) ? (launches ? API_LAUNCH : 0) : in_list(b, k_sync) ? API_SYNC
                : in_list(b, k_memcpy) ? API_MEMCPY : 0;
      if (!k) continue;
      /* sampled launch callbacks are enabled by the first window (launch_tick) */
      int now_on = k != API_LAUNCH || g_launch_mode == LAUNCH_ALL;
      if (cuptiEnableCallback(now_on, g_sub, k_doms[d], (CUpti_CallbackId)id) != CUPTI_SUCCESS) continue;
      g_cb_kind[d][id] = k;
      g_cb_name[d][id] = atomic_fetch_add(&g_next_string, 1);
      out_string(g_cb_name[d][id], b, strlen(b)); /* writer not started yet: direct */
    }
  }
  return 0;
}

/* ---- start / stop ------------------------------------------------------ */
static void stop_atexit(void);

#define ENABLE_KIND(k) do { CUptiResult _r = cuptiActivityEnable(k); \
  if (_r != CUPTI_SUCCESS) warnx_("cuptiActivityEnable(" #k ")", _r); else g_kinds[g_nkinds++] = (k); } while (0)

/* Turn the callbacks g_cb_kind lists off (0) or back on (1). Launch
 * callbacks in sampling mode: pause closes the open window, and the writer
 * opens the next one after resume. */
static void set_callbacks(uint32_t on) {
  pthread_mutex_lock(&g_launch_mu);
  if (g_sub) {
    enable_callbacks(on, 0);
    if (!on && g_launch_on && g_launch_mode == LAUNCH_SAMPLE) window_close_locked(mono_ns());
    else if (g_launch_mode == LAUNCH_ALL) enable_callbacks(on, 1);
    atomic_fetch_add(&g_cb_gen, 1);
  }
  g_launch_paused = !on;
  pthread_mutex_unlock(&g_launch_mu);
}

EXPORT int inferscope_cupti_stop(void);

EXPORT int inferscope_cupti_start(const char *raw_dir) {
  pthread_mutex_lock(&g_start_mu);
  if (g_started) { pthread_mutex_unlock(&g_start_mu); return 0; }
  if (!raw_dir || !*raw_dir) raw_dir = getenv("INFERSCOPE_RAW_DIR");
  if (!raw_dir || !*raw_dir) { pthread_mutex_unlock(&g_start_mu); return -1; }
  char path[4096];
  snprintf(path, sizeof path, "%s/cupti-%d.bin", raw_dir, (int)getpid());
  g_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (g_fd < 0) {
    fprintf(stderr, "inferscope-cupti: open %s: %s\n", path, strerror(errno));
    pthread_mutex_unlock(&g_start_mu);
    return -1;
  }
  size_t mb = 32;
  const char *e = getenv("INFERSCOPE_TRACE_SIZE_MB");
  if (e && atoi(e) > 0) mb = (size_t)atoi(e);
  size_t total = mb << 20;
  g_buf_size = total / 8 < (4u << 20) ? total / 8 : (4u << 20);
  if (g_buf_size < (64u << 10)) g_buf_size = 64u << 10;
  g_nbufs = (int)((total - total / 8) / g_buf_size);
  if (g_nbufs < 2) g_nbufs = 2;
  g_cb_max = (int)(total / 8 / CB_CHUNK);
  if (g_cb_max < 2) g_cb_max = 2;
  g_free = calloc((size_t)g_nbufs, sizeof *g_free);
  for (int i = 0; i < g_nbufs; i++) {
    uint8_t *b = aligned_alloc(8, g_buf_size);
    if (b) g_free[g_nfree++] = b;
  }
  g_cb_free = calloc((size_t)g_cb_max, sizeof *g_cb_free);
  for (int i = 0; i < g_cb_max; i++) {
    uint8_t *b = malloc(CB_CHUNK);
    if (b) g_cb_free[g_cb_nfree++] = b;
  }
  g_qcap = g_nbufs + g_cb_max + 4;
  g_q = calloc((size_t)g_qcap, sizeof *g_q);
  g_obuf = malloc(OBUF);

  uint32_t ver = 0;
  cuptiGetVersion(&ver);
  file_hdr fh = {{'I', 'S', 'C', 'U', 'P', 'T', 'I', 0}, 1, sizeof(file_hdr), (uint32_t)getpid(), ver, mono_ns()};
  write_all(&fh, sizeof fh);
  out_clock(0);

  CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  /* INFERSCOPE_CUPTI_KINDS: comma list of kernel,memcpy,memset,sync,overhead.
   * SYNCHRONIZATION activity is off by default: on an H100 it added ~+50 % to
   * launch-bound and sync-heavy loops by itself (native/cupti/test/h100-run2.log);
   * the sync callbacks give the CPU-side facts instead. OVERHEAD is off by
   * default too: nothing in the analysis needs it, and its records cost. */
  const char *kinds = getenv("INFERSCOPE_CUPTI_KINDS");
  if (!kinds || !*kinds) kinds = "kernel,memcpy,memset";
  if (strstr(kinds, "kernel")) ENABLE_KIND(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (strstr(kinds, "memcpy")) ENABLE_KIND(CUPTI_ACTIVITY_KIND_MEMCPY);
  if (strstr(kinds, "memset")) ENABLE_KIND(CUPTI_ACTIVITY_KIND_MEMSET);
  if (strstr(kinds, "sync")) ENABLE_KIND(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (strstr(kinds, "overhead")) ENABLE_KIND(CUPTI_ACTIVITY_KIND_OVERHEAD);
  setup_callbacks();
  oflush();
  pthread_create(&g_writer, NULL, writer_main, NULL);
  g_started = 1;
  atexit(stop_atexit);
  pthread_mutex_unlock(&g_start_mu);
  return 0;
}

EXPORT int inferscope_cupti_stop(void) {
  pthread_mutex_lock(&g_start_mu);
  if (!g_started || g_stopped) { pthread_mutex_unlock(&g_start_mu); return 0; }
  g_stopped = 1;
  pthread_mutex_lock(&g_launch_mu);
  if (g_sub && g_launch_on && g_launch_mode == LAUNCH_SAMPLE) window_close_locked(mono_ns());
  if (g_sub) { cuptiUnsubscribe(g_sub); g_sub = NULL; }
  pthread_mutex_unlock(&g_launch_mu);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_OVERHEAD);
  pthread_mutex_lock(&g_cb_mu);
  if (g_cb_cur && g_cb_used) cb_rotate_locked();
  pthread_mutex_unlock(&g_cb_mu);
  pthread_mutex_lock(&g_q_mu);
  g_q_stop = 1;
  pthread_cond_signal(&g_q_cv);
  pthread_mutex_unlock(&g_q_mu);
  pthread_join(g_writer, NULL);
  out_clock(1);
  out_dropped();
  rec_end r = {{REC_END, 0, sizeof(rec_end)}, g_records + 1, 0};
  void *p = oreserve(sizeof r);
  r.bytes = g_bytes + g_oused;
  if (p) memcpy(p, &r, sizeof r);
  oflush();
  close(g_fd);
  g_fd = -1;
  pthread_mutex_unlock(&g_start_mu);
  return 0;
}

static void stop_atexit(void) { inferscope_cupti_stop(); }

/* Pause (on=0) or resume (on=1) recording without ending the file: pausing
 * flushes the records already collected, then turns off the activity kinds
 * and callbacks enabled at start; resuming turns them back on. A runtime
 * call in flight on another thread may lose its exit record.
 * 0 on success (or already in that state), -1 when not recording. */
static int set_recording(int on) {
  pthread_mutex_lock(&g_start_mu);
  if (!g_started || g_stopped) { pthread_mutex_unlock(&g_start_mu); return -1; }
  if (g_paused == on) {
    if (!on) CK(cuptiActivityFlushAll(0));
    for (int i = 0; i < g_nkinds; i++) CK(on ? cuptiActivityEnable(g_kinds[i]) : cuptiActivityDisable(g_kinds[i]));
    set_callbacks((uint32_t)on);
    g_paused = !on;
  }
  pthread_mutex_unlock(&g_start_mu);
  return 0;
}

EXPORT int inferscope_cupti_pause(void) { return set_recording(0); }
EXPORT int inferscope_cupti_resume(void) { return set_recording(1); }

/* CUDA_INJECTION64_PATH entry point, called by the driver from cuInit. */
EXPORT int InitializeInjection(void) {
  inferscope_cupti_start(NULL);
  return 1;
}
