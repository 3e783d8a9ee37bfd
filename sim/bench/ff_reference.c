/* A reference First-Fit in C with varcap's pinned semantics (sim/engine/__init__.py), for the benchmark
 * only (`python -m sim.bench reference`, compiled at run time into a temporary directory; not part of the
 * product). Machines-alive capacity, LIFO terminations, no memory. At each instant t: completions (heap of
 * (end, job)), then the capacity change (turning off the highest-index alive machines; their jobs go to the
 * back of the queue by (start, row)), then submissions, then one FIFO pass without head-of-line blocking
 * (a max segment tree over machines' free cores, a min segment tree over queue positions' demand; when
 * nothing was freed the pass only looks at the entries appended at t).
 *
 * usage: ff_reference JOBS.bin CAP.bin MACHINES CORES HORIZON
 *   JOBS.bin: int64 n, then n float64 submit (sorted), n float64 duration, n float64 cores
 *   CAP.bin:  int64 k, then k float64 times, k int64 machines alive
 * prints one line: loop_cpu_s read_cpu_s events completed terminations sum_end
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static int64_t *read_block(const char *path, int64_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    int64_t *buf = xmalloc((size_t)size);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) { perror(path); exit(2); }
    fclose(f);
    *count = buf[0];
    return buf;
}

/* ---- max tree over machines (free cores, -1 when off) */
static double *mt; static int64_t msz;
static void mt_set(int64_t i, double v) {
    int64_t k = msz + i; mt[k] = v;
    for (k >>= 1; k >= 1; k >>= 1) mt[k] = mt[2 * k] > mt[2 * k + 1] ? mt[2 * k] : mt[2 * k + 1];
}
static int64_t mt_first_ge(double c) { /* lowest machine with free >= c */
    if (mt[1] < c) return -1;
    int64_t k = 1;
    while (k < msz) k = mt[2 * k] >= c ? 2 * k : 2 * k + 1;
    return k - msz;
}

/* ---- min tree over queue positions (demand, +inf when empty) */
static double *qt; static int64_t qsz; static int64_t *qjob;
static void qt_set(int64_t i, double v) {
    int64_t k = qsz + i; qt[k] = v;
    for (k >>= 1; k >= 1; k >>= 1) qt[k] = qt[2 * k] < qt[2 * k + 1] ? qt[2 * k] : qt[2 * k + 1];
}
static int64_t qt_first_le(int64_t lo, double x) { /* lowest position >= lo with demand <= x */
    if (lo >= qsz || qt[1] > x) return -1;
    int64_t k = qsz + lo;
    if (qt[k] <= x) return lo;
    while (k > 1) {
        if ((k & 1) == 0 && qt[k + 1] <= x) { k++; break; }
        k >>= 1;
    }
    if (k == 1) return -1;
    while (k < qsz) k = qt[2 * k] <= x ? 2 * k : 2 * k + 1;
    return k - qsz;
}

/* ---- heap of (end, job) */
static double *ht; static int64_t *hj; static int64_t hn, hcap;
static int hless(int64_t a, int64_t b) { return ht[a] < ht[b] || (ht[a] == ht[b] && hj[a] < hj[b]); }
static void hswap(int64_t a, int64_t b) {
    double t = ht[a]; ht[a] = ht[b]; ht[b] = t;
    int64_t j = hj[a]; hj[a] = hj[b]; hj[b] = j;
}
static void hpush(double t, int64_t j) {
    if (hn == hcap) { /* stale entries of killed attempts can outnumber the jobs */
        hcap = 2 * hcap + 16;
        ht = realloc(ht, hcap * sizeof(double)); hj = realloc(hj, hcap * sizeof(int64_t));
        if (!ht || !hj) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    int64_t i = hn++; ht[i] = t; hj[i] = j;
    while (i > 0 && hless(i, (i - 1) / 2)) { hswap(i, (i - 1) / 2); i = (i - 1) / 2; }
}
static void hpop(void) {
    hn--; ht[0] = ht[hn]; hj[0] = hj[hn];
    int64_t i = 0;
    for (;;) {
        int64_t l = 2 * i + 1, k = l;
        if (l >= hn) break;
        if (l + 1 < hn && hless(l + 1, l)) k = l + 1;
        if (!hless(k, i)) break;
        hswap(k, i); i = k;
    }
}

static double *sub, *dur, *cor, *start;
static int cmp_killed(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    if (start[x] != start[y]) return start[x] < start[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: %s JOBS.bin CAP.bin MACHINES CORES HORIZON\n", argv[0]); return 2; }
    double c0 = cpu();
    int64_t n, nc;
    int64_t *jb = read_block(argv[1], &n), *cb = read_block(argv[2], &nc);
    sub = (double *)(jb + 1); dur = sub + n; cor = dur + n;
    double *cap_t = (double *)(cb + 1); int64_t *cap_n = (int64_t *)(cap_t + nc);
    int64_t M = atoll(argv[3]); double C = atof(argv[4]), H = atof(argv[5]);
    double c1 = cpu();

    for (msz = 1; msz < M; msz <<= 1) {}
    mt = xmalloc(2 * msz * sizeof(double));
    for (int64_t k = 0; k < 2 * msz; k++) mt[k] = -1.0;
    double *fr = xmalloc(M * sizeof(double));
    int64_t *head = xmalloc(M * sizeof(int64_t));
    for (int64_t m = 0; m < M; m++) { fr[m] = 0.0; head[m] = -1; }
    start = xmalloc(n * sizeof(double));
    int64_t *nxt = xmalloc(n * sizeof(int64_t)), *prv = xmalloc(n * sizeof(int64_t));
    int64_t *on = xmalloc(n * sizeof(int64_t)), *killed = xmalloc(n * sizeof(int64_t));
    char *running = xmalloc(n);
    for (int64_t j = 0; j < n; j++) { running[j] = 0; on[j] = -1; }
    hcap = n + 16; ht = xmalloc(hcap * sizeof(double)); hj = xmalloc(hcap * sizeof(int64_t)); hn = 0;
    for (qsz = 1024; qsz < n; qsz <<= 1) {}
    qt = xmalloc(2 * qsz * sizeof(double)); qjob = xmalloc(qsz * sizeof(int64_t));
    for (int64_t k = 0; k < 2 * qsz; k++) qt[k] = INFINITY;
    int64_t qhead = 0, qtail = 0, alive = 0, si = 0, ci = 0;
    int64_t events = 0, completed = 0, terms = 0;
    double sum_end = 0.0;

    for (;;) {
        double t = hn > 0 ? ht[0] : INFINITY;
        if (ci < nc && cap_t[ci] < t) t = cap_t[ci];
        if (si < n && sub[si] < t) t = sub[si];
        if (t >= H) break;
        events++;
        int freed = 0;
        int64_t new_from;
        while (hn > 0 && ht[0] == t) { /* 1. completions */
            int64_t j = hj[0];
            hpop();
            if (!running[j] || start[j] + dur[j] != t) continue;
            int64_t m = on[j];
            running[j] = 0; completed++; sum_end += t;
            fr[m] += cor[j];
            if (prv[j] >= 0) nxt[prv[j]] = nxt[j]; else head[m] = nxt[j];
            if (nxt[j] >= 0) prv[nxt[j]] = prv[j];
            on[j] = -1;
            if (head[m] < 0) fr[m] = C;
            mt_set(m, fr[m]);
            freed = 1;
        }
        int64_t nk = 0;
        if (ci < nc && cap_t[ci] == t) { /* 2. capacity change */
            int64_t target = cap_n[ci++];
            if (target > M) target = M;
            if (target < 0) target = 0;
            if (target > alive) {
                for (int64_t m = alive; m < target; m++) { fr[m] = C; mt_set(m, C); }
                alive = target; freed = 1;
            } else {
                for (int64_t m = alive - 1; m >= target; m--) {
                    for (int64_t j = head[m]; j >= 0; j = nxt[j]) killed[nk++] = j;
                    head[m] = -1; fr[m] = C; mt_set(m, -1.0);
                }
                alive = target;
            }
        }
        if (nk > 0) {
            qsort(killed, (size_t)nk, sizeof(int64_t), cmp_killed);
            terms += nk;
        }
        /* killed, then submitted jobs go to the back of the queue (compacted/grown when full) */
        int64_t incoming = nk;
        while (si + (incoming - nk) < n && sub[si + (incoming - nk)] == t) incoming++;
        if (qtail + incoming > qsz) {
            int64_t live = 0;
            for (int64_t p = qhead; p < qtail; p++) if (qjob[p] >= 0) qjob[live++] = qjob[p];
            int64_t need = live + incoming;
            if (need > qsz / 2) {
                while (qsz < 2 * need) qsz <<= 1;
                free(qt); qt = xmalloc(2 * qsz * sizeof(double));
                qjob = realloc(qjob, qsz * sizeof(int64_t));
            }
            for (int64_t k = 0; k < 2 * qsz; k++) qt[k] = INFINITY;
            for (int64_t p = 0; p < live; p++) qt[qsz + p] = cor[qjob[p]];
            for (int64_t k = qsz - 1; k >= 1; k--) qt[k] = qt[2 * k] < qt[2 * k + 1] ? qt[2 * k] : qt[2 * k + 1];
            qhead = 0; qtail = live; freed = 1;
        }
        new_from = qtail;
        for (int64_t r = 0; r < nk; r++) {
            int64_t j = killed[r];
            running[j] = 0; on[j] = -1;
            qjob[qtail] = j; qt_set(qtail++, cor[j]);
        }
        while (si < n && sub[si] == t) { qjob[qtail] = si; qt_set(qtail++, cor[si]); si++; } /* 3. */
        /* 4. the pass */
        int64_t pos = qt_first_le(freed ? qhead : new_from, mt[1]);
        while (pos >= 0) {
            int64_t j = qjob[pos];
            int64_t m = mt_first_ge(cor[j]);
            if (m >= 0) {
                qjob[pos] = -1; qt_set(pos, INFINITY);
                fr[m] -= cor[j]; mt_set(m, fr[m]);
                start[j] = t; running[j] = 1; on[j] = m;
                prv[j] = -1; nxt[j] = head[m];
                if (head[m] >= 0) prv[head[m]] = j;
                head[m] = j;
                hpush(t + dur[j], j);
            }
            pos = qt_first_le(pos + 1, mt[1]);
        }
        while (qhead < qtail && qjob[qhead] < 0) qhead++;
    }
    double c2 = cpu();
    printf("%.6f %.6f %lld %lld %lld %.17g\n", c2 - c1, c1 - c0, (long long)events, (long long)completed,
           (long long)terms, sum_end);
    return 0;
}
