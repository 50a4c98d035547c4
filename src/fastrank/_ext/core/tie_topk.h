/* Top-k ranking metrics of extreme multi-label classification (precision@k, recall@k,
   DCG@k, nDCG@k and their propensity-scored forms) for one document at a time, with exact
   tie semantics. Header-only C (no Python): the driver is fastrank/_ext/tie_topk.pyx, which
   loads each row into the arrays below, runs these functions in an OpenMP loop over
   documents, and shuffles tie groups for the "ordinal" order with the shared generator of
   _tiesort.pxd.

   A row is ns scored labels (val[i], lab[i]) -- every label of a dense row, the stored
   entries of a sparse row or the listed labels of a top-k row -- and, when ns < q, the
   q - ns unscored labels, one tie group below every scored label. Scores are doubles
   compared with ==, so -0.0 ties with 0.0; NaN never reaches this code.

   Only the first K positions matter (K = the largest cut-off). fr_tk_select finds them
   without sorting the row: t, the K-th largest score, splits the row into the a < K labels
   scored above t (sorted, they are the top) and the boundary tie group of b labels scored
   t, which spans positions a .. a + b - 1 >= K - 1. When ns < K the boundary group is the
   unscored one (a = ns). Everything below the boundary group lies beyond position K.

   Orders inside tie groups (positions are 0-based):
   - group modes, from each relevant label's tie group [s, e) alone:
     expected (mean over every order of every group: a label of a group spanning s..e-1
     sits at each of its positions with probability 1/(e - s), so it adds the mean of the
     position's discount over s..min(e, k)-1), optimistic (relevant labels first in their
     group, heaviest propensity weight first: the largest value over all orders) and
     pessimistic (relevant labels last, heaviest last: the smallest value);
   - order modes, from the labels at positions 0..K-1 (fr_tk_order): stable (label index
     ascending inside a group), ordinal (stable, then shuffled by the driver) and trec
     (decimal label strings descending inside a group, as trec_eval's strcmp orders docnos).

   Per document and cut-off k the values of FR_TK_* (enum below) are added, times the
   document's weight, to out[mode][value][ik]; the caller divides the sums. */
#ifndef FR_TIE_TOPK_H
#define FR_TIE_TOPK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* modes: index i <-> flag 1 << i */
enum { FR_TK_EXPECTED, FR_TK_OPTIMISTIC, FR_TK_PESSIMISTIC, FR_TK_ORDINAL, FR_TK_STABLE,
       FR_TK_TREC, FR_TK_N_MODES };
/* per-document values, summed over documents */
enum {
    FR_TK_PRECISION,    /* hits / k */
    FR_TK_RECALL,       /* hits / m (0 when m = 0) */
    FR_TK_DCG,          /* sum of 1 / log2(p + 2) over relevant positions p < k */
    FR_TK_NDCG,         /* DCG / IDCG, IDCG = sum_{p < min(k, m)} 1 / log2(p + 2) (0: m = 0) */
    FR_TK_PSP,          /* sum of w over relevant positions p < k, / k */
    FR_TK_PSP_BEST,     /* the largest PSP over all rankings: top min(k, m) weights / k */
    FR_TK_PSDCG,        /* sum of w / log2(p + 2) over relevant positions p < k */
    FR_TK_PSNDCG,       /* PSDCG / IDCG (0: m = 0) */
    FR_TK_PSNDCG_BEST,  /* the largest PSDCG over all rankings / IDCG (0: m = 0) */
    FR_TK_N_VALUES
};
/* row errors */
enum { FR_TK_OK, FR_TK_NOMEM, FR_TK_DUPLICATE, FR_TK_OUT_OF_RANGE };

typedef struct { double v; int32_t l; } fr_tk_entry;
typedef struct { int64_t s, e; double w; } fr_tk_rel;

typedef struct {
    /* configuration, shared */
    int64_t q, K;
    int nk;
    const int64_t *ks;     /* the cut-offs, each in 1..K */
    const double *disc;    /* disc[p] = 1 / log2(p + 2), p < K */
    const double *dcum;    /* dcum[x] = disc[0] + ... + disc[x - 1], x <= K */
    /* the current row */
    const double *val;
    const int32_t *lab;    /* NULL: dense row, label i is val[i] */
    int64_t ns;
    int sorted;            /* lab ascending (a CSR row) */
    /* selection (fr_tk_select) */
    double t;
    int implicit;          /* the boundary group is the unscored one */
    int64_t a, b;
    fr_tk_entry *top;      /* cap_top: the a labels above t, sorted; candidate buffer */
    int64_t cap_top;
    /* the document's relevant labels */
    fr_tk_rel *rel;
    double *wbest;         /* K: the largest weights of relevant labels, descending */
    /* order modes: the labels at positions 0..len-1 and their tie-group ends */
    int32_t *order, *end;  /* q each, NULL without order modes */
    unsigned char *mark;   /* q flags, all 0 between rows; NULL for dense rows */
} fr_tk_work;


/* ---- scratch -------------------------------------------------------------------------- */

static void fr_tk_work_free(fr_tk_work *w) {
    if (w == NULL) return;
    free(w->top); free(w->rel); free(w->wbest); free(w->order); free(w->end); free(w->mark);
    free(w);
}

/* Scratch of one thread: rows of at most ns_max scored labels and m_max relevant ones;
   order arrays when order modes are asked for, label flags for sparse rows. NULL when out
   of memory. */
static fr_tk_work *fr_tk_work_new(int64_t q, int64_t K, int nk, const int64_t *ks,
                                  const double *disc, const double *dcum, int64_t ns_max,
                                  int64_t m_max, int order_modes, int sparse) {
    fr_tk_work *w = (fr_tk_work *) calloc(1, sizeof(fr_tk_work));
    if (w == NULL) return NULL;
    w->q = q; w->K = K; w->nk = nk; w->ks = ks; w->disc = disc; w->dcum = dcum;
    w->cap_top = 2 * K + 64;
    if (w->cap_top > ns_max + 1) w->cap_top = ns_max + 1;
    w->top = (fr_tk_entry *) malloc(w->cap_top * sizeof(fr_tk_entry));
    w->rel = (fr_tk_rel *) malloc((m_max + 1) * sizeof(fr_tk_rel));
    w->wbest = (double *) malloc(K * sizeof(double));
    int ok = w->top && w->rel && w->wbest;
    if (order_modes) {
        w->order = (int32_t *) malloc(q * sizeof(int32_t));
        w->end = (int32_t *) malloc(q * sizeof(int32_t));
        ok = ok && w->order && w->end;
    }
    if (sparse) {
        w->mark = (unsigned char *) calloc(q, 1);
        ok = ok && w->mark;
    }
    if (!ok) { fr_tk_work_free(w); return NULL; }
    return w;
}

/* The discount tables of cut-offs up to K: disc (K values) and dcum (K + 1 values). */
static void fr_tk_discounts(int64_t K, double *disc, double *dcum) {
    dcum[0] = 0.0;
    for (int64_t p = 0; p < K; p++) {
        disc[p] = 1.0 / log2((double) p + 2.0);
        dcum[p + 1] = dcum[p] + disc[p];
    }
}


/* ---- selection ------------------------------------------------------------------------ */

/* x[k] becomes the value a descending sort would put there, larger values before it
   (quickselect with a median of three and a three-way partition, so ties cost nothing) */
static void fr_tk_select_desc(fr_tk_entry *x, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        double p0 = x[lo].v, p1 = x[lo + (hi - lo) / 2].v, p2 = x[hi - 1].v, p;
        if (p0 < p1) { double s = p0; p0 = p1; p1 = s; }
        if (p1 < p2) { p1 = p2; if (p0 < p1) p1 = p0; }
        p = p1;
        int64_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (x[i].v > p) { fr_tk_entry s = x[lt]; x[lt++] = x[i]; x[i++] = s; }
            else if (x[i].v < p) { fr_tk_entry s = x[--gt]; x[gt] = x[i]; x[i] = s; }
            else i++;
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return;
    }
}

/* score descending, label ascending */
static int fr_tk_cmp_stable(const void *pa, const void *pb) {
    const fr_tk_entry *a = (const fr_tk_entry *) pa, *b = (const fr_tk_entry *) pb;
    if (a->v != b->v) return a->v > b->v ? -1 : 1;
    return (a->l > b->l) - (a->l < b->l);
}

static void fr_tk_sort_stable(fr_tk_entry *x, int64_t n) {
    if (n > 24) { qsort(x, (size_t) n, sizeof(fr_tk_entry), fr_tk_cmp_stable); return; }
    for (int64_t i = 1; i < n; i++) {
        fr_tk_entry e = x[i];
        int64_t j = i - 1;
        while (j >= 0 && fr_tk_cmp_stable(&x[j], &e) > 0) { x[j + 1] = x[j]; j--; }
        x[j + 1] = e;
    }
}

/* Checks the row's labels (sparse rows: in [0, q), no label twice) and selects its top:
   t, a, b, implicit and top[0..a) sorted by score descending, label ascending. */
static int fr_tk_select(fr_tk_work *w, const double *val, const int32_t *lab, int64_t ns,
                        int sorted) {
    int64_t K = w->K, i, nb = 0;
    w->val = val; w->lab = lab; w->ns = ns; w->sorted = sorted;
    if (lab != NULL) {
        int err = FR_TK_OK;
        for (i = 0; i < ns && err == FR_TK_OK; i++) {
            if (lab[i] < 0 || lab[i] >= w->q) err = FR_TK_OUT_OF_RANGE;
            else if (w->mark[lab[i]]) err = FR_TK_DUPLICATE;
            else w->mark[lab[i]] = 1;
        }
        for (int64_t j = 0; j < i; j++)
            if (lab[j] >= 0 && lab[j] < w->q) w->mark[lab[j]] = 0;
        if (err != FR_TK_OK) return err;
    }
    if (ns < K) {  /* every scored label is above the unscored group, the boundary */
        for (i = 0; i < ns; i++) { w->top[i].v = val[i]; w->top[i].l = lab ? lab[i] : (int32_t) i; }
        w->a = ns; w->b = w->q - ns; w->implicit = 1;
        fr_tk_sort_stable(w->top, ns);
        return FR_TK_OK;
    }
    /* t = the K-th largest score: candidates above the running K-th largest are kept in a
       buffer, cut back to the K largest whenever it fills */
    int have = 0;
    double thr = 0.0;
    for (i = 0; i < ns; i++) {
        double v = val[i];
        if (have && !(v > thr)) continue;
        w->top[nb].v = v; nb++;
        if (nb == w->cap_top) {
            fr_tk_select_desc(w->top, nb, K - 1);
            nb = K; thr = w->top[K - 1].v; have = 1;
        }
    }
    fr_tk_select_desc(w->top, nb, K - 1);
    w->t = w->top[K - 1].v;
    w->implicit = 0;
    int64_t a = 0, b = 0;
    double t = w->t;
    for (i = 0; i < ns; i++) {
        double v = val[i];
        if (v > t) { w->top[a].v = v; w->top[a].l = lab ? lab[i] : (int32_t) i; a++; }
        else if (v == t) b++;
    }
    w->a = a; w->b = b;
    fr_tk_sort_stable(w->top, a);
    return FR_TK_OK;
}

/* The score of label l in the current row: 1 and *v when it is scored, else 0. */
static int fr_tk_score_of(const fr_tk_work *w, int32_t l, double *v) {
    if (w->lab == NULL) { *v = w->val[l]; return 1; }
    if (w->sorted) {
        int64_t lo = 0, hi = w->ns;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (w->lab[mid] < l) lo = mid + 1; else hi = mid;
        }
        if (lo < w->ns && w->lab[lo] == l) { *v = w->val[lo]; return 1; }
        return 0;
    }
    for (int64_t i = 0; i < w->ns; i++)
        if (w->lab[i] == l) { *v = w->val[i]; return 1; }
    return 0;
}

/* The tie group [*s, *e) of a label scored v (scored = 0: an unscored label). */
static void fr_tk_group_of(const fr_tk_work *w, int scored, double v, int64_t *s, int64_t *e) {
    if (!scored) { *s = w->ns; *e = w->q; return; }
    if (!w->implicit && v == w->t) { *s = w->a; *e = w->a + w->b; return; }
    if (!w->implicit && v < w->t) { *s = *e = w->K; return; }  /* beyond the top */
    int64_t lo = 0, hi = w->a;  /* first position scored <= v, then first scored < v */
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (w->top[mid].v > v) lo = mid + 1; else hi = mid; }
    *s = lo;
    hi = w->a;
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (w->top[mid].v >= v) lo = mid + 1; else hi = mid; }
    *e = lo;
}


/* ---- per-document values -------------------------------------------------------------- */

/* Per-document sums of one mode, one per cut-off (at most FR_TK_MAX_CUTOFFS cut-offs). */
#define FR_TK_MAX_CUTOFFS 64
typedef struct {
    double hits[FR_TK_MAX_CUTOFFS], dcg[FR_TK_MAX_CUTOFFS], psg[FR_TK_MAX_CUTOFFS],
        psdcg[FR_TK_MAX_CUTOFFS];
} fr_tk_gains;

static void fr_tk_gains_zero(fr_tk_gains *g, int nk) {
    for (int ik = 0; ik < nk; ik++) g->hits[ik] = g->dcg[ik] = g->psg[ik] = g->psdcg[ik] = 0.0;
}

/* a relevant label of weight wt at position p */
static void fr_tk_gain_at(const fr_tk_work *w, fr_tk_gains *g, int64_t p, double wt) {
    for (int ik = 0; ik < w->nk; ik++) {
        if (p < w->ks[ik]) {
            g->hits[ik] += 1.0;
            g->dcg[ik] += w->disc[p];
            g->psg[ik] += wt;
            g->psdcg[ik] += wt * w->disc[p];
        }
    }
}

/* Adds the document's values (its gains g, m relevant labels, the best weights in
   w->wbest) times weight to out[value][ik]. */
static void fr_tk_finish(const fr_tk_work *w, const fr_tk_gains *g, int64_t m, double weight,
                         double *out) {
    int nk = w->nk;
    for (int ik = 0; ik < nk; ik++) {
        int64_t k = w->ks[ik], top = m < k ? m : k;
        double best_p = 0.0, best_d = 0.0;
        for (int64_t i = 0; i < top; i++) { best_p += w->wbest[i]; best_d += w->wbest[i] * w->disc[i]; }
        out[FR_TK_PRECISION * nk + ik] += weight * (g->hits[ik] / (double) k);
        out[FR_TK_DCG * nk + ik] += weight * g->dcg[ik];
        out[FR_TK_PSP * nk + ik] += weight * (g->psg[ik] / (double) k);
        out[FR_TK_PSP_BEST * nk + ik] += weight * (best_p / (double) k);
        out[FR_TK_PSDCG * nk + ik] += weight * g->psdcg[ik];
        if (m > 0) {
            double idcg = w->dcum[top];
            out[FR_TK_RECALL * nk + ik] += weight * (g->hits[ik] / (double) m);
            out[FR_TK_NDCG * nk + ik] += weight * (g->dcg[ik] / idcg);
            out[FR_TK_PSNDCG * nk + ik] += weight * (g->psdcg[ik] / idcg);
            out[FR_TK_PSNDCG_BEST * nk + ik] += weight * (best_d / idcg);
        }
    }
}

/* w->wbest <- the min(m, K) largest weights of the relevant labels truth[0..m),
   descending (weights invp[l], or 1 each) */
static void fr_tk_best_weights(fr_tk_work *w, const int32_t *truth, int64_t m,
                               const double *invp) {
    int64_t n = 0, K = w->K;
    for (int64_t i = 0; i < m; i++) {
        double wt = invp ? invp[truth[i]] : 1.0;
        int64_t j = n < K ? n++ : K;
        while (j > 0 && w->wbest[j - 1] < wt) { if (j < K) w->wbest[j] = w->wbest[j - 1]; j--; }
        if (j < K) w->wbest[j] = wt;
    }
}

/* Finds the tie group [s, e) of every relevant label truth[0..m) and keeps in w->rel those
   that start before position K, with their weights (invp[l], or 1); returns their number. */
static int64_t fr_tk_relevant(fr_tk_work *w, const int32_t *truth, int64_t m, const double *invp) {
    int64_t n_rel = 0;
    for (int64_t i = 0; i < m; i++) {
        int32_t l = truth[i];
        double v = 0.0;
        int64_t s, e;
        int scored = fr_tk_score_of(w, l, &v);
        fr_tk_group_of(w, scored, v, &s, &e);
        if (s >= w->K) continue;
        w->rel[n_rel].s = s; w->rel[n_rel].e = e; w->rel[n_rel].w = invp ? invp[l] : 1.0;
        n_rel++;
    }
    return n_rel;
}

/* group start ascending, weight descending */
static int fr_tk_cmp_rel(const fr_tk_rel *a, const fr_tk_rel *b) {
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    if (a->w != b->w) return a->w > b->w ? -1 : 1;
    return 0;
}

/* The group modes of one document (flags: 1 << FR_TK_EXPECTED etc.); out is
   out[mode][value][ik]. */
static void fr_tk_group_modes(fr_tk_work *w, int flags, const int32_t *truth, int64_t m,
                              const double *invp, double weight, double *out) {
    int nk = w->nk;
    int64_t n_rel = fr_tk_relevant(w, truth, m, invp);
    fr_tk_gains g;
    fr_tk_best_weights(w, truth, m, invp);
    if (flags & (1 << FR_TK_EXPECTED)) {
        fr_tk_gains_zero(&g, nk);
        for (int64_t r = 0; r < n_rel; r++) {
            int64_t s = w->rel[r].s, e = w->rel[r].e;
            double size = (double) (e - s), wt = w->rel[r].w;
            for (int ik = 0; ik < nk; ik++) {
                int64_t k = w->ks[ik], lo = s < k ? s : k, hi = e < k ? e : k;
                if (hi <= lo) continue;
                double share = (double) (hi - lo) / size;
                double dshare = (w->dcum[hi] - w->dcum[lo]) / size;
                g.hits[ik] += share;
                g.dcg[ik] += dshare;
                g.psg[ik] += wt * share;
                g.psdcg[ik] += wt * dshare;
            }
        }
        fr_tk_finish(w, &g, m, weight, out + FR_TK_EXPECTED * FR_TK_N_VALUES * nk);
    }
    if (flags & ((1 << FR_TK_OPTIMISTIC) | (1 << FR_TK_PESSIMISTIC))) {
        for (int64_t i = 1; i < n_rel; i++) {  /* few labels: insertion sort */
            fr_tk_rel x = w->rel[i];
            int64_t j = i - 1;
            while (j >= 0 && fr_tk_cmp_rel(&w->rel[j], &x) > 0) { w->rel[j + 1] = w->rel[j]; j--; }
            w->rel[j + 1] = x;
        }
        for (int mode = FR_TK_OPTIMISTIC; mode <= FR_TK_PESSIMISTIC; mode++) {
            if (!(flags & (1 << mode))) continue;
            fr_tk_gains_zero(&g, nk);
            int64_t rank = 0;
            for (int64_t r = 0; r < n_rel; r++) {
                rank = (r > 0 && w->rel[r].s == w->rel[r - 1].s) ? rank + 1 : 0;
                int64_t p = mode == FR_TK_OPTIMISTIC ? w->rel[r].s + rank : w->rel[r].e - 1 - rank;
                if (p < w->K) fr_tk_gain_at(w, &g, p, w->rel[r].w);
            }
            fr_tk_finish(w, &g, m, weight, out + mode * FR_TK_N_VALUES * nk);
        }
    }
}


/* ---- order modes ---------------------------------------------------------------------- */

/* strcmp of the decimal strings of two non-negative labels (trec_eval compares docnos so) */
static int fr_tk_docno_cmp(int32_t x, int32_t y) {
    char a[12], b[12];
    int na = 0, nb = 0;
    do { a[na++] = (char) ('0' + x % 10); x /= 10; } while (x);
    do { b[nb++] = (char) ('0' + y % 10); y /= 10; } while (y);
    for (int i = 0; i < na && i < nb; i++) {
        char ca = a[na - 1 - i], cb = b[nb - 1 - i];
        if (ca != cb) return ca < cb ? -1 : 1;
    }
    return (na > nb) - (na < nb);
}

static int fr_tk_cmp_docno_desc(const void *pa, const void *pb) {
    return fr_tk_docno_cmp(*(const int32_t *) pb, *(const int32_t *) pa);
}

static int fr_tk_cmp_label(const void *pa, const void *pb) {
    int32_t a = *(const int32_t *) pa, b = *(const int32_t *) pb;
    return (a > b) - (a < b);
}

/* Writes the labels at positions 0..len-1 for an order mode and returns len (>= K): the
   top labels, then the whole boundary group; w->end[p] is the end of the tie group of
   position p. Inside a group labels are in ascending index order (FR_TK_STABLE and
   FR_TK_ORDINAL, which the driver then shuffles group by group exactly as
   fastrank.ranking.rank does) or by decimal string descending (FR_TK_TREC). */
static int64_t fr_tk_order(fr_tk_work *w, int mode) {
    int64_t a = w->a, len = a, i;
    for (i = 0; i < a; i++) w->order[i] = w->top[i].l;
    if (w->implicit) {  /* the unscored labels, ascending */
        for (i = 0; i < w->ns; i++) w->mark[w->lab[i]] = 1;
        for (int32_t l = 0; l < w->q; l++) if (!w->mark[l]) w->order[len++] = l;
        for (i = 0; i < w->ns; i++) w->mark[w->lab[i]] = 0;
    } else {
        for (i = 0; i < w->ns; i++)
            if (w->val[i] == w->t) w->order[len++] = w->lab ? w->lab[i] : (int32_t) i;
        if (w->lab != NULL && !w->sorted)  /* a top-k row lists its labels in any order */
            qsort(w->order + a, (size_t) (len - a), sizeof(int32_t), fr_tk_cmp_label);
    }
    int64_t stop = a;
    for (i = a - 1; i >= 0; i--) {
        if (i < a - 1 && w->top[i].v != w->top[i + 1].v) stop = i + 1;
        w->end[i] = (int32_t) stop;
    }
    for (i = a; i < len; i++) w->end[i] = (int32_t) len;
    if (mode == FR_TK_TREC)
        for (i = 0; i < len; i = w->end[i])
            qsort(w->order + i, (size_t) (w->end[i] - i), sizeof(int32_t), fr_tk_cmp_docno_desc);
    return len;
}

/* 1 when label l is in the ascending truth[0..m) */
static int fr_tk_is_relevant(const int32_t *truth, int64_t m, int32_t l) {
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (truth[mid] < l) lo = mid + 1; else hi = mid;
    }
    return lo < m && truth[lo] == l;
}

/* The values of one document under an order mode whose order fr_tk_order wrote (and the
   driver shuffled, for ordinal); truth ascending. */
static void fr_tk_order_modes(fr_tk_work *w, int mode, const int32_t *truth, int64_t m,
                              const double *invp, double weight, double *out) {
    fr_tk_gains g;
    fr_tk_gains_zero(&g, w->nk);
    for (int64_t p = 0; p < w->K; p++) {
        int32_t l = w->order[p];
        if (fr_tk_is_relevant(truth, m, l)) fr_tk_gain_at(w, &g, p, invp ? invp[l] : 1.0);
    }
    fr_tk_best_weights(w, truth, m, invp);
    fr_tk_finish(w, &g, m, weight, out + mode * FR_TK_N_VALUES * w->nk);
}

#endif
