/* Connect Four 7 x 6 solver, after Pascal Pons (http://blog.gamesolver.org): negamax with
 * alpha-beta on bitboards, only non-losing moves searched, moves ordered by the threats they make
 * (then centre first), a transposition table of upper and lower bounds, and an iterative
 * null-window search over the score range. Loaded by tafel/bots/connect4.py through ctypes; the
 * Python solver there is the reference and the fallback when this library is not built.
 *
 * Scores (Pons' scale), from the side to move: a win scores 22 minus the winner's disc count at the
 * winning move, a draw 0, a loss the negative of the opponent's score.
 *
 * Bitboards: column c owns bits 7c .. 7c+5, bottom first, bit 7c+6 an empty sentinel. A position is
 * `cur` (discs of the side to move) and `mask` (all discs).
 *
 * The transposition table is one per process, shared by every caller: each entry is one 64-bit word
 * (key << 8 | value) written and read atomically, so concurrent callers (ctypes drops the GIL) can
 * only see whole entries, and any whole entry is a true bound for its key. */

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define W 7
#define H 6
#define SIZE (W * H)
#define MIN_SCORE (-(SIZE) / 2 + 3)
#define MAX_SCORE ((SIZE + 1) / 2 - 3)
#define TABLE_BITS 23 /* 2^23 entries of 8 bytes: 64 MiB */
#define TABLE_SIZE (1u << TABLE_BITS)
#define ABORTED (-1000)

typedef uint64_t u64;

static const u64 BOTTOM = 0x0040810204081ull; /* bit 7c for each column */
static const u64 BOARD = 0x0040810204081ull * 63ull;
static const int ORDER[W] = {3, 2, 4, 1, 5, 0, 6};

static u64 *table; /* allocated on first use; never freed (process lifetime) */

typedef struct {
    long long nodes;
    long long max_nodes;
    double deadline; /* CLOCK_MONOTONIC seconds; 0 = none */
    int aborted;
} Search;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static u64 column_mask(int c) { return 63ull << (7 * c); }

static u64 winning(u64 pos, u64 mask) {
    u64 r = (pos << 1) & (pos << 2) & (pos << 3); /* vertical */
    u64 p;
    /* horizontal */
    p = (pos << 7) & (pos << 14);
    r |= p & (pos << 21);
    r |= p & (pos >> 7);
    p = (pos >> 7) & (pos >> 14);
    r |= p & (pos << 7);
    r |= p & (pos >> 21);
    /* diagonal 1 */
    p = (pos << 6) & (pos << 12);
    r |= p & (pos << 18);
    r |= p & (pos >> 6);
    p = (pos >> 6) & (pos >> 12);
    r |= p & (pos << 6);
    r |= p & (pos >> 18);
    /* diagonal 2 */
    p = (pos << 8) & (pos << 16);
    r |= p & (pos << 24);
    r |= p & (pos >> 8);
    p = (pos >> 8) & (pos >> 16);
    r |= p & (pos << 8);
    r |= p & (pos >> 24);
    return r & (BOARD ^ mask);
}

static int ensure_table(void) {
    if (!__atomic_load_n(&table, __ATOMIC_ACQUIRE)) {
        u64 *t = calloc(TABLE_SIZE, sizeof(u64));
        if (!t) return 0;
        u64 *expected = NULL;
        if (!__atomic_compare_exchange_n(&table, &expected, t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            free(t); /* another thread won */
    }
    return 1;
}

/* the slot of a key: a multiplicative hash (entries hold the whole key, so any slot function is
 * exact; this one avoids a 64-bit division) */
static inline u64 slot(u64 key) { return (key * 0x9E3779B97F4A7C15ull) >> (64 - TABLE_BITS); }

static int table_get(u64 key) {
    u64 e = __atomic_load_n(&table[slot(key)], __ATOMIC_RELAXED);
    return (e >> 8) == key ? (int)(e & 255) : 0;
}

static void table_put(u64 key, int value) {
    __atomic_store_n(&table[slot(key)], (key << 8) | (u64)value, __ATOMIC_RELAXED);
}

/* Non-losing moves: forced blocks only, never under an opponent's threat; 0 when all lose. */
static u64 non_losing(u64 cur, u64 mask) {
    u64 possible = (mask + BOTTOM) & BOARD;
    u64 threats = winning(cur ^ mask, mask);
    u64 forced = possible & threats;
    if (forced) {
        if (forced & (forced - 1)) return 0;
        possible = forced;
    }
    return possible & ~(threats >> 1);
}

/* Exact score within (alpha, beta) for a position where the side to move cannot win at once. */
static int negamax(Search *s, u64 cur, u64 mask, int nb, int alpha, int beta) {
    if (++s->nodes >= s->max_nodes || (!(s->nodes & 4095) && s->deadline > 0 && now() > s->deadline)) {
        s->aborted = 1;
        return 0;
    }
    u64 next = non_losing(cur, mask);
    if (!next) return -(SIZE - nb) / 2;
    if (nb >= SIZE - 2) return 0;
    int lo = -(SIZE - 2 - nb) / 2;
    if (alpha < lo) {
        alpha = lo;
        if (alpha >= beta) return alpha;
    }
    int hi = (SIZE - 1 - nb) / 2;
    u64 key = cur + mask;
    int v = table_get(key);
    if (v) {
        if (v > MAX_SCORE - MIN_SCORE + 1) { /* a lower bound */
            lo = v + 2 * MIN_SCORE - MAX_SCORE - 2;
            if (alpha < lo) {
                alpha = lo;
                if (alpha >= beta) return alpha;
            }
        } else { /* an upper bound */
            hi = v + MIN_SCORE - 1;
        }
    }
    if (beta > hi) {
        beta = hi;
        if (alpha >= beta) return beta;
    }
    /* order: more threats made first, then centre first (insertion sort keeps that stable) */
    u64 moves[W];
    int scores[W];
    int n = 0;
    for (int i = W - 1; i >= 0; i--) {
        u64 mv = next & column_mask(ORDER[i]);
        if (!mv) continue;
        int sc = __builtin_popcountll(winning(cur | mv, mask | mv));
        int j = n++;
        for (; j > 0 && scores[j - 1] > sc; j--) {
            moves[j] = moves[j - 1];
            scores[j] = scores[j - 1];
        }
        moves[j] = mv;
        scores[j] = sc;
    }
    /* start fetching the children's table slots while the first child is searched */
    for (int i = 0; i < n; i++) __builtin_prefetch(&table[slot((cur ^ mask) + (mask | moves[i]))]);
    for (int i = n - 1; i >= 0; i--) {
        u64 mv = moves[i];
        int score = -negamax(s, cur ^ mask, mask | mv, nb + 1, -beta, -alpha);
        if (s->aborted) return 0;
        if (score >= beta) {
            table_put(key, score + MAX_SCORE - 2 * MIN_SCORE + 2);
            return score;
        }
        if (score > alpha) alpha = score;
    }
    table_put(key, alpha - MIN_SCORE + 1);
    return alpha;
}

static int can_win_next(u64 cur, u64 mask) { return (winning(cur, mask) & (mask + BOTTOM) & BOARD) != 0; }

/* The score of a position that is not over; with `weak`, only its sign (win 1, draw 0, loss -1). */
static int solve(Search *s, u64 cur, u64 mask, int nb, int weak) {
    if (can_win_next(cur, mask)) return weak ? 1 : (SIZE + 1 - nb) / 2;
    int lo = -(SIZE - nb) / 2, hi = (SIZE + 1 - nb) / 2;
    if (weak) {
        lo = -1;
        hi = 1;
    }
    while (lo < hi) {
        int med = lo + (hi - lo) / 2;
        if (med <= 0 && lo / 2 < med)
            med = lo / 2;
        else if (med >= 0 && hi / 2 > med)
            med = hi / 2;
        int r = negamax(s, cur, mask, nb, med, med + 1);
        if (s->aborted) return ABORTED;
        if (r <= med)
            hi = r;
        else
            lo = r;
    }
    if (weak) return lo > 0 ? 1 : (lo < 0 ? -1 : 0);
    return lo;
}

static void start(Search *s, long long max_nodes, double max_seconds) {
    s->nodes = 0;
    s->max_nodes = max_nodes > 0 ? max_nodes : (1ll << 62);
    s->deadline = max_seconds > 0 ? now() + max_seconds : 0;
    s->aborted = 0;
}

/* ---- the entry points (ctypes) ---- */

/* The score of a position that is not over, or ABORTED past the budget (0 = unbounded). */
int c4_solve(u64 cur, u64 mask, int nb, int weak, long long max_nodes, double max_seconds, long long *nodes) {
    Search s;
    if (!ensure_table()) return ABORTED;
    start(&s, max_nodes, max_seconds);
    int r = solve(&s, cur, mask, nb, weak);
    if (nodes) *nodes = s.nodes;
    return r;
}

/* A best column (0-based) for a position that is not over and its score (Pons' scale; the sign only
 * with `weak`), or -1 past the budget. Among best moves: most threats made, then the most central. */
int c4_best(u64 cur, u64 mask, int nb, int weak, long long max_nodes, double max_seconds, int *score,
            long long *nodes) {
    Search s;
    if (!ensure_table()) return -1;
    start(&s, max_nodes, max_seconds);
    u64 possible = (mask + BOTTOM) & BOARD;
    u64 wins = winning(cur, mask) & possible;
    int column = -1;
    if (wins) {
        for (int i = 0; i < W && column < 0; i++)
            if (wins & column_mask(ORDER[i])) column = ORDER[i];
        *score = weak ? 1 : (SIZE + 1 - nb) / 2;
        if (nodes) *nodes = 0;
        return column;
    }
    int value = solve(&s, cur, mask, nb, weak);
    if (s.aborted) {
        if (nodes) *nodes = s.nodes;
        return -1;
    }
    *score = value;
    u64 next = non_losing(cur, mask);
    if (!next) { /* lost whatever: block a threat if there is one, else the centre-most column */
        u64 threats = winning(cur ^ mask, mask) & possible;
        u64 pick = threats ? threats : possible;
        for (int i = 0; i < W && column < 0; i++)
            if (pick & column_mask(ORDER[i])) column = ORDER[i];
        if (nodes) *nodes = s.nodes;
        return column;
    }
    int cols[W], sc[W], n = 0;
    for (int i = 0; i < W; i++) {
        u64 mv = next & column_mask(ORDER[i]);
        if (!mv) continue;
        int t = __builtin_popcountll(winning(cur | mv, mask | mv));
        int j = n++;
        for (; j > 0 && sc[j - 1] < t; j--) {
            cols[j] = cols[j - 1];
            sc[j] = sc[j - 1];
        }
        cols[j] = ORDER[i];
        sc[j] = t;
    }
    for (int i = 0; i < n; i++) {
        u64 mv = next & column_mask(cols[i]);
        u64 child_cur = cur ^ mask, child_mask = mask | mv;
        int ok;
        if (nb + 1 >= SIZE) {
            ok = value == 0;
        } else if (weak) {
            /* value 1: the child must be lost for the opponent (< 0); value 0: not won (<= 0);
             * value -1: every non-losing move keeps the loss */
            if (value == 1)
                ok = negamax(&s, child_cur, child_mask, nb + 1, -1, 0) <= -1;
            else if (value == 0)
                ok = negamax(&s, child_cur, child_mask, nb + 1, 0, 1) <= 0;
            else
                ok = 1;
        } else {
            int target = -value;
            int r = negamax(&s, child_cur, child_mask, nb + 1, target, target + 1);
            ok = r <= target;
        }
        if (s.aborted) {
            if (nodes) *nodes = s.nodes;
            return -1;
        }
        if (ok) {
            column = cols[i];
            break;
        }
    }
    if (nodes) *nodes = s.nodes;
    return column;
}

/* Forget every table entry (benchmarks measure cold searches). */
void c4_clear(void) {
    if (!ensure_table()) return;
    for (u64 i = 0; i < TABLE_SIZE; i++) __atomic_store_n(&table[i], 0, __ATOMIC_RELAXED);
}
